// Status and Result<T>: the one error type of the library. A message names the
// object and the rule it broke, lower-case, with the numbers:
//   "compiled_tensors[2]: payload is 4096 bytes, type 'x' needs 8192".
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace onnx_prepack {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller's request is malformed
  kNotFound,           // a named object does not exist
  kOutOfRange,         // an index or offset past an end
  kDataLoss,           // corrupt or truncated input
  kUnimplemented,      // valid but not supported by this build
  kResourceExhausted,  // a configured limit was hit
  kIoError,            // the operating system refused
  kInternal,           // a bug of ours
  kDeadlineExceeded,   // a run passed its deadline (RunOptions::deadline_ms)
  kCancelled,          // a run was stopped by its terminate flag (RunOptions::terminate)
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with where the error was met: "initializers[3]: ...".
  Status with_context(std::string_view context) const&;
  Status with_context(std::string_view context) &&;

  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status ok_status() { return Status(); }
Status invalid_argument(std::string message);
Status not_found(std::string message);
Status out_of_range(std::string message);
Status data_loss(std::string message);
Status unimplemented(std::string message);
Status resource_exhausted(std::string message);
Status io_error(std::string message);
Status internal_error(std::string message);
Status deadline_exceeded(std::string message);
Status cancelled(std::string message);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace onnx_prepack

#define OP_CONCAT_INNER(a, b) a##b
#define OP_CONCAT(a, b) OP_CONCAT_INNER(a, b)

#define OP_RETURN_IF_ERROR(expr)                \
  do {                                          \
    ::onnx_prepack::Status op_status_ = (expr); \
    if (!op_status_.ok()) return op_status_;    \
  } while (0)

#define OP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#define OP_ASSIGN_OR_RETURN(lhs, expr) \
  OP_ASSIGN_OR_RETURN_IMPL(OP_CONCAT(op_result_, __LINE__), lhs, expr)
