// C API: status, version, model, check and digest (include/onnx_prepack/c_api.h).
#include <cstring>
#include <string>

#include "capi/capi_internal.h"
#include "device/device_match.h"
#include "digest/digest.h"
#include "engine/engine_options.h"

namespace onnx_prepack::capi {
namespace {

thread_local std::string t_message;
thread_local op_status_code t_code = OP_STATUS_OK;

}  // namespace

op_status_code to_code(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return OP_STATUS_OK;
    case StatusCode::kInvalidArgument:
      return OP_STATUS_INVALID_ARGUMENT;
    case StatusCode::kNotFound:
      return OP_STATUS_NOT_FOUND;
    case StatusCode::kOutOfRange:
      return OP_STATUS_OUT_OF_RANGE;
    case StatusCode::kDataLoss:
      return OP_STATUS_DATA_LOSS;
    case StatusCode::kUnimplemented:
      return OP_STATUS_UNIMPLEMENTED;
    case StatusCode::kResourceExhausted:
      return OP_STATUS_RESOURCE_EXHAUSTED;
    case StatusCode::kIoError:
      return OP_STATUS_IO_ERROR;
    case StatusCode::kInternal:
      return OP_STATUS_INTERNAL;
    case StatusCode::kDeadlineExceeded:
      return OP_STATUS_DEADLINE_EXCEEDED;
    case StatusCode::kCancelled:
      return OP_STATUS_CANCELLED;
  }
  return OP_STATUS_INTERNAL;
}

op_status_code set_last(const Status& status) {
  t_code = to_code(status.code());
  try {
    t_message = status.message();
  } catch (...) {
    t_message.clear();  // out of memory while keeping the message: the code still tells
  }
  return t_code;
}

}  // namespace onnx_prepack::capi

using namespace onnx_prepack;  // NOLINT: a .cc file implementing the C API
using capi::guard;

extern "C" {

const char* op_status_code_name(int32_t code) {
  switch (code) {
    case OP_STATUS_OK:
      return "ok";
    case OP_STATUS_INVALID_ARGUMENT:
      return "invalid_argument";
    case OP_STATUS_NOT_FOUND:
      return "not_found";
    case OP_STATUS_OUT_OF_RANGE:
      return "out_of_range";
    case OP_STATUS_DATA_LOSS:
      return "data_loss";
    case OP_STATUS_UNIMPLEMENTED:
      return "unimplemented";
    case OP_STATUS_RESOURCE_EXHAUSTED:
      return "resource_exhausted";
    case OP_STATUS_IO_ERROR:
      return "io_error";
    case OP_STATUS_INTERNAL:
      return "internal";
    case OP_STATUS_DEADLINE_EXCEEDED:
      return "deadline_exceeded";
    case OP_STATUS_CANCELLED:
      return "cancelled";
  }
  return "unknown";
}

const char* op_last_error_message(void) { return capi::t_message.c_str(); }
op_status_code op_last_error_code(void) { return capi::t_code; }

#define OP_STR2(x) #x
#define OP_STR(x) OP_STR2(x)

uint32_t op_version(void) {
  return (uint32_t(OP_VERSION_MAJOR) << 16) | (uint32_t(OP_VERSION_MINOR) << 8) |
         uint32_t(OP_VERSION_PATCH);
}
const char* op_version_string(void) {
  return OP_STR(OP_VERSION_MAJOR) "." OP_STR(OP_VERSION_MINOR) "." OP_STR(OP_VERSION_PATCH);
}
// Both are string literals, so data() is NUL-terminated.
const char* op_runtime_name(void) { return device::kRuntimeName.data(); }
const char* op_packing_abi_version(void) { return device::kPackingAbiVersion.data(); }

op_status_code op_model_open(const char* path, op_model** out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(out, "op_model_open");
    *out = nullptr;
    OP_CAPI_REQUIRE(path, "op_model_open");
    auto loaded = format::Model::load(path);
    if (!loaded.ok()) return capi::with_path(loaded.status(), path);
    auto handle = std::make_unique<op_model>();
    handle->model = std::shared_ptr<format::Model>(std::move(*loaded));
    *out = handle.release();
    return ok_status();
  });
}

void op_model_free(op_model* model) { delete model; }

