// Handle definitions and the error guard shared by the C API's sources. Every
// exported function runs its body through guard(): Status and exceptions
// become an op_status_code plus the thread-local message. Capi layer.
#pragma once

#include <atomic>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "check/check.h"
#include "format/model.h"
#include "onnx_prepack/c_api.h"
#include "onnx_prepack/engine.hpp"
#include "onnx_prepack/status.h"
#include "pack/pack_family.h"
#include "resolve/cache_store.h"
#include "resolve/resolver.h"
#include "runtime/activity.h"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"

namespace onnx_prepack::capi {

// One of this library's formats handed to a caller (op_builtin_formats,
// op_weight_formats): a pack family's format for one weight use. The C struct
// points to its strings and has it as user_data (capi_builtin_formats.cc).
struct BuiltinFormat {
  const pack::PackFamily* family = nullptr;
  pack::WeightUse use;  // data type and dims replaced by the source's at each check
  pack::FormatInfo format;
  onnx::StructTypeProto type;  // the format's struct type, for callers' own checks
  std::string name, version, architecture;
};

// `use` in `format` of `family`, its struct type from the family's plan over `content`.
Result<BuiltinFormat> make_builtin(const pack::PackFamily* family, const pack::WeightUse& use,
                                   const pack::FormatInfo& format, const pack::ContentFn& content);

// The formats of the family that packs a GEMM B of `layout` (0: [K, N] as
// MatMul B, 1: [N, K] as Gemm transB=1) and `source_type` at `level`, best
// first; records live as long as the process.
Result<std::span<const BuiltinFormat* const>> layout_builtin_formats(uint32_t layout,
                                                                     int32_t source_type,
                                                                     device::IsaLevel level);

}  // namespace onnx_prepack::capi

struct op_model {
  std::shared_ptr<onnx_prepack::format::Model> model;
  std::optional<onnx_prepack::check::CheckReport> report;  // last op_model_check
  std::deque<onnx_prepack::capi::BuiltinFormat> formats;   // op_weight_formats answers
};

// One op_resolve answer with the strings the C struct points to.
struct OpResolutionRecord {
  onnx_prepack::resolve::Resolution resolution;
  std::string reason;
  std::string detail;
};

struct op_resolver {
  std::shared_ptr<onnx_prepack::format::Model> model;
  std::unique_ptr<onnx_prepack::base::ThreadPool> pool;
  std::unique_ptr<onnx_prepack::resolve::CacheStore> store;
  std::unique_ptr<onnx_prepack::resolve::Resolver> resolver;
  std::deque<OpResolutionRecord> records;  // stable addresses until free
};

// A thin adapter of onnx_prepack::Engine (src/engine/): the engine plans and
// runs; the handle keeps what the C structs point to.
struct op_session {
  std::unique_ptr<onnx_prepack::Engine> engine;
  std::vector<onnx_prepack::runtime::HostTensor> outputs;
  std::vector<onnx_prepack::runtime::WeightDecision> decisions;  // copy for op_session_weight
  op_session_timings timings{};
};

// Atomic flag: op_run_options_set_terminate may race with a run reading it.
struct op_run_options {
  uint64_t deadline_ms = 0;
  std::atomic<bool> terminate{false};
};

namespace onnx_prepack::capi {

op_status_code to_code(StatusCode code);
// Records `status` as this thread's last error (cleared when ok).
op_status_code set_last(const Status& status);

template <typename F>
op_status_code guard(F&& body) noexcept {
  try {
    return set_last(body());
  } catch (const std::bad_alloc&) {
    // runtime/activity.h: the node being planned or run, and the budget.
    std::string what = "out of memory";
    try {
      what = runtime::out_of_memory_message();
    } catch (...) {
    }
    return set_last(resource_exhausted(what));
  } catch (const std::exception& e) {
    return set_last(internal_error(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return set_last(internal_error("unexpected exception"));
  }
}

inline Status check_threads(std::string_view function, uint32_t n_threads) {
  if (n_threads <= kMaxThreads) return ok_status();
  return invalid_argument(std::string(function) + ": n_threads " + std::to_string(n_threads) +
                          " is above the limit of " + std::to_string(kMaxThreads));
}

// Shared by the resolver and the session (capi_resolver.cc).
Result<std::unique_ptr<resolve::CacheStore>> open_cache(const char* dir, int32_t mode,
                                                        uint64_t max_bytes,
                                                        std::string_view function);
Result<resolve::VerifyPolicy> verify_policy(int32_t p, std::string_view function);
Result<resolve::CacheMode> cache_mode(int32_t m, std::string_view function);

// An error about the file at `path`, named in the message if it is not yet.
inline Status with_path(const Status& s, std::string_view path) {
  if (s.ok() || s.message().find(path) != std::string::npos) return s;
  return s.with_context(path);
}

inline Status null_argument(std::string_view function, std::string_view argument) {
  return invalid_argument(std::string(function) + ": " + std::string(argument) + " is null");
}

}  // namespace onnx_prepack::capi

// Returns an invalid_argument Status naming the function and argument when null.
#define OP_CAPI_REQUIRE(ptr, function)                                                \
  do {                                                                                \
    if ((ptr) == nullptr) return ::onnx_prepack::capi::null_argument(function, #ptr); \
  } while (0)
