// NumPy .npy files (format versions 1.0-3.0, little-endian, C order) for the
// element types the runtime holds.
#pragma once

#include <string>

#include "onnx_prepack/status.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

Result<HostTensor> read_npy(const std::string& path);
Result<HostTensor> parse_npy(const std::string& bytes, const std::string& context);
std::string encode_npy(const Tensor& t);  // version 1.0 (2.0 when the header needs it)
Status write_npy(const std::string& path, const Tensor& t);

}  // namespace onnx_prepack::runtime
