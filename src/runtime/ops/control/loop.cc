// Loop: runs `body` (iteration number, condition, loop-carried values) ->
// (condition, loop-carried values, scan outputs) while the trip count and the
// condition allow. Loop-carried values keep their type and shape across
// iterations. Scan outputs stack one slice per iteration, so their length (the
// number of iterations) must be known at plan time: a constant trip count with
// a condition the body keeps true. A Loop whose inputs are all known is run at
// plan time (one body plan per distinct loop-carried shapes), which lifts both limits.
#include <cstring>

#include "runtime/ops/control/control_ops.h"
#include "runtime/run_limits.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"

namespace onnx_prepack::runtime {

namespace {

// Iterations run at plan time before giving up (a condition that never turns false).
constexpr int64_t kMaxPlanTimeIterations = int64_t(1) << 24;
// Plans of the body at plan time (one per distinct set of carried shapes, or
// one per iteration when the body needs its inputs' values): a carried shape
// that grows at every iteration would otherwise plan millions of times.
constexpr int64_t kMaxPlanTimePlans = int64_t(1) << 14;

// Of a checked shape: a value's, or a slice of one checked with its count.
size_t nbytes_of(int32_t dtype, const Shape& shape) {
  return size_t(shape_numel(shape)) * dtype_size(dtype);  // dims-lint: ok (checked shape)
}

HostTensor scalar_int64(int64_t v) {
  HostTensor t = HostTensor::allocate(kInt64, {});
  *static_cast<int64_t*>(t.mutable_data()) = v;
  return t;
}

HostTensor scalar_bool(bool v) {
  HostTensor t = HostTensor::allocate(kBool, {});
  *static_cast<uint8_t*>(t.mutable_data()) = v ? 1 : 0;
  return t;
}

struct LoopShape {
  int carried = 0;  // N
  int scans = 0;    // K
};

// Every input known: iterate now, so loop-carried shapes may change and the
// trip count may depend on the condition.
Status run_at_plan_time(BuildContext& ctx, const onnx::GraphProto& body, LoopShape ls,
                        std::optional<int64_t> trips, bool cond) {
  std::vector<HostTensor> carried;
  for (int i = 0; i < ls.carried; ++i) {
    const Tensor& v = *ctx.input_value(2 + i);
    HostTensor t = HostTensor::allocate(v.dtype, v.shape);
    if (t.nbytes()) std::memcpy(t.mutable_data(), v.data, t.nbytes());
    carried.push_back(std::move(t));
  }
  std::vector<const void*> outer;
  for (int j = 0; j < ctx.implicit_input_count(); ++j)
    outer.push_back(ctx.implicit_input(j).value->data);
  std::vector<std::vector<HostTensor>> scans(size_t(ls.scans));
  int64_t it = 0;
  int64_t plans = 0;
  std::unique_ptr<Subgraph> reusable;
  std::vector<Shape> reusable_shapes;
  bool needs_pinning = false;
  auto plan_body = [&](bool pin) -> Result<std::unique_ptr<Subgraph>> {
    HostTensor iter = scalar_int64(it), c = scalar_bool(cond);
    std::vector<Tensor> views{iter.view(), c.view()};
    for (const auto& t : carried) views.push_back(t.view());
    std::vector<ValueDesc> formal;
    for (const Tensor& v : views) {
      ValueDesc d;
      d.dtype = v.dtype;
      d.shape = v.shape;
      formal.push_back(d);
    }
    if (pin) {
      for (size_t i = 0; i < formal.size(); ++i) formal[i].value = &views[i];
    }
    if (++plans > kMaxPlanTimePlans) {
      return ctx.error("the body was planned " + std::to_string(kMaxPlanTimePlans) +
                       " times at plan time (its loop-carried shapes change at every "
                       "iteration); refused rather than planned without end");
    }
    return Subgraph::plan(ctx, body, formal);
  };
  while ((!trips || it < *trips) && cond) {
    // The message is built only when the run stops (2^24 iterations may run here).
    auto at = [&] { return ctx.where() + " iteration " + std::to_string(it) + " (at plan time)"; };
    const RunLimits* limits = ctx.limits();
    if (limits != nullptr && limits->active() && limits->stop_now())
      return limits->stop_status(at());
    if (it >= kMaxPlanTimeIterations) {
      return ctx.error("more than " + std::to_string(kMaxPlanTimeIterations) +
                       " iterations at plan time");
    }
    HostTensor iter = scalar_int64(it), c = scalar_bool(cond);
    // One plan per distinct set of loop-carried shapes; a body that needs
    // its inputs' values to plan is planned per iteration with them pinned.
    std::vector<Shape> shapes_now;
    for (const auto& t : carried) shapes_now.push_back(t.shape());
    std::unique_ptr<Subgraph> pinned;
    if (!reusable || reusable_shapes != shapes_now) {
      reusable.reset();
      if (!needs_pinning) {
        auto r = plan_body(false);
        if (r.ok()) {
          reusable = std::move(*r);
          reusable_shapes = shapes_now;
        } else if (ctx.needed_unknown_value()) {
          needs_pinning = true;
        } else {
          return r.status();
        }
      }
      if (needs_pinning) {
        OP_ASSIGN_OR_RETURN(pinned, plan_body(true));
      }
    }
    const Subgraph* sub = pinned ? pinned.get() : reusable.get();
    const auto& outs = sub->outputs();
    std::vector<HostTensor> results;
    std::vector<void*> out_ptrs;
    for (const auto& o : outs) {
      // Carried values and gathered scan slices count against the memory budget.
      OP_ASSIGN_OR_RETURN(HostTensor t,
                          HostTensor::try_allocate(o.dtype, o.shape, ctx.where() + " body output"));
      results.push_back(std::move(t));
      out_ptrs.push_back(results.back().mutable_data());
    }
    std::vector<const void*> formal{iter.data(), c.data()};
    for (const auto& t : carried) formal.push_back(t.data());
    if (Status st = sub->run(formal, outer, out_ptrs, limits); !st.ok())
      return is_stop(st) ? st.with_context(at()) : st;
    if (results[0].dtype() != kBool || results[0].numel() != 1) {
      return ctx.error("body's condition output must be one bool");
    }
    cond = *results[0].as<uint8_t>() != 0;
    for (int i = 0; i < ls.carried; ++i) carried[size_t(i)] = std::move(results[size_t(1 + i)]);
    for (int k = 0; k < ls.scans; ++k) {
      HostTensor& s = results[size_t(1 + ls.carried + k)];
      if (!scans[size_t(k)].empty() && scans[size_t(k)][0].shape() != s.shape()) {
        return ctx.error("scan output " + std::to_string(k) + " changes shape from " +
                         shape_string(scans[size_t(k)][0].shape()) + " to " +
                         shape_string(s.shape()));
      }
      scans[size_t(k)].push_back(std::move(s));
    }
    ++it;
  }
  for (int i = 0; i < ls.carried && i < ctx.output_count(); ++i) {
    ctx.set_output_value(i, carried[size_t(i)]);
  }
  std::vector<Session::PlannedOutput> shapes;
  if (it == 0 && ls.scans > 0) {  // slice shapes from a plan of the body
    OP_ASSIGN_OR_RETURN(std::unique_ptr<Subgraph> sub, plan_body(false));
    shapes = sub->outputs();
  }
  for (int k = 0; k < ls.scans && ls.carried + k < ctx.output_count(); ++k) {
    const auto& slices = scans[size_t(k)];
    int32_t dtype = it == 0 ? shapes[size_t(1 + ls.carried + k)].dtype : slices[0].dtype();
    Shape slice = it == 0 ? shapes[size_t(1 + ls.carried + k)].shape : slices[0].shape();
    Shape shape = slice;
    shape.insert(shape.begin(), it);
    if (checked_numel(shape) < 0) return ctx.error("scan output size overflows");
    OP_ASSIGN_OR_RETURN(HostTensor out,
                        HostTensor::try_allocate(dtype, shape, ctx.where() + " scan output"));
    size_t bytes = nbytes_of(dtype, slice);
    for (int64_t t = 0; t < it; ++t) {
      if (bytes)
        std::memcpy(static_cast<uint8_t*>(out.mutable_data()) + size_t(t) * bytes,
                    slices[size_t(t)].data(), bytes);
    }
    ctx.set_output_value(ls.carried + k, std::move(out));
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_loop(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const onnx::GraphProto* body, graph_attr(ctx, "body"));
  LoopShape ls;
  ls.carried = ctx.input_count() - 2;
  if (ls.carried < 0) return ctx.error("needs inputs M and cond (either may be empty)");
  ls.scans = body->output_size() - 1 - ls.carried;
  if (body->input_size() != 2 + ls.carried || ls.scans < 0) {
    return ctx.error("body has " + std::to_string(body->input_size()) + " inputs and " +
                     std::to_string(body->output_size()) + " outputs for " +
                     std::to_string(ls.carried) + " loop-carried values");
  }
  if (ctx.output_count() > ls.carried + ls.scans) {
    return ctx.error("has more outputs than loop-carried values and scan outputs");
  }
  for (int i = 0; i < ls.carried; ++i) OP_RETURN_IF_ERROR(ctx.require_input(2 + i).status());
  // A loop-carried value keeps its type: the body's declared input type, when
  // it declares one, must be the initial value's (ONNX type inference and ORT
  // refuse a mismatch; found by tools/difffuzz).
  for (int i = 0; i < ls.carried; ++i) {
    const onnx::ValueInfoProto& formal = body->input(2 + i);
    if (!formal.type().has_tensor_type()) continue;
    const int32_t declared = formal.type().tensor_type().elem_type();
    if (declared != 0 && declared != ctx.input(2 + i).dtype) {
      return ctx.error("loop-carried input " + std::to_string(i) + " is " +
                       dtype_name(ctx.input(2 + i).dtype) + " but the body declares '" +
                       formal.name() + "' as " + dtype_name(declared));
    }
  }
  if (ctx.has_input(0) && (ctx.input(0).dtype != kInt64 || checked_numel(ctx.input(0).shape) != 1))
    return ctx.error("M must be one int64");
  if (ctx.has_input(1) && (ctx.input(1).dtype != kBool || checked_numel(ctx.input(1).shape) != 1))
    return ctx.error("cond must be one bool");
  const bool has_m = ctx.has_input(0), has_cond = ctx.has_input(1);
  std::optional<int64_t> trips;
  if (has_m && ctx.input_value(0)) trips = *ctx.input_value(0)->as<int64_t>();
  std::optional<bool> cond0;
  if (!has_cond) cond0 = true;
  if (has_cond && ctx.input_value(1)) cond0 = *ctx.input_value(1)->as<uint8_t>() != 0;

  bool all_known = (!has_m || trips) && cond0.has_value();
  for (int i = 0; i < ls.carried; ++i) all_known = all_known && ctx.input_value(2 + i);
  for (int j = 0; j < ctx.implicit_input_count(); ++j)
    all_known = all_known && ctx.implicit_input(j).value;
  if (all_known) {
    OP_RETURN_IF_ERROR(run_at_plan_time(ctx, *body, ls, trips, *cond0));
    return std::unique_ptr<Kernel>();
  }

  // Planned once: iteration number and loop-carried values vary; the
  // condition is pinned when the loop starts with a known one and the body
  // keeps it (a constant output equal to it).
  std::vector<ValueDesc> formal(size_t(2 + ls.carried));
  formal[0].dtype = kInt64;
  formal[1].dtype = kBool;
  for (int i = 0; i < ls.carried; ++i) {
    formal[size_t(2 + i)].dtype = ctx.input(2 + i).dtype;
    formal[size_t(2 + i)].shape = ctx.input(2 + i).shape;
  }
  HostTensor cond_pin = scalar_bool(cond0.value_or(true));
  Tensor cond_view = cond_pin.view();
  bool cond_static = false;
  std::unique_ptr<Subgraph> sub;
  if (cond0) {
    formal[1].value = &cond_view;
    OP_ASSIGN_OR_RETURN(sub, Subgraph::plan(ctx, *body, formal));
    const auto& c = sub->outputs()[0];
    cond_static = c.dtype == kBool && c.value && c.value->numel() == 1 &&
                  (*c.value->as<uint8_t>() != 0) == *cond0;
    if (!*cond0) cond_static = true;  // the body never runs
  }
  if (!cond_static) {
    formal[1].value = nullptr;
    OP_ASSIGN_OR_RETURN(sub, Subgraph::plan(ctx, *body, formal));
  }
  if (cond_static && *cond0 && !has_m) {
    return ctx.error("would never stop: no trip count, and the body keeps the condition true");
  }
  const auto& outs = sub->outputs();
  if (outs[0].dtype != kBool || checked_numel(outs[0].shape) != 1)
    return ctx.error("body's condition output must be one bool");
  for (int i = 0; i < ls.carried; ++i) {
    const auto& o = outs[size_t(1 + i)];
    const ValueDesc& in = ctx.input(2 + i);
    if (o.dtype != in.dtype || o.shape != in.shape) {
      return ctx.needs_value("loop-carried value " + std::to_string(i) + " ('" + in.name +
                             "') changes from " + dtype_name(in.dtype) + shape_string(in.shape) +
                             " to " + dtype_name(o.dtype) + shape_string(o.shape) +
                             " in one iteration: the loop's inputs must be known before running"
                             " (it then runs at plan time)");
    }
    if (i < ctx.output_count()) ctx.set_output(i, in.dtype, in.shape);
  }
  int64_t scan_len = 0;
  if (ls.scans > 0) {
    if (!(cond_static && (trips || !*cond0))) {
      return ctx.needs_value(
          "the number of iterations sets the scan outputs' length: the trip count "
          "and condition must be known before running");
    }
    scan_len = *cond0 ? std::max<int64_t>(0, *trips) : 0;
  }
  std::vector<size_t> slice_bytes;
  for (int k = 0; k < ls.scans; ++k) {
    const auto& o = outs[size_t(1 + ls.carried + k)];
    Shape shape = o.shape;
    shape.insert(shape.begin(), scan_len);
    if (checked_numel(shape) < 0) return ctx.error("scan output size overflows");
    if (ls.carried + k < ctx.output_count()) ctx.set_output(ls.carried + k, o.dtype, shape);
    slice_bytes.push_back(nbytes_of(o.dtype, o.shape));
  }
  std::vector<size_t> carried_bytes;
  for (int i = 0; i < ls.carried; ++i) {
    carried_bytes.push_back(nbytes_of(ctx.input(2 + i).dtype, ctx.input(2 + i).shape));
  }
  const int declared = ctx.input_count();
  const int n_out = ctx.output_count();
  const std::string where = ctx.where();
  std::shared_ptr<Subgraph> g(std::move(sub));
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    // Loop-carried values live in the node's outputs (or scratch for unnamed ones).
    std::vector<std::vector<uint8_t>> scratch(size_t(ls.carried));
    std::vector<void*> carried(size_t(ls.carried));
    for (int i = 0; i < ls.carried; ++i) {
      void* dst = i < n_out ? io.out[size_t(i)] : nullptr;
      if (dst == nullptr) {
        scratch[size_t(i)].resize(carried_bytes[size_t(i)]);
        dst = scratch[size_t(i)].data();
      }
      carried[size_t(i)] = dst;
      if (carried_bytes[size_t(i)])
        std::memcpy(dst, io.in[size_t(2 + i)], carried_bytes[size_t(i)]);
    }
    int64_t m = has_m ? *static_cast<const int64_t*>(io.in[0]) : 0;
    uint8_t cond = has_cond ? *static_cast<const uint8_t*>(io.in[1]) : 1;
    int64_t it = 0;
    std::vector<const void*> formal(size_t(2 + ls.carried));
    std::vector<void*> outs(size_t(1 + ls.carried + ls.scans), nullptr);
    auto outer = io.in.subspan(size_t(declared));
    while ((!has_m || it < m) && cond && (ls.scans == 0 || it < scan_len)) {
      formal[0] = &it;
      formal[1] = &cond;
      outs[0] = &cond;
      for (int i = 0; i < ls.carried; ++i) {
        formal[size_t(2 + i)] = carried[size_t(i)];
        outs[size_t(1 + i)] = carried[size_t(i)];
      }
      for (int k = 0; k < ls.scans; ++k) {
        void* base = ls.carried + k < n_out ? io.out[size_t(ls.carried + k)] : nullptr;
        outs[size_t(1 + ls.carried + k)] =
            base ? static_cast<uint8_t*>(base) + size_t(it) * slice_bytes[size_t(k)] : nullptr;
      }
      // Checked per iteration as well as per body node (a body whose nodes
      // all fold runs none); the message is built only when the run stops.
      auto at = [&] { return where + " iteration " + std::to_string(it); };
      if (io.limits != nullptr && io.limits->active() && io.limits->stop_now())
        return report_failure(io, io.limits->stop_status(at()));
      Status st = g->run(formal, outer, outs, io.limits);
      // A body node stopped: the message names this node and iteration too.
      if (is_stop(st)) st = st.with_context(at());
      if (!st.ok()) return report_failure(io, std::move(st));  // a failed body ends the loop
      ++it;
    }
  }));
}

}  // namespace onnx_prepack::runtime