op_status_code op_model_get_counts(const op_model* model, op_model_counts* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(model, "op_model_get_counts");
    OP_CAPI_REQUIRE(out, "op_model_get_counts");
    const onnx::ModelProto& p = model->model->proto();
    op_model_counts c{};
    c.initializers = uint64_t(p.graph().initializer_size());
    c.nodes = uint64_t(p.graph().node_size());
    c.inputs = uint64_t(p.graph().input_size());
    c.outputs = uint64_t(p.graph().output_size());
    c.compiled_tensors = uint64_t(p.compiled_tensors_size());
    c.struct_types = uint64_t(p.struct_types_size());
    c.devices = uint64_t(p.devices_size());
    c.ir_version = p.ir_version();
    for (const auto& o : p.opset_import()) {
      if (o.domain().empty() || o.domain() == "ai.onnx") c.opset = o.version();
    }
    *out = c;
    return ok_status();
  });
}

op_status_code op_model_initializer_name(const op_model* model, uint64_t index, const char** out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(model, "op_model_initializer_name");
    OP_CAPI_REQUIRE(out, "op_model_initializer_name");
    const auto& inits = model->model->proto().graph().initializer();
    if (index >= uint64_t(inits.size())) {
      return out_of_range("op_model_initializer_name: index " + std::to_string(index) +
                          " is past the " + std::to_string(inits.size()) + " initializers");
    }
    *out = inits[int(index)].name().c_str();
    return ok_status();
  });
}

op_status_code op_model_check(op_model* model, uint64_t* n_errors, uint64_t* n_warnings) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(model, "op_model_check");
    model->report.reset();
    model->report = check::check_model(*model->model);
    if (n_errors != nullptr) *n_errors = model->report->errors.size();
    if (n_warnings != nullptr) *n_warnings = model->report->warnings.size();
    return ok_status();
  });
}

op_status_code op_model_check_diagnostic(const op_model* model, int32_t kind, uint64_t index,
                                         op_diagnostic* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(model, "op_model_check_diagnostic");
    OP_CAPI_REQUIRE(out, "op_model_check_diagnostic");
    if (!model->report) {
      return invalid_argument("op_model_check_diagnostic: the model was not checked");
    }
    if (kind != OP_DIAGNOSTIC_ERROR && kind != OP_DIAGNOSTIC_WARNING) {
      return invalid_argument("op_model_check_diagnostic: kind " + std::to_string(int(kind)) +
                              " is not OP_DIAGNOSTIC_ERROR or OP_DIAGNOSTIC_WARNING");
    }
    const auto& list =
        kind == OP_DIAGNOSTIC_ERROR ? model->report->errors : model->report->warnings;
    if (index >= list.size()) {
      return out_of_range("op_model_check_diagnostic: index " + std::to_string(index) +
                          " is past the " + std::to_string(list.size()) +
                          (kind == OP_DIAGNOSTIC_ERROR ? " errors" : " warnings"));
    }
    const check::Diagnostic& d = list[size_t(index)];
    *out = op_diagnostic{d.rule.c_str(), d.path.c_str(), d.message.c_str()};
    return ok_status();
  });
}

op_status_code op_tensor_digest(const op_model* model, const char* initializer_name,
                                const char* algorithm, uint32_t n_threads, uint8_t out32[32]) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(model, "op_tensor_digest");
    OP_CAPI_REQUIRE(initializer_name, "op_tensor_digest");
    OP_CAPI_REQUIRE(algorithm, "op_tensor_digest");
    OP_CAPI_REQUIRE(out32, "op_tensor_digest");
    auto alg = digest::algorithm_from_name(algorithm);
    if (!alg) {
      return invalid_argument("op_tensor_digest: algorithm '" + std::string(algorithm) +
                              "' is not known, expected blake3 or sha256");
    }
    OP_RETURN_IF_ERROR(capi::check_threads("op_tensor_digest", n_threads));
    const format::Model& m = *model->model;
    const int count = m.count_initializers(initializer_name);
    if (count == 0) {
      return not_found("op_tensor_digest: no initializer named '" + std::string(initializer_name) +
                       "'");
    }
    if (count > 1) {
      return invalid_argument("op_tensor_digest: " + std::to_string(count) +
                              " initializers are named '" + std::string(initializer_name) + "'");
    }
    const int index = m.initializer_index(initializer_name);
    std::unique_ptr<base::ThreadPool> own_pool;
    digest::DigestOptions options{*alg, engine::pool_for(n_threads, own_pool)};
    OP_ASSIGN_OR_RETURN(
        digest::TensorDigest d,
        digest::digest_tensor(m, m.proto().graph().initializer(index),
                              format::tensor_context(index, initializer_name), options));
    std::memcpy(out32, d.digest.data(), d.digest.size());
    return ok_status();
  });
}

}  // extern "C"
