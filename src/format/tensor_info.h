// Small descriptive helpers over TensorProto / ValueInfoProto used by the
// inspect output and error messages.
#pragma once

#include <cstdint>
#include <string>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::format {

// Bytes the tensor's content occupies in canonical (raw_data) form; for
// external tensors the declared length; for STRING the sum of the strings.
uint64_t tensor_byte_size(const onnx::TensorProto& t);

std::string dims_string(const onnx::TensorProto& t);  // "[64, 128]"
std::string type_string(const onnx::TypeProto& t);    // "tensor(FLOAT)[1, 'N', 1024]"

}  // namespace onnx_prepack::format
