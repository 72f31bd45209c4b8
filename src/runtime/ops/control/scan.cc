// Scan (opset 9 and later; Scan 8's batch dimension is refused): runs `body`
// once per slice of the scan inputs along their axes, threading N state
// values through, and stacks the body's K scan outputs along their axes.
// Directions reverse the slice order per input and per output.
#include <cstring>

#include "runtime/ops/control/control_ops.h"
#include "runtime/run_limits.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"

namespace onnx_prepack::runtime {

namespace {

// A tensor viewed as [outer, len, inner bytes] around its scan axis.
struct AxisView {
  int64_t outer = 1, len = 0;
  size_t inner = 0;  // bytes per (outer, step) run
  size_t slice_bytes() const { return size_t(outer) * inner; }
  // Copies step t between the full tensor and a contiguous slice.
  void gather(const void* full, int64_t t, void* slice) const {
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(static_cast<uint8_t*>(slice) + size_t(o) * inner,
                  static_cast<const uint8_t*>(full) + (size_t(o * len + t)) * inner, inner);
    }
  }
  void scatter(const void* slice, int64_t t, void* full) const {
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(static_cast<uint8_t*>(full) + (size_t(o * len + t)) * inner,
                  static_cast<const uint8_t*>(slice) + size_t(o) * inner, inner);
    }
  }
};

AxisView axis_view(int32_t dtype, const Shape& shape, int64_t axis) {
  AxisView v;
  v.inner = dtype_size(dtype);
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis) v.outer *= shape[size_t(d)];
    if (d == axis) v.len = shape[size_t(d)];
    if (d > axis) v.inner *= size_t(shape[size_t(d)]);
  }
  return v;
}

