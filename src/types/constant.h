// Constants of struct types (format.md §3: `Field.constant`): inline tensors that
// take no bits of the payload and are shared by every instance.
#pragma once

#include <cstdint>
#include <vector>

#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::types {

// Validates a constant without allocating: fixed-width element type, no
// negative dims, no external data or segment, data matching dims (raw_data
// or typed fields). Returns its canonical (raw_data form) byte size.
Result<uint64_t> constant_byte_size(const onnx::TensorProto& t);

// The constant's canonical bytes (raw_data form; typed fields converted).
Result<std::vector<uint8_t>> constant_bytes(const onnx::TensorProto& t);

}  // namespace onnx_prepack::types
