// C API: the compile pipeline (onnx_prepack::compile_model, src/engine/compile.cc).
#include <cstring>
#include <string>

#include "capi/capi_internal.h"

using namespace onnx_prepack;  // NOLINT: a .cc file implementing the C API
using capi::guard;

extern "C" {

op_compile_options op_compile_options_default(void) {
  op_compile_options o;
  std::memset(&o, 0, sizeof(o));
  o.lift_constants = 1;  // as the CLI and the engine: Constant-node weights are packed
  return o;
}

op_status_code op_compile(const char* src_path, const char* dst_path,
                          const op_compile_options* options, op_compile_summary* summary) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_compile";
    OP_CAPI_REQUIRE(src_path, kFn);
    OP_CAPI_REQUIRE(dst_path, kFn);
    const op_compile_options o = options != nullptr ? *options : op_compile_options_default();
    OP_RETURN_IF_ERROR(capi::check_threads(kFn, o.n_threads));
    if (o.n_targets > 0 && o.targets == nullptr) {
      return invalid_argument(std::string(kFn) + ": targets is null with n_targets " +
                              std::to_string(o.n_targets));
    }
    CompileOptions co;
    co.targets.clear();
    for (size_t i = 0; i < o.n_targets; ++i) {
      if (o.targets[i] == nullptr) {
        return invalid_argument(std::string(kFn) + ": targets[" + std::to_string(i) + "] is null");
      }
      co.targets.push_back(o.targets[i]);
    }
    if (co.targets.empty()) co.targets.push_back("host");
    if (o.digest != nullptr) co.digest = o.digest;
    if (o.qdq != OP_QDQ_EXACT && o.qdq != OP_QDQ_INTEGER) {
      return invalid_argument(std::string(kFn) +
                              ": qdq must be OP_QDQ_EXACT (0) or OP_QDQ_INTEGER (1), got " +
                              std::to_string(o.qdq));
    }
    co.qdq = o.qdq == OP_QDQ_INTEGER ? QdqMode::kInteger : QdqMode::kExact;
    co.lift_constants = o.lift_constants != 0;
    co.threads = o.n_threads;
    co.memo = o.no_memo == 0;
    if (o.memo_dir != nullptr) co.memo_dir = o.memo_dir;
    if (o.progress != nullptr) {
      co.progress = [&o](size_t done, size_t total, const std::string& what) {
        o.progress(done, total, what.c_str(), o.progress_user);
      };
    }
    auto result = compile_model(src_path, dst_path, co);
    if (!result.ok()) return capi::with_path(result.status(), src_path);
    if (summary != nullptr) {
      *summary = op_compile_summary{result->entries, result->weights, result->payload_bytes,
                                    result->seconds, uint64_t(result->targets.size())};
    }
    return ok_status();
  });
}

}  // extern "C"
