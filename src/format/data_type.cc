#include "format/data_type.h"

#include <array>

namespace onnx_prepack::format {
namespace {

struct TypeInfo {
  std::string_view name;
  uint32_t bits;
  bool is_float;
};

constexpr std::array<TypeInfo, kMaxDataType + 1> kTypes = {{
    {"UNDEFINED", 0, false},     {"FLOAT", 32, true},     {"UINT8", 8, false},
    {"INT8", 8, false},          {"UINT16", 16, false},   {"INT16", 16, false},
    {"INT32", 32, false},        {"INT64", 64, false},    {"STRING", 0, false},
    {"BOOL", 8, false},          {"FLOAT16", 16, true},   {"DOUBLE", 64, true},
    {"UINT32", 32, false},       {"UINT64", 64, false},   {"COMPLEX64", 64, true},
    {"COMPLEX128", 128, true},   {"BFLOAT16", 16, true},  {"FLOAT8E4M3FN", 8, true},
    {"FLOAT8E4M3FNUZ", 8, true}, {"FLOAT8E5M2", 8, true}, {"FLOAT8E5M2FNUZ", 8, true},
    {"UINT4", 4, false},         {"INT4", 4, false},      {"FLOAT4E2M1", 4, true},
    {"FLOAT8E8M0", 8, true},     {"UINT2", 2, false},     {"INT2", 2, false},
}};

}  // namespace

std::string_view data_type_name(int32_t t) {
  if (t < 0 || t > kMaxDataType) return "?";
  return kTypes[size_t(t)].name;
}

std::optional<int32_t> data_type_from_name(std::string_view name) {
  for (size_t i = 0; i < kTypes.size(); ++i) {
    if (kTypes[i].name == name) return int32_t(i);
  }
  return std::nullopt;
}

uint32_t data_type_bits(int32_t t) {
  if (t < 0 || t > kMaxDataType) return 0;
  return kTypes[size_t(t)].bits;
}

bool data_type_known(int32_t t) { return t > 0 && t <= kMaxDataType; }

bool data_type_is_float(int32_t t) {
  return t >= 0 && t <= kMaxDataType && kTypes[size_t(t)].is_float;
}

std::optional<uint64_t> raw_byte_size(int32_t t, uint64_t count) {
  uint32_t bits = data_type_bits(t);
  if (bits == 0) return std::nullopt;
  if (count > UINT64_MAX / bits) return std::nullopt;
  uint64_t total_bits = count * bits;
  return total_bits / 8 + (total_bits % 8 ? 1 : 0);
}

std::optional<uint64_t> element_count(const int64_t* dims, int rank) {
  uint64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) return std::nullopt;
    uint64_t d = uint64_t(dims[i]);
    if (d != 0 && n > UINT64_MAX / d) return std::nullopt;
    n *= d;
  }
  return n;
}

}  // namespace onnx_prepack::format
