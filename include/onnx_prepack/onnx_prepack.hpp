// C++ RAII wrapper over the C API (c_api.h): handles in unique_ptrs with the
// matching free function, methods that return op_status_code and never throw.
// Header-only; link libonnx_prepack.so (or the onnx_prepack_capi archive).
//
//   onnx_prepack::api::Model model;
//   if (onnx_prepack::api::Model::open("m.onnx", &model) != OP_STATUS_OK)
//     fprintf(stderr, "%s\n", onnx_prepack::api::last_error());
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onnx_prepack/c_api.h"

namespace onnx_prepack::api {

inline const char* last_error() noexcept { return op_last_error_message(); }
inline const char* code_name(op_status_code code) noexcept { return op_status_code_name(code); }

struct ModelDeleter {
  void operator()(op_model* p) const noexcept { op_model_free(p); }
};
struct ResolverDeleter {
  void operator()(op_resolver* p) const noexcept { op_resolver_free(p); }
};
struct SessionDeleter {
  void operator()(op_session* p) const noexcept { op_session_free(p); }
};
struct RunOptionsDeleter {
  void operator()(op_run_options* p) const noexcept { op_run_options_free(p); }
};
using ModelPtr = std::unique_ptr<op_model, ModelDeleter>;
using ResolverPtr = std::unique_ptr<op_resolver, ResolverDeleter>;
using SessionPtr = std::unique_ptr<op_session, SessionDeleter>;
using RunOptionsPtr = std::unique_ptr<op_run_options, RunOptionsDeleter>;

class Model {
 public:
  static op_status_code open(const char* path, Model* out) noexcept {
    if (out == nullptr) return op_model_open(path, nullptr);  // reports the null argument
    op_model* m = nullptr;
    op_status_code c = op_model_open(path, &m);
    out->p_.reset(m);
    return c;
  }
  op_model* get() const noexcept { return p_.get(); }
  explicit operator bool() const noexcept { return p_ != nullptr; }

  op_status_code counts(op_model_counts* out) const noexcept {
    return op_model_get_counts(p_.get(), out);
  }
  op_status_code check(uint64_t* n_errors, uint64_t* n_warnings) noexcept {
    return op_model_check(p_.get(), n_errors, n_warnings);
  }
  op_status_code diagnostic(int32_t kind, uint64_t index, op_diagnostic* out) const noexcept {
    return op_model_check_diagnostic(p_.get(), kind, index, out);
  }
  op_status_code digest(const char* initializer, const char* algorithm, uint32_t n_threads,
                        uint8_t out32[32]) const noexcept {
    return op_tensor_digest(p_.get(), initializer, algorithm, n_threads, out32);
  }

 private:
  ModelPtr p_;
};

class Resolver {
 public:
  static op_status_code create(const Model& model, const op_resolver_options* options,
                               Resolver* out) noexcept {
    if (out == nullptr) return op_resolver_create(model.get(), options, nullptr);
    op_resolver* r = nullptr;
    op_status_code c = op_resolver_create(model.get(), options, &r);
    out->p_.reset(r);
    return c;
  }
  op_resolver* get() const noexcept { return p_.get(); }
  explicit operator bool() const noexcept { return p_ != nullptr; }

  op_status_code resolve(const char* source, const op_acceptable_format* formats, size_t n,
                         op_resolution* out) noexcept {
    return op_resolve(p_.get(), source, formats, n, out);
  }
  op_status_code store(const char* source, const op_acceptable_format& format, const uint64_t* dims,
                       size_t n_dims, const void* payload, uint64_t payload_size) noexcept {
    return op_resolver_store(p_.get(), source, &format, nullptr, 0, dims, n_dims, payload,
                             payload_size);
  }
  op_status_code totals(op_resolver_totals* out) const noexcept {
    return op_resolver_get_totals(p_.get(), out);
  }

 private:
  ResolverPtr p_;
};

// A deadline and a terminate flag for runs (op_run_options); terminate() may
// be called from another thread while a run uses them.
class RunOptions {
 public:
  static op_status_code create(RunOptions* out) noexcept {
    if (out == nullptr) return op_run_options_create(nullptr);
    op_run_options* r = nullptr;
    op_status_code c = op_run_options_create(&r);
    out->p_.reset(r);
    return c;
  }
  op_run_options* get() const noexcept { return p_.get(); }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  op_status_code set_deadline_ms(uint64_t ms) noexcept {
    return op_run_options_set_deadline_ms(p_.get(), ms);
  }
  op_status_code terminate(bool on = true) noexcept {
    return op_run_options_set_terminate(p_.get(), on ? 1 : 0);
  }

 private:
  RunOptionsPtr p_;
};

class Session {
 public:
  static op_status_code create(const char* path, const op_session_options* options,
                               Session* out) noexcept {
    if (out == nullptr) return op_session_create(path, options, nullptr);
    op_session* s = nullptr;
    op_status_code c = op_session_create(path, options, &s);
    out->p_.reset(s);
    return c;
  }
  op_session* get() const noexcept { return p_.get(); }
  explicit operator bool() const noexcept { return p_ != nullptr; }

  op_status_code run(const op_input* inputs, size_t n) noexcept {
    return op_session_run(p_.get(), inputs, n);
  }
  op_status_code run(const op_input* inputs, size_t n, const RunOptions& options) noexcept {
    return op_session_run_with_options(p_.get(), inputs, n, options.get());
  }
  op_status_code output(size_t index, op_tensor_view* out) const noexcept {
    return op_session_output(p_.get(), index, out);
  }
  op_status_code weight(size_t index, op_weight_report* out) const noexcept {
    return op_session_weight(p_.get(), index, out);
  }
  op_status_code weight_count(size_t* out) const noexcept {
    return op_session_weight_count(p_.get(), out);
  }
  op_status_code timings(op_session_timings* out) const noexcept {
    return op_session_get_timings(p_.get(), out);
  }

 private:
  SessionPtr p_;
};

}  // namespace onnx_prepack::api
