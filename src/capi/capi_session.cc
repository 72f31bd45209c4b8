// C API: our CPU runtime with weights through the resolver, as `onnx-prepack
// run` wires it (src/cli/cmd_run.cc), per-weight report and phase timings.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "capi/capi_internal.h"
#include "device/cpu_features.h"
#include "device/device_match.h"

using namespace onnx_prepack;  // NOLINT: a .cc file implementing the C API
using capi::guard;

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

Status create_session(std::shared_ptr<format::Model> model, const op_session_options* options,
                      double parse_ms, op_session** out, const char* fn) {
  const op_session_options o = options != nullptr ? *options : op_session_options_default();
  OP_RETURN_IF_ERROR(capi::check_threads(fn, o.n_threads));
  OP_RETURN_IF_ERROR(capi::verify_policy(o.verify, fn).status());
  if (o.plain_weights != 0 && o.plain_weights != 1) {
    return invalid_argument(std::string(fn) + ": plain_weights must be 0 or 1, got " +
                            std::to_string(o.plain_weights));
  }
  auto s = std::make_unique<op_session>();
  s->model = std::move(model);
  s->options = o;
  if (o.memo_dir != nullptr) s->memo_dir = o.memo_dir;
  if (o.cache_dir != nullptr) s->cache_dir = o.cache_dir;
  s->options.memo_dir = nullptr;  // the copies above are used from here on
  s->options.cache_dir = nullptr;
  if (o.n_threads > 0) {
    s->own_pool = std::make_unique<base::ThreadPool>(o.n_threads);
    s->pool = s->own_pool.get();
  } else {
    s->pool = &base::ThreadPool::shared();
  }
  if (!o.plain_weights) {
    OP_ASSIGN_OR_RETURN(s->store,
                        capi::open_cache(o.cache_dir, o.cache_mode, o.cache_max_bytes, fn));
  } else {
    OP_RETURN_IF_ERROR(capi::open_cache(nullptr, o.cache_mode, 0, fn).status());
  }
  runtime::SessionOptions so;
  so.pool = s->pool;
  OP_ASSIGN_OR_RETURN(s->info, runtime::Session::create(s->model, so));
  s->timings.parse = parse_ms;
  *out = s.release();
  return ok_status();
}

// Builds the resolver, the weight preparer and the session for this set of
// fed names (the resolver treats a fed initializer as overridden).
Status rebuild(op_session* s, const std::vector<std::string>& names) {
  s->session.reset();
  s->prepared.reset();
  s->resolver.reset();
  s->planned = false;
  runtime::SessionOptions so;
  so.pool = s->pool;
  if (!s->options.plain_weights) {
    resolve::ResolverOptions ro;
    OP_ASSIGN_OR_RETURN(ro.verify, capi::verify_policy(s->options.verify, "op_session_run"));
    ro.memo_dir = s->memo_dir;
    ro.cache = s->store.get();
    ro.pool = s->pool;
    for (const auto& n : names) ro.fed_inputs.insert(n);
    s->resolver =
        std::make_unique<resolve::Resolver>(*s->model, device::HostDescription::detect(), ro);
    s->prepared = std::make_unique<runtime::ResolvedWeights>(s->resolver.get(),
                                                             device::host_isa_level(), s->pool);
    so.weights = s->prepared.get();
  }
  OP_ASSIGN_OR_RETURN(s->session, runtime::Session::create(s->model, so));
  s->planned_names = names;
  return ok_status();
}

bool same_feeds(const std::map<std::string, runtime::Session::Feed>& a,
                const std::map<std::string, runtime::Session::Feed>& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.dtype != ib->second.dtype ||
        ia->second.shape != ib->second.shape) {
      return false;
    }
  }
  return true;
}

