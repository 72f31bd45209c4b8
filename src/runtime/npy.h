// NumPy .npy files (format versions 1.0-3.0, little-endian, C order) for the
// element types the runtime holds; bfloat16 and float8 as ml_dtypes writes them
// ('<V2', '|V1').
#pragma once

#include <string>
#include <string_view>

#include "onnx_prepack/status.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

Result<HostTensor> read_npy(const std::string& path);
// Same, for an input of type `want`: a float16, bfloat16 or float8 input also
// takes the raw container of its bits (ml_dtypes' void descr, or uint16 /
// uint8). Any other type is returned as read (the session checks it).
Result<HostTensor> read_npy_as(const std::string& path, int32_t want);
Result<HostTensor> parse_npy(std::string_view bytes, const std::string& context);
std::string encode_npy(const Tensor& t);  // version 1.0 (2.0 when the header needs it)
Status write_npy(const std::string& path, const Tensor& t);

}  // namespace onnx_prepack::runtime
