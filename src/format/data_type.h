// ONNX element types: names, widths and the canonical byte size of a tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace onnx_prepack::format {

// Highest TensorProto.DataType this build knows (INT2 = 26).
inline constexpr int32_t kMaxDataType = 26;

// "FLOAT", "INT4", ...; "UNKNOWN(n)"-style names are returned as "?".
std::string_view data_type_name(int32_t data_type);
std::optional<int32_t> data_type_from_name(std::string_view name);

// Bits per element in raw_data; 0 for STRING, UNDEFINED and unknown types.
uint32_t data_type_bits(int32_t data_type);
bool data_type_known(int32_t data_type);
bool data_type_is_float(int32_t data_type);

// Bytes of raw_data for `count` elements (sub-byte types round up), or
// nullopt on overflow or for types without a fixed width.
std::optional<uint64_t> raw_byte_size(int32_t data_type, uint64_t count);

// Element count of dims in checked arithmetic; nullopt on a negative dim or overflow.
std::optional<uint64_t> element_count(const int64_t* dims, int rank);

}  // namespace onnx_prepack::format
