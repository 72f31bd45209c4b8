#include "digest/canonical_tensor.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "format/data_type.h"

namespace onnx_prepack::digest {
namespace {

static_assert(std::endian::native == std::endian::little,
              "typed fields are hashed in place as little-endian bytes");

using onnx::TensorProto;

// Bytes converted per piece when typed fields need narrowing.
constexpr size_t kPieceBytes = 64 * 1024;

enum class Field { kNone, kFloat, kInt32, kInt64, kDouble, kUint64, kString };

std::string_view field_name(Field f) {
  switch (f) {
    case Field::kNone:
      return "no field";
    case Field::kFloat:
      return "float_data";
    case Field::kInt32:
      return "int32_data";
    case Field::kInt64:
      return "int64_data";
    case Field::kDouble:
      return "double_data";
    case Field::kUint64:
      return "uint64_data";
    case Field::kString:
      return "string_data";
  }
  return "?";
}

// The typed field that holds `data_type` under the ONNX IR rules.
Field field_for(int32_t data_type) {
  switch (data_type) {
    case TensorProto::FLOAT:
    case TensorProto::COMPLEX64:
      return Field::kFloat;
    case TensorProto::DOUBLE:
    case TensorProto::COMPLEX128:
      return Field::kDouble;
    case TensorProto::INT64:
      return Field::kInt64;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return Field::kUint64;
    case TensorProto::STRING:
      return Field::kString;
    default:
      return Field::kInt32;  // every other known type, 2 to 16 bits
  }
}

int field_size(const TensorProto& t, Field f) {
  switch (f) {
    case Field::kNone:
      return 0;
    case Field::kFloat:
      return t.float_data_size();
    case Field::kInt32:
      return t.int32_data_size();
    case Field::kInt64:
      return t.int64_data_size();
    case Field::kDouble:
      return t.double_data_size();
    case Field::kUint64:
      return t.uint64_data_size();
    case Field::kString:
      return t.string_data_size();
  }
  return 0;
}

constexpr Field kTypedFields[] = {Field::kFloat,  Field::kInt32,  Field::kInt64,
                                  Field::kDouble, Field::kUint64, Field::kString};

std::string dims_string(const TensorProto& t) {
  std::string s = "[";
  for (int i = 0; i < t.dims_size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(t.dims(i));
  }
  return s + "]";
}

std::string shape_and_type(const TensorProto& t) {
  return "dims " + dims_string(t) + " of " + std::string(format::data_type_name(t.data_type()));
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

template <typename T>
std::span<const uint8_t> as_bytes(const google::protobuf::RepeatedField<T>& f) {
  return {reinterpret_cast<const uint8_t*>(f.data()), size_t(f.size()) * sizeof(T)};
}

// Valid range of one int32_data entry for `data_type`.
struct Range {
  int64_t lo;
  int64_t hi;
  int bytes;  // canonical bytes per entry
};

Range int32_range(int32_t data_type) {
  switch (data_type) {
    case TensorProto::INT32:
      return {INT32_MIN, INT32_MAX, 4};
    case TensorProto::INT16:
      return {INT16_MIN, INT16_MAX, 2};
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return {0, UINT16_MAX, 2};
    case TensorProto::INT8:
      return {INT8_MIN, INT8_MAX, 1};
    case TensorProto::BOOL:
      return {0, 1, 1};
    default:
      return {0, UINT8_MAX, 1};  // UINT8, float8, packed 4-bit and 2-bit bytes
  }
}

// Number of int32_data entries for `count` elements: one per element for 8 bits and more,
// one per packed byte for 4-bit and 2-bit types.
uint64_t int32_entries(int32_t data_type, uint64_t count) {
  const uint32_t bits = format::data_type_bits(data_type);
  if (bits >= 8) return count;
  const uint64_t per_byte = 8 / bits;
  return count / per_byte + (count % per_byte ? 1 : 0);
}

// Mask of the used bits of the final byte of `count` sub-byte elements (0xFF when full).
uint8_t last_byte_mask(int32_t data_type, uint64_t count) {
  const uint32_t bits = format::data_type_bits(data_type);
  if (bits >= 8) return 0xFF;
  const uint64_t used = (count * bits) % 8;
  return used == 0 ? 0xFF : uint8_t((1u << used) - 1);
}

// Streams raw bytes; the unused high bits of a sub-byte tensor's final byte become zero.
void write_raw(std::span<const uint8_t> bytes, uint8_t last_mask, ByteSink& sink) {
  if (bytes.empty() || last_mask == 0xFF) {
    sink.update(bytes);
    return;
  }
  sink.update(bytes.first(bytes.size() - 1));
  const uint8_t last = bytes.back() & last_mask;
  sink.update({&last, 1});
}

Status write_int32_field(const TensorProto& t, uint64_t count, std::string_view context,
                         ByteSink& sink) {
  const int32_t type = t.data_type();
  const Range r = int32_range(type);
  const auto& f = t.int32_data();
  if (r.bytes == 4) {
    sink.update(as_bytes(f));
    return ok_status();
  }
  const uint8_t last_mask = last_byte_mask(type, count);
  uint8_t piece[kPieceBytes];
  size_t used = 0;
  for (int i = 0; i < f.size(); ++i) {
    const int32_t v = f[i];
    if (v < r.lo || v > r.hi) {
      return invalid_argument(std::string(context) + ": int32_data[" + std::to_string(i) + "] is " +
                              std::to_string(v) + ", out of range for " +
                              std::string(format::data_type_name(type)) + " [" +
                              std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]");
    }
    uint32_t u = uint32_t(v);
    if (r.bytes == 1 && i + 1 == f.size()) u &= last_mask;
    for (int b = 0; b < r.bytes; ++b) piece[used++] = uint8_t(u >> (8 * b));
    if (used + 4 > sizeof piece) {
      sink.update({piece, used});
      used = 0;
    }
  }
  sink.update({piece, used});
  return ok_status();
}

Status write_uint32_from_uint64(const TensorProto& t, std::string_view context, ByteSink& sink) {
  const auto& f = t.uint64_data();
  uint8_t piece[kPieceBytes];
  size_t used = 0;
  for (int i = 0; i < f.size(); ++i) {
    if (f[i] > UINT32_MAX) {
      return invalid_argument(std::string(context) + ": uint64_data[" + std::to_string(i) +
                              "] is " + std::to_string(f[i]) + ", out of range for UINT32");
    }
    const uint32_t u = uint32_t(f[i]);
    std::memcpy(piece + used, &u, 4);
    used += 4;
    if (used + 4 > sizeof piece) {
      sink.update({piece, used});
      used = 0;
    }
  }
  sink.update({piece, used});
  return ok_status();
}

// Per element: u64le byte length, then the bytes. Small strings are batched.
uint64_t write_strings(const TensorProto& t, ByteSink& sink) {
  std::vector<uint8_t> piece;
  piece.reserve(kPieceBytes);
  uint64_t total = 0;
  for (const std::string& s : t.string_data()) {
    put_u64(piece, s.size());
    total += 8 + s.size();
    if (s.size() >= kPieceBytes) {
      sink.update(piece);
      piece.clear();
      sink.update({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
      continue;
    }
    piece.insert(piece.end(), s.begin(), s.end());
    if (piece.size() >= kPieceBytes) {
      sink.update(piece);
      piece.clear();
    }
  }
  sink.update(piece);
  return total;
}

}  // namespace

std::vector<uint8_t> canonical_header(int32_t data_type, std::span<const int64_t> dims) {
  std::vector<uint8_t> h(kCanonicalMagic.begin(), kCanonicalMagic.end());
  put_u32(h, uint32_t(data_type));
  put_u32(h, uint32_t(dims.size()));
  for (int64_t d : dims) put_u64(h, uint64_t(d));
  return h;
}

namespace {

// The element count of a tensor that can have a digest: a known element type,
// not segmented, non-negative dims whose product fits 64 bits.
Result<uint64_t> checked_element_count(const TensorProto& t, const std::string& ctx) {
  const int32_t type = t.data_type();
  if (!format::data_type_known(type)) {
    return invalid_argument(ctx + ": data_type " + std::to_string(type) +
                            " is not a known element type, so the tensor has no digest");
  }
  if (t.has_segment()) {
    return invalid_argument(ctx + ": segmented tensor (segment " +
                            std::to_string(t.segment().begin()) + ".." +
                            std::to_string(t.segment().end()) + ") has no digest");
  }
  for (int i = 0; i < t.dims_size(); ++i) {
    if (t.dims(i) < 0) {
      return invalid_argument(ctx + ": dims[" + std::to_string(i) + "] is " +
                              std::to_string(t.dims(i)) + ", dims must be non-negative");
    }
  }
  const auto count_opt = format::element_count(t.dims().data(), t.dims_size());
  if (!count_opt) {
    return invalid_argument(ctx + ": element count of dims " + dims_string(t) +
                            " overflows 64 bits");
  }
  return *count_opt;
}

// Exactly one storage form holds the data, typed data in its own field; returns that field.
Result<Field> checked_storage_form(const TensorProto& t, const std::string& ctx) {
  const int32_t type = t.data_type();
  // Exactly one storage form may hold the data, and typed data must sit in its own field.
  const format::Storage storage = format::storage_of(t);
  std::vector<Field> typed;
  for (Field f : kTypedFields) {
    if (field_size(t, f) > 0) typed.push_back(f);
  }
  const bool has_raw = t.has_raw_data() && !t.raw_data().empty();
  if (storage == format::Storage::kExternal && (has_raw || !typed.empty())) {
    return invalid_argument(ctx + ": tensor has external data and also " +
                            std::string(has_raw ? "raw_data" : field_name(typed[0])) +
                            ", expected one storage form");
  }
  if (storage == format::Storage::kRaw && !typed.empty()) {
    return invalid_argument(ctx + ": tensor has raw_data and also " +
                            std::string(field_name(typed[0])) + ", expected one storage form");
  }
  if (typed.size() > 1) {
    return invalid_argument(ctx + ": tensor has both " + std::string(field_name(typed[0])) +
                            " and " + std::string(field_name(typed[1])) +
                            ", expected one storage form");
  }
  const Field want = field_for(type);
  if (!typed.empty() && typed[0] != want) {
    return invalid_argument(ctx + ": " + std::string(format::data_type_name(type)) +
                            " data must be in " + std::string(field_name(want)) + ", found " +
                            std::string(field_name(typed[0])) + " (" +
                            std::to_string(field_size(t, typed[0])) + " values)");
  }
  return want;
}

// The typed-field content (`want`), after the header.
Result<uint64_t> write_typed(const TensorProto& t, uint64_t count, Field want,
                             uint64_t content_bytes, const std::vector<uint8_t>& header,
                             std::string_view context, ByteSink& sink) {
  const std::string ctx(context);
  const int32_t type = t.data_type();
  const bool complex = type == TensorProto::COMPLEX64 || type == TensorProto::COMPLEX128;
  const uint64_t entries =
      want == Field::kInt32 ? int32_entries(type, count) : count * (complex ? 2 : 1);
  const uint64_t have = uint64_t(field_size(t, want));
  if (have != entries) {
    return invalid_argument(ctx + ": " + std::string(field_name(want)) + " has " +
                            std::to_string(have) + " values, " + shape_and_type(t) + " need " +
                            std::to_string(entries));
  }
  sink.update(header);
  switch (want) {
    case Field::kFloat:
      sink.update(as_bytes(t.float_data()));
      break;
    case Field::kDouble:
      sink.update(as_bytes(t.double_data()));
      break;
    case Field::kInt64:
      sink.update(as_bytes(t.int64_data()));
      break;
    case Field::kUint64:
      if (type == TensorProto::UINT64) {
        sink.update(as_bytes(t.uint64_data()));
      } else {
        OP_RETURN_IF_ERROR(write_uint32_from_uint64(t, context, sink));
      }
      break;
    case Field::kInt32:
      OP_RETURN_IF_ERROR(write_int32_field(t, count, context, sink));
      break;
    case Field::kNone:
    case Field::kString:
      break;
  }
  return content_bytes;
}

}  // namespace

Result<uint64_t> write_canonical_tensor(const format::Model& model, const TensorProto& t,
                                        std::string_view context, ByteSink& sink) {
  const std::string ctx(context);
  OP_ASSIGN_OR_RETURN(const uint64_t count, checked_element_count(t, ctx));
  const int32_t type = t.data_type();
  const format::Storage storage = format::storage_of(t);
  OP_ASSIGN_OR_RETURN(const Field want, checked_storage_form(t, ctx));
  const std::vector<uint8_t> header =
      canonical_header(type, {t.dims().data(), size_t(t.dims_size())});

  if (type == TensorProto::STRING) {
    if (storage == format::Storage::kRaw || storage == format::Storage::kExternal) {
      return invalid_argument(
          ctx + ": STRING tensor keeps its elements in string_data, found " +
          std::string(storage == format::Storage::kRaw ? "raw_data" : "external data"));
    }
    if (uint64_t(t.string_data_size()) != count) {
      return invalid_argument(ctx + ": string_data has " + std::to_string(t.string_data_size()) +
                              " values, " + shape_and_type(t) + " need " + std::to_string(count));
    }
    sink.update(header);
    return write_strings(t, sink);
  }

  const auto bytes_opt = format::raw_byte_size(type, count);
  if (!bytes_opt) {
    return invalid_argument(ctx + ": byte size of " + shape_and_type(t) + " overflows 64 bits");
  }
  const uint64_t content_bytes = *bytes_opt;
  const uint8_t last_mask = last_byte_mask(type, count);

  switch (storage) {
    case format::Storage::kRaw:
    case format::Storage::kExternal: {
      OP_ASSIGN_OR_RETURN(format::TensorBytes tb, model.tensor_bytes(t, context));
      const char* what = storage == format::Storage::kRaw ? "raw_data" : "external data";
      if (tb.bytes.size() != content_bytes) {
        return invalid_argument(ctx + ": " + what + " is " + std::to_string(tb.bytes.size()) +
                                " bytes, " + shape_and_type(t) + " need " +
                                std::to_string(content_bytes));
      }
      sink.update(header);
      write_raw(tb.bytes, last_mask, sink);
      return content_bytes;
    }
    case format::Storage::kEmpty:
      if (count != 0) {
        return invalid_argument(ctx + ": tensor holds no data, " + shape_and_type(t) + " need " +
                                std::to_string(count) + " elements");
      }
      sink.update(header);
      return uint64_t(0);
    case format::Storage::kTyped:
      break;
  }

  return write_typed(t, count, want, content_bytes, header, context, sink);
}

}  // namespace onnx_prepack::digest