std::vector<int64_t> ints_or(const BuildContext& ctx, const char* name, size_t n) {
  auto v = ctx.attr_ints(name);
  if (!v) return std::vector<int64_t>(n, 0);
  return *v;
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_scan(BuildContext& ctx) {
  if (ctx.opset() < 9) {
    return ctx.error("Scan before opset 9 (with a batch dimension) is not supported");
  }
  OP_ASSIGN_OR_RETURN(const onnx::GraphProto* body, graph_attr(ctx, "body"));
  const int m = int(ctx.attr_int("num_scan_inputs", -1));
  const int n = ctx.input_count() - m;
  if (m < 1 || n < 0) return ctx.error("num_scan_inputs must be in [1, number of inputs]");
  const int k = body->output_size() - n;
  if (body->input_size() != n + m || k < 0 || ctx.output_count() != n + k) {
    return ctx.error("body has " + std::to_string(body->input_size()) + " inputs and " +
                     std::to_string(body->output_size()) + " outputs for " + std::to_string(n) +
                     " states, " + std::to_string(m) + " scan inputs and " +
                     std::to_string(ctx.output_count()) + " node outputs");
  }
  auto in_dirs = ints_or(ctx, "scan_input_directions", size_t(m));
  auto in_axes = ints_or(ctx, "scan_input_axes", size_t(m));
  auto out_dirs = ints_or(ctx, "scan_output_directions", size_t(k));
  auto out_axes = ints_or(ctx, "scan_output_axes", size_t(k));
  if (int(in_dirs.size()) != m || int(in_axes.size()) != m || int(out_dirs.size()) != k ||
      int(out_axes.size()) != k) {
    return ctx.error("scan direction and axis lists must have one entry per scan input/output");
  }
  for (const auto* dirs : {&in_dirs, &out_dirs}) {
    for (int64_t d : *dirs) {
      if (d != 0 && d != 1)  // 0 forward, 1 reverse: nothing else is defined
        return ctx.error("scan directions must be 0 or 1, got " + std::to_string(d));
    }
  }
  std::vector<ValueDesc> formal(size_t(n + m));
  for (int i = 0; i < n + m; ++i) OP_RETURN_IF_ERROR(ctx.require_input(i).status());
  for (int i = 0; i < n; ++i) {
    formal[size_t(i)].dtype = ctx.input(i).dtype;
    formal[size_t(i)].shape = ctx.input(i).shape;
  }
  int64_t len = -1;
  std::vector<AxisView> in_views;
  for (int j = 0; j < m; ++j) {
    const ValueDesc& in = ctx.input(n + j);
    OP_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(in_axes[size_t(j)], int64_t(in.shape.size()), ctx));
    AxisView v = axis_view(in.dtype, in.shape, axis);
    if (len >= 0 && v.len != len) {
      return ctx.error("scan inputs have different lengths (" + std::to_string(len) + " and " +
                       std::to_string(v.len) + ")");
    }
    len = v.len;
    in_views.push_back(v);
    Shape slice = in.shape;
    slice.erase(slice.begin() + axis);
    formal[size_t(n + j)].dtype = in.dtype;
    formal[size_t(n + j)].shape = slice;
  }
  OP_ASSIGN_OR_RETURN(std::unique_ptr<Subgraph> sub, Subgraph::plan(ctx, *body, formal));
  const auto& outs = sub->outputs();
  std::vector<size_t> state_bytes;
  for (int i = 0; i < n; ++i) {
    const ValueDesc& in = ctx.input(i);
    const auto& o = outs[size_t(i)];
    if (o.dtype != in.dtype || o.shape != in.shape) {
      return ctx.error("state " + std::to_string(i) + " ('" + in.name + "') changes from " +
                       dtype_name(in.dtype) + shape_string(in.shape) + " to " +
                       dtype_name(o.dtype) + shape_string(o.shape) + " in one iteration");
    }
    ctx.set_output(i, in.dtype, in.shape);
    state_bytes.push_back(size_t(shape_numel(in.shape)) * dtype_size(in.dtype));
  }
  std::vector<AxisView> out_views;
  for (int j = 0; j < k; ++j) {
    const auto& o = outs[size_t(n + j)];
    OP_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(out_axes[size_t(j)], int64_t(o.shape.size()) + 1, ctx));
    Shape shape = o.shape;
    shape.insert(shape.begin() + axis, len);
    if (checked_numel(shape) < 0) return ctx.error("scan output size overflows");
    ctx.set_output(n + j, o.dtype, shape);
    out_views.push_back(axis_view(o.dtype, shape, axis));
  }
  const int declared = ctx.input_count();
  const std::string where = ctx.where();
  std::shared_ptr<Subgraph> g(std::move(sub));
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    // States live in the node's outputs; slices that are not contiguous
    // (axis > 0) go through scratch.
    std::vector<std::vector<uint8_t>> scratch(size_t(n + m + k));
    std::vector<void*> states(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      void* dst = io.out[size_t(i)];
      if (dst == nullptr) {
        scratch[size_t(i)].resize(state_bytes[size_t(i)]);
        dst = scratch[size_t(i)].data();
      }
      states[size_t(i)] = dst;
      if (state_bytes[size_t(i)]) std::memcpy(dst, io.in[size_t(i)], state_bytes[size_t(i)]);
    }
    for (int j = 0; j < m; ++j) scratch[size_t(n + j)].resize(in_views[size_t(j)].slice_bytes());
    for (int j = 0; j < k; ++j)
      scratch[size_t(n + m + j)].resize(out_views[size_t(j)].slice_bytes());
    std::vector<const void*> formal(size_t(n + m));
    std::vector<void*> outs(size_t(n + k));
    auto outer = io.in.subspan(size_t(declared));
    for (int64_t t = 0; t < len; ++t) {
      for (int i = 0; i < n; ++i) formal[size_t(i)] = outs[size_t(i)] = states[size_t(i)];
      for (int j = 0; j < m; ++j) {
        const AxisView& v = in_views[size_t(j)];
        int64_t step = in_dirs[size_t(j)] ? len - 1 - t : t;
        void* slice = scratch[size_t(n + j)].data();
        v.gather(io.in[size_t(n + j)], step, slice);
        formal[size_t(n + j)] = slice;
      }
      for (int j = 0; j < k; ++j) outs[size_t(n + j)] = scratch[size_t(n + m + j)].data();
      // The message is built only when the run stops.
      auto at = [&] { return where + " iteration " + std::to_string(t); };
      if (io.limits != nullptr && io.limits->active() && io.limits->stop_now())
        return report_failure(io, io.limits->stop_status(at()));
      Status st = g->run(formal, outer, outs, io.limits);
      // A body node stopped: the message names this node and iteration too.
      if (is_stop(st)) st = st.with_context(at());
      if (!st.ok()) return report_failure(io, std::move(st));  // a failed body ends the scan
      for (int j = 0; j < k; ++j) {
        if (io.out[size_t(n + j)] == nullptr) continue;
        int64_t step = out_dirs[size_t(j)] ? len - 1 - t : t;
        out_views[size_t(j)].scatter(scratch[size_t(n + m + j)].data(), step,
                                     io.out[size_t(n + j)]);
      }
    }
  }));
}

}  // namespace onnx_prepack::runtime