Status plan(op_session* s, std::map<std::string, runtime::Session::Feed> feeds,
            std::map<std::string, runtime::Tensor>& inputs) {
  const runtime::PreparedTotals before =
      s->prepared ? s->prepared->totals() : runtime::PreparedTotals();
  double verify_before = 0;
  size_t decisions_before = s->prepared ? s->prepared->decisions().size() : 0;
  const auto t0 = Clock::now();
  s->planned = false;
  s->pinned = false;
  Status st = s->session->plan(feeds);
  if (!st.ok() && st.message().find(runtime::kNeedsValue) != std::string::npos) {
    for (auto& [name, f] : feeds) f.value = &inputs[name];  // shape inputs fed as data
    s->pinned = true;
    st = s->session->plan(feeds);
  }
  if (!st.ok()) return st;
  const auto t1 = Clock::now();
  if (s->prepared) s->prepared->populate_hits(s->pool);
  const auto t2 = Clock::now();
  s->planned = true;
  s->planned_feeds = std::move(feeds);
  for (auto& [name, f] : s->planned_feeds) f.value = nullptr;  // pointers die with this run

  const runtime::PreparedTotals after =
      s->prepared ? s->prepared->totals() : runtime::PreparedTotals();
  double verify_ms = 0;
  if (s->prepared) {
    const auto& d = s->prepared->decisions();
    for (size_t i = decisions_before; i < d.size(); ++i) {
      if (d[i].bytes_hashed > 0) verify_ms += d[i].resolve_ms;
    }
  }
  (void)verify_before;
  const double resolve_ms = after.resolve_ms - before.resolve_ms;
  const double pack_ms = after.pack_ms - before.pack_ms;
  const double store_ms = after.store_ms - before.store_ms;
  const double init_ms = s->session->stats().init_ms;
  op_session_timings& t = s->timings;
  t.resolve = resolve_ms - verify_ms;
  t.verify = verify_ms;
  t.map = init_ms + ms_between(t1, t2);
  t.pack = pack_ms;
  t.store = store_ms;
  t.plan = ms_between(t0, t1) - resolve_ms - pack_ms - store_ms - init_ms;
  s->first_run_pending = true;
  return ok_status();
}

Status run_session(op_session* s, const op_input* in, size_t n) {
  constexpr const char* kFn = "op_session_run";
  if (n > 0 && in == nullptr) {
    return invalid_argument(std::string(kFn) + ": inputs is null with n_inputs " +
                            std::to_string(n));
  }
  s->outputs.clear();
  s->fed.clear();
  const auto& graph_inputs = s->info->inputs();
  for (size_t i = 0; i < n; ++i) {
    const op_input& x = in[i];
    const std::string where = std::string(kFn) + ": inputs[" + std::to_string(i) + "]";
    if (x.name == nullptr) return invalid_argument(where + ": name is null");
    const std::string name = x.name;
    const std::string what = where + " '" + name + "'";
    auto gi = std::find_if(graph_inputs.begin(), graph_inputs.end(),
                           [&](const runtime::GraphInput& g) { return g.name == name; });
    if (gi == graph_inputs.end()) return invalid_argument(what + ": not a graph input");
    if (s->fed.count(name) != 0) return invalid_argument(what + ": fed twice");
    const int32_t dtype = x.dtype == 0 ? OP_DTYPE_FLOAT : x.dtype;
    if (runtime::dtype_size(dtype) == 0) {
      return invalid_argument(what + ": element type " + std::to_string(dtype) +
                              " is not supported");
    }
    if (x.rank > 0 && x.dims == nullptr) return invalid_argument(what + ": dims is null");
    if (x.rank > 64)
      return invalid_argument(what + ": rank " + std::to_string(x.rank) + " is above 64");
    runtime::Shape shape(x.dims, x.dims + x.rank);
    const int64_t numel = runtime::checked_numel(shape);
    if (numel < 0) {
      return invalid_argument(what + ": shape " + runtime::shape_string(shape) +
                              " has a negative or overflowing size");
    }
    if (numel > 0 && x.data == nullptr) return invalid_argument(what + ": data is null");
    // Refused before the data is read: a caller's buffer is sized for its own shape.
    if (gi->dtype != runtime::kUndefined && gi->dtype != dtype) {
      return invalid_argument(what + ": type " + runtime::dtype_name(dtype) +
                              ", the graph declares " + runtime::dtype_name(gi->dtype));
    }
    if (gi->has_shape) {
      bool fits = gi->dims.size() == shape.size();
      for (size_t d = 0; fits && d < shape.size(); ++d) {
        fits = gi->dims[d] < 0 || gi->dims[d] == shape[d];
      }
      if (!fits) {
        return invalid_argument(what + ": shape " + runtime::shape_string(shape) +
                                ", the graph declares " + runtime::shape_string(gi->dims));
      }
    }
    auto t = runtime::HostTensor::allocate(dtype, shape);
    if (t.nbytes() > 0) std::memcpy(t.mutable_data(), x.data, t.nbytes());
    s->fed.emplace(name, std::move(t));
  }
  for (const auto& g : graph_inputs) {
    if (!g.has_initializer && s->fed.count(g.name) == 0) {
      return invalid_argument(std::string(kFn) + ": input '" + g.name +
                              "' is not fed and has no initializer");
    }
  }
  std::vector<std::string> names;
  std::map<std::string, runtime::Session::Feed> feeds;
  std::map<std::string, runtime::Tensor> inputs;
  for (auto& [name, t] : s->fed) {
    names.push_back(name);
    feeds[name] = {t.dtype(), t.shape(), nullptr};
    inputs[name] = t.view();
  }
  if (!s->session || names != s->planned_names) OP_RETURN_IF_ERROR(rebuild(s, names));
  if (!s->planned || s->pinned || !same_feeds(feeds, s->planned_feeds)) {
    OP_RETURN_IF_ERROR(plan(s, feeds, inputs));
  }
  const auto t0 = Clock::now();
  OP_ASSIGN_OR_RETURN(s->outputs, s->session->run(inputs));
  const double run_ms = ms_between(t0, Clock::now());
  s->timings.last_run = run_ms;
  if (s->first_run_pending) {
    s->timings.first_run = run_ms;
    s->first_run_pending = false;
  }
  if (s->prepared) {
    s->decisions = s->prepared->decisions();
    const runtime::PreparedTotals tot = s->prepared->totals();
    s->timings.hits = tot.hits;
    s->timings.misses = tot.misses;
    s->timings.stored = tot.stored;
    s->timings.bytes_mapped = tot.bytes_mapped;
    s->timings.bytes_hashed = tot.bytes_hashed;
    s->timings.bytes_packed = tot.bytes_packed;
  }
  return ok_status();
}

