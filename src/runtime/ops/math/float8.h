// The four 8-bit float formats of ONNX (opset 19): decoding to float and
// encoding with round to nearest even, saturating or not (Cast's `saturate`).
//   E4M3FN:   bias 7,  no infinity, NaN S.1111.111, max 448
//   E4M3FNUZ: bias 8,  no infinity, no -0, NaN 0x80, max 240
//   E5M2:     bias 15, IEEE-like infinities and NaNs, max 57344
//   E5M2FNUZ: bias 16, no infinity, no -0, NaN 0x80, max 57344
// Out of range: saturate gives +-max (infinities too, like ONNX Runtime);
// otherwise infinity where the format has one, else NaN.
#pragma once

#include <cstdint>

namespace onnx_prepack::runtime::math {

float float8_to_float(uint8_t v, int32_t dtype);
uint8_t float_to_float8(float f, int32_t dtype, bool saturate);

}  // namespace onnx_prepack::runtime::math
