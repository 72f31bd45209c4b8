// Struct types (SPEC 3): validation lives in check/, this is the size function
// and the leaf view used by check, pack, resolve and inspect.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::types {

// Size in bits of a concrete type given the root's dims (one per dims_param),
// resolving type_index against `catalogue` (ModelProto.struct_types). Checked
// uint64 arithmetic; errors for cycles, bad indices, overflow, unset counts.
Result<uint64_t> struct_type_bits(const google::protobuf::RepeatedPtrField<onnx::StructTypeProto>& catalogue,
                                  const onnx::StructTypeProto& type, std::span<const uint64_t> dims);

// Byte size of a type without dimension parameters; nullopt when it has any
// or is invalid (used by `inspect`).
std::optional<uint64_t> static_byte_size(const onnx::ModelProto& model, const onnx::StructTypeProto& type);

// The concrete type of a StructProto value: catalogue entry or inline type.
Result<const onnx::StructTypeProto*> value_type(const onnx::ModelProto& model, const onnx::StructProto& value);

// Bytes a StructProto value's payload must have (type resolved, dims applied).
Result<uint64_t> value_byte_size(const onnx::ModelProto& model, const onnx::StructProto& value);

}  // namespace onnx_prepack::types