Status check_index(std::string_view fn, size_t index, size_t size, std::string_view what) {
  if (index < size) return ok_status();
  return out_of_range(std::string(fn) + ": index " + std::to_string(index) + " is past the " +
                      std::to_string(size) + " " + std::string(what));
}

}  // namespace

extern "C" {

op_session_options op_session_options_default(void) {
  op_session_options o;
  std::memset(&o, 0, sizeof(o));
  o.verify = OP_VERIFY_FULL;
  o.cache_mode = OP_CACHE_READ_WRITE;
  o.cache_max_bytes = uint64_t(4) << 30;
  return o;
}

op_status_code op_session_create(const char* model_path, const op_session_options* options,
                                 op_session** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_create";
    OP_CAPI_REQUIRE(out, kFn);
    *out = nullptr;
    OP_CAPI_REQUIRE(model_path, kFn);
    const auto t0 = Clock::now();
    auto loaded = format::Model::load(model_path);
    if (!loaded.ok()) return capi::with_path(loaded.status(), model_path);
    const double parse_ms = ms_between(t0, Clock::now());
    return create_session(std::shared_ptr<format::Model>(std::move(*loaded)), options, parse_ms,
                          out, kFn);
  });
}

op_status_code op_session_create_from_model(op_model* model, const op_session_options* options,
                                            op_session** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_create_from_model";
    OP_CAPI_REQUIRE(out, kFn);
    *out = nullptr;
    OP_CAPI_REQUIRE(model, kFn);
    return create_session(model->model, options, 0.0, out, kFn);
  });
}

void op_session_free(op_session* session) {
  if (session == nullptr) return;
  // Users before what they use: session, preparer, resolver, then the store.
  session->outputs.clear();
  session->session.reset();
  session->prepared.reset();
  session->resolver.reset();
  delete session;
}

op_status_code op_session_input_count(const op_session* session, size_t* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(session, "op_session_input_count");
    OP_CAPI_REQUIRE(out, "op_session_input_count");
    *out = session->info->inputs().size();
    return ok_status();
  });
}

op_status_code op_session_input_info(const op_session* session, size_t index, op_value_info* out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_input_info";
    OP_CAPI_REQUIRE(session, kFn);
    OP_CAPI_REQUIRE(out, kFn);
    const auto& ins = session->info->inputs();
    OP_RETURN_IF_ERROR(check_index(kFn, index, ins.size(), "inputs"));
    const runtime::GraphInput& g = ins[index];
    *out = op_value_info{g.name.c_str(),      g.dtype,
                         g.dims.data(),       g.dims.size(),
                         g.has_shape ? 1 : 0, g.has_initializer ? 1 : 0};
    return ok_status();
  });
}

