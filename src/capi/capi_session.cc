// C API: our CPU runtime with weights through the resolver, per-weight report
// and phase timings; a thin adapter of onnx_prepack::Engine as `onnx-prepack
// run` is.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "capi/capi_internal.h"
#include "device/cpu_features.h"
#include "device/device_match.h"

using namespace onnx_prepack;  // NOLINT: a .cc file implementing the C API
using capi::guard;

namespace {

Status create_session(const op_session_options* options, op_session** out, const char* fn,
                      const std::function<Result<std::unique_ptr<Engine>>(EngineOptions)>& open) {
  const op_session_options o = options != nullptr ? *options : op_session_options_default();
  OP_RETURN_IF_ERROR(capi::check_threads(fn, o.n_threads));
  OP_ASSIGN_OR_RETURN(resolve::VerifyPolicy policy, capi::verify_policy(o.verify, fn));
  if (o.plain_weights != 0 && o.plain_weights != 1) {
    return invalid_argument(std::string(fn) + ": plain_weights must be 0 or 1, got " +
                            std::to_string(o.plain_weights));
  }
  if (o.qdq != OP_QDQ_EXACT && o.qdq != OP_QDQ_INTEGER) {
    return invalid_argument(std::string(fn) +
                            ": qdq must be OP_QDQ_EXACT (0) or OP_QDQ_INTEGER (1), got " +
                            std::to_string(o.qdq));
  }
  if (o.float16_float_chains != 0 && o.float16_float_chains != 1) {
    return invalid_argument(std::string(fn) + ": float16_float_chains must be 0 or 1, got " +
                            std::to_string(o.float16_float_chains));
  }
  OP_ASSIGN_OR_RETURN(resolve::CacheMode mode, capi::cache_mode(o.cache_mode, fn));
  if (o.cache_dir != nullptr && o.cache_dir[0] == '\0' && mode != resolve::CacheMode::kOff &&
      !o.plain_weights) {
    return invalid_argument(std::string(fn) + ": cache_dir is empty");
  }
  EngineOptions eo;
  eo.verify = policy;
  // NULL or OP_CACHE_OFF: no store (a folder named "off" is a folder here).
  if (o.cache_dir != nullptr && mode != resolve::CacheMode::kOff) eo.cache.dir = o.cache_dir;
  eo.cache.read_only = mode == resolve::CacheMode::kReadOnly;
  eo.cache.max_bytes = o.cache_max_bytes;
  if (o.memo_dir != nullptr) eo.memo_dir = o.memo_dir;
  eo.threads = o.n_threads;
  eo.weights = o.plain_weights ? WeightMode::kPlain : WeightMode::kPacked;
  eo.qdq = o.qdq == OP_QDQ_INTEGER ? QdqMode::kInteger : QdqMode::kExact;
  eo.float16_float_chains = o.float16_float_chains == 1;
  auto s = std::make_unique<op_session>();
  OP_ASSIGN_OR_RETURN(s->engine, open(std::move(eo)));
  s->timings.parse = s->engine->timings().parse;
  *out = s.release();
  return ok_status();
}

Status run_session(op_session* s, const op_input* in, size_t n, const RunOptions& run_options,
                   const char* kFn) {
  if (n > 0 && in == nullptr) {
    return invalid_argument(std::string(kFn) + ": inputs is null with n_inputs " +
                            std::to_string(n));
  }
  s->outputs.clear();
  std::map<std::string, runtime::Tensor> fed;
  for (size_t i = 0; i < n; ++i) {
    const op_input& x = in[i];
    const std::string where = std::string(kFn) + ": inputs[" + std::to_string(i) + "]";
    if (x.name == nullptr) return invalid_argument(where + ": name is null");
    const std::string name = x.name;
    const std::string what = where + " '" + name + "'";
    const runtime::GraphInput* gi = s->engine->find_input(name);
    if (gi == nullptr) return invalid_argument(what + ": not a graph input");
    if (fed.count(name) != 0) return invalid_argument(what + ": fed twice");
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
    // Read in place: the session copies fed values into its arena.
    fed.emplace(name, runtime::Tensor{dtype, std::move(shape), const_cast<void*>(x.data)});
  }
  for (const auto& g : s->engine->inputs()) {
    if (!g.has_initializer && fed.count(g.name) == 0) {
      return invalid_argument(std::string(kFn) + ": input '" + g.name +
                              "' is not fed and has no initializer");
    }
  }
  OP_ASSIGN_OR_RETURN(s->outputs, s->engine->run(fed, run_options));
  const EngineTimings t = s->engine->timings();
  op_session_timings& out = s->timings;
  out.parse = t.parse;
  out.resolve = t.resolve;
  out.verify = t.verify;
  out.map = t.map;
  out.pack = t.pack;
  out.store = t.store;
  out.plan = t.plan;
  out.first_run = t.first_run;
  out.last_run = t.last_run;
  s->decisions = s->engine->weights();
  const runtime::PreparedTotals tot = s->engine->weight_totals();
  out.hits = tot.hits;
  out.misses = tot.misses;
  out.stored = tot.stored;
  out.bytes_mapped = tot.bytes_mapped;
  out.bytes_hashed = tot.bytes_hashed;
  out.bytes_packed = tot.bytes_packed;
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
  o.cache_max_bytes = kDefaultCacheMaxBytes;
  return o;
}

op_status_code op_session_create(const char* model_path, const op_session_options* options,
                                 op_session** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_create";
    OP_CAPI_REQUIRE(out, kFn);
    *out = nullptr;
    OP_CAPI_REQUIRE(model_path, kFn);
    const std::string path = model_path;
    return create_session(options, out, kFn, [&](EngineOptions eo) {
      auto e = Engine::open(path, std::move(eo));
      if (!e.ok()) return Result<std::unique_ptr<Engine>>(capi::with_path(e.status(), path));
      return e;
    });
  });
}

