#include "onnx_prepack/status.h"

namespace onnx_prepack {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid_argument";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kOutOfRange:
      return "out_of_range";
    case StatusCode::kDataLoss:
      return "data_loss";
    case StatusCode::kUnimplemented:
      return "unimplemented";
    case StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case StatusCode::kIoError:
      return "io_error";
    case StatusCode::kInternal:
      return "internal";
    case StatusCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case StatusCode::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

Status Status::with_context(std::string_view context) const& {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

Status Status::with_context(std::string_view context) && {
  if (ok()) return std::move(*this);
  message_.insert(0, std::string(context) + ": ");
  return std::move(*this);
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status invalid_argument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
Status not_found(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
Status out_of_range(std::string m) { return Status(StatusCode::kOutOfRange, std::move(m)); }
Status data_loss(std::string m) { return Status(StatusCode::kDataLoss, std::move(m)); }
Status unimplemented(std::string m) { return Status(StatusCode::kUnimplemented, std::move(m)); }
Status resource_exhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
Status io_error(std::string m) { return Status(StatusCode::kIoError, std::move(m)); }
Status internal_error(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
Status deadline_exceeded(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
Status cancelled(std::string m) { return Status(StatusCode::kCancelled, std::move(m)); }

}  // namespace onnx_prepack