op_status_code op_session_output_count(const op_session* session, size_t* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(session, "op_session_output_count");
    OP_CAPI_REQUIRE(out, "op_session_output_count");
    *out = session->info->output_names().size();
    return ok_status();
  });
}

op_status_code op_session_output_name(const op_session* session, size_t index, const char** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_output_name";
    OP_CAPI_REQUIRE(session, kFn);
    OP_CAPI_REQUIRE(out, kFn);
    const auto& names = session->info->output_names();
    OP_RETURN_IF_ERROR(check_index(kFn, index, names.size(), "outputs"));
    *out = names[index].c_str();
    return ok_status();
  });
}

op_status_code op_session_run(op_session* session, const op_input* inputs, size_t n_inputs) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(session, "op_session_run");
    return run_session(session, inputs, n_inputs);
  });
}

op_status_code op_session_output(const op_session* session, size_t index, op_tensor_view* out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_output";
    OP_CAPI_REQUIRE(session, kFn);
    OP_CAPI_REQUIRE(out, kFn);
    if (session->outputs.empty()) {
      return invalid_argument(std::string(kFn) + ": no outputs (op_session_run has not succeeded)");
    }
    OP_RETURN_IF_ERROR(check_index(kFn, index, session->outputs.size(), "outputs"));
    const runtime::HostTensor& t = session->outputs[index];
    *out = op_tensor_view{session->info->output_names()[index].c_str(),
                          t.dtype(),
                          t.shape().data(),
                          t.shape().size(),
                          t.data(),
                          uint64_t(t.nbytes())};
    return ok_status();
  });
}

op_status_code op_session_output_copy(const op_session* session, size_t index, void* dst,
                                      uint64_t capacity) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_output_copy";
    OP_CAPI_REQUIRE(session, kFn);
    if (session->outputs.empty()) {
      return invalid_argument(std::string(kFn) + ": no outputs (op_session_run has not succeeded)");
    }
    OP_RETURN_IF_ERROR(check_index(kFn, index, session->outputs.size(), "outputs"));
    const runtime::HostTensor& t = session->outputs[index];
    if (capacity < t.nbytes()) {
      return out_of_range(std::string(kFn) + ": output '" + session->info->output_names()[index] +
                          "' is " + std::to_string(t.nbytes()) + " bytes, buffer holds " +
                          std::to_string(capacity));
    }
    if (t.nbytes() > 0) {
      OP_CAPI_REQUIRE(dst, kFn);
      std::memcpy(dst, t.data(), t.nbytes());
    }
    return ok_status();
  });
}

op_status_code op_session_weight_count(const op_session* session, size_t* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(session, "op_session_weight_count");
    OP_CAPI_REQUIRE(out, "op_session_weight_count");
    *out = session->decisions.size();
    return ok_status();
  });
}

op_status_code op_session_weight(const op_session* session, size_t index, op_weight_report* out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_weight";
    OP_CAPI_REQUIRE(session, kFn);
    OP_CAPI_REQUIRE(out, kFn);
    OP_RETURN_IF_ERROR(check_index(kFn, index, session->decisions.size(), "weights"));
    const runtime::WeightDecision& d = session->decisions[index];
    op_weight_report r;
    std::memset(&r, 0, sizeof(r));
    r.name = d.name.c_str();
    r.consumer = d.consumer.c_str();
    r.decision = d.decision.c_str();
    r.reason = d.reason.c_str();
    r.detail = d.detail.c_str();
    r.format = d.format.c_str();
    r.verified = d.verified ? 1 : 0;
    r.stored = d.stored ? 1 : 0;
    r.store_error = d.store_error.c_str();
    r.bytes_mapped = d.bytes_mapped;
    r.bytes_hashed = d.bytes_hashed;
    r.bytes_packed = d.bytes_packed;
    *out = r;
    return ok_status();
  });
}

op_status_code op_session_get_timings(const op_session* session, op_session_timings* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(session, "op_session_get_timings");
    OP_CAPI_REQUIRE(out, "op_session_get_timings");
    *out = session->timings;
    return ok_status();
  });
}

}  // extern "C"