op_status_code op_session_create_from_model(op_model* model, const op_session_options* options,
                                            op_session** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_create_from_model";
    OP_CAPI_REQUIRE(out, kFn);
    *out = nullptr;
    OP_CAPI_REQUIRE(model, kFn);
    return create_session(options, out, kFn, [&](EngineOptions eo) {
      return Engine::open_model(model->model, std::move(eo));
    });
  });
}

void op_session_free(op_session* session) {
  if (session == nullptr) return;
  delete session;
}

op_status_code op_session_input_count(const op_session* session, size_t* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(session, "op_session_input_count");
    OP_CAPI_REQUIRE(out, "op_session_input_count");
    *out = session->engine->inputs().size();
    return ok_status();
  });
}

op_status_code op_session_input_info(const op_session* session, size_t index, op_value_info* out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_input_info";
    OP_CAPI_REQUIRE(session, kFn);
    OP_CAPI_REQUIRE(out, kFn);
    const auto& ins = session->engine->inputs();
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
    *out = session->engine->output_names().size();
    return ok_status();
  });
}

op_status_code op_session_output_name(const op_session* session, size_t index, const char** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_output_name";
    OP_CAPI_REQUIRE(session, kFn);
    OP_CAPI_REQUIRE(out, kFn);
    const auto& names = session->engine->output_names();
    OP_RETURN_IF_ERROR(check_index(kFn, index, names.size(), "outputs"));
    *out = names[index].c_str();
    return ok_status();
  });
}

op_status_code op_session_run(op_session* session, const op_input* inputs, size_t n_inputs) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(session, "op_session_run");
    return run_session(session, inputs, n_inputs, RunOptions{}, "op_session_run");
  });
}

op_status_code op_run_options_create(op_run_options** out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(out, "op_run_options_create");
    *out = new op_run_options();
    return ok_status();
  });
}

void op_run_options_free(op_run_options* options) { delete options; }

op_status_code op_run_options_set_deadline_ms(op_run_options* options, uint64_t deadline_ms) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(options, "op_run_options_set_deadline_ms");
    options->deadline_ms = deadline_ms;
    return ok_status();
  });
}

op_status_code op_run_options_set_terminate(op_run_options* options, int32_t terminate) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_run_options_set_terminate";
    OP_CAPI_REQUIRE(options, kFn);
    if (terminate != 0 && terminate != 1) {
      return invalid_argument(std::string(kFn) + ": terminate must be 0 or 1, got " +
                              std::to_string(terminate));
    }
    options->terminate.store(terminate == 1, std::memory_order_relaxed);
    return ok_status();
  });
}

op_status_code op_session_run_with_options(op_session* session, const op_input* inputs,
                                           size_t n_inputs, const op_run_options* run_options) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_session_run_with_options";
    OP_CAPI_REQUIRE(session, kFn);
    RunOptions ro;
    if (run_options != nullptr) {
      ro.deadline_ms = run_options->deadline_ms;
      ro.terminate = &run_options->terminate;
    }
    return run_session(session, inputs, n_inputs, ro, kFn);
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
    *out = op_tensor_view{session->engine->output_names()[index].c_str(),
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
      return out_of_range(std::string(kFn) + ": output '" + session->engine->output_names()[index] +
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
