#include "types/constant.h"

#include <cstring>
#include <string>

#include "format/data_type.h"

namespace onnx_prepack::types {
namespace {

using onnx::TensorProto;

enum class Typed { kNone, kFloat, kDouble, kInt64, kUint64, kInt32 };

// Which typed field holds `data_type` and how many entries `n` elements need.
Typed typed_field(int32_t dt, uint64_t n, uint64_t* entries) {
  switch (dt) {
    case TensorProto::FLOAT:
      *entries = n;
      return Typed::kFloat;
    case TensorProto::COMPLEX64:
      *entries = n * 2;
      return Typed::kFloat;
    case TensorProto::DOUBLE:
      *entries = n;
      return Typed::kDouble;
    case TensorProto::COMPLEX128:
      *entries = n * 2;
      return Typed::kDouble;
    case TensorProto::INT64:
      *entries = n;
      return Typed::kInt64;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      *entries = n;
      return Typed::kUint64;
    case TensorProto::INT4:
    case TensorProto::UINT4:
    case TensorProto::FLOAT4E2M1:
      *entries = (n + 1) / 2;
      return Typed::kInt32;
    case TensorProto::INT2:
    case TensorProto::UINT2:
      *entries = (n + 3) / 4;
      return Typed::kInt32;
    default:
      *entries = n;
      return Typed::kInt32;
  }
}

uint64_t typed_count(const TensorProto& t, Typed k) {
  switch (k) {
    case Typed::kFloat:
      return uint64_t(t.float_data_size());
    case Typed::kDouble:
      return uint64_t(t.double_data_size());
    case Typed::kInt64:
      return uint64_t(t.int64_data_size());
    case Typed::kUint64:
      return uint64_t(t.uint64_data_size());
    case Typed::kInt32:
      return uint64_t(t.int32_data_size());
    case Typed::kNone:
      break;
  }
  return 0;
}

}  // namespace

Result<uint64_t> constant_byte_size(const TensorProto& t) {
  int32_t dt = t.data_type();
  uint32_t bits = format::data_type_bits(dt);
  if (bits == 0) {
    return invalid_argument("constant data_type " + std::to_string(dt) + " (" +
                            std::string(format::data_type_name(dt)) + ") has no fixed width");
  }
  if (t.data_location() == TensorProto::EXTERNAL || t.external_data_size() > 0) {
    return invalid_argument("constant uses external data; constants must be inline");
  }
  if (t.has_segment()) return invalid_argument("constant is segmented");
  auto n = format::element_count(t.dims().data(), t.dims_size());
  if (!n) return invalid_argument("constant has a negative dim or its element count overflows");
  auto bytes = format::raw_byte_size(dt, *n);
  if (!bytes) return invalid_argument("constant byte size overflows");
  if (t.has_raw_data()) {
    if (t.raw_data().size() != *bytes) {
      return invalid_argument("constant raw_data is " + std::to_string(t.raw_data().size()) +
                              " bytes, " + std::to_string(*n) + " " +
                              std::string(format::data_type_name(dt)) + " elements need " +
                              std::to_string(*bytes));
    }
    return *bytes;
  }
  uint64_t entries = 0;
  Typed k = typed_field(dt, *n, &entries);
  uint64_t have = typed_count(t, k);
  if (have != entries) {
    return invalid_argument("constant holds " + std::to_string(have) + " typed entries, " +
                            std::to_string(*n) + " " + std::string(format::data_type_name(dt)) +
                            " elements need " + std::to_string(entries));
  }
  return *bytes;
}

Result<std::vector<uint8_t>> constant_bytes(const TensorProto& t) {
  OP_ASSIGN_OR_RETURN(uint64_t size, constant_byte_size(t));
  std::vector<uint8_t> out(size_t(size), 0);
  if (t.has_raw_data()) {
    if (size) std::memcpy(out.data(), t.raw_data().data(), size);
    return out;
  }
  int32_t dt = t.data_type();
  uint64_t entries = 0;
  Typed k = typed_field(dt, 0, &entries);
  auto put = [&](size_t at, uint64_t v, size_t nbytes) {
    for (size_t b = 0; b < nbytes; ++b) out[at + b] = uint8_t(v >> (8 * b));
  };
  switch (k) {
    case Typed::kFloat:
      for (int i = 0; i < t.float_data_size(); ++i) {
        float v = t.float_data(i);
        std::memcpy(&out[size_t(i) * 4], &v, 4);
      }
      break;
    case Typed::kDouble:
      for (int i = 0; i < t.double_data_size(); ++i) {
        double v = t.double_data(i);
        std::memcpy(&out[size_t(i) * 8], &v, 8);
      }
      break;
    case Typed::kInt64:
      for (int i = 0; i < t.int64_data_size(); ++i)
        put(size_t(i) * 8, uint64_t(t.int64_data(i)), 8);
      break;
    case Typed::kUint64: {
      size_t w = dt == TensorProto::UINT32 ? 4 : 8;
      for (int i = 0; i < t.uint64_data_size(); ++i) put(size_t(i) * w, t.uint64_data(i), w);
      break;
    }
    case Typed::kInt32: {
      uint32_t bits = format::data_type_bits(dt);
      size_t w = bits < 8 ? 1 : bits / 8;  // sub-byte: each entry is one packed byte
      for (int i = 0; i < t.int32_data_size(); ++i) {
        put(size_t(i) * w, uint64_t(uint32_t(t.int32_data(i))), w);
      }
      break;
    }
    case Typed::kNone:
      break;
  }
  return out;
}

}  // namespace onnx_prepack::types
