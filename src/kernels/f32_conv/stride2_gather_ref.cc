// Portable stride-2 gather of the Conv drivers' phase-split rows (f32_conv.h).
#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void stride2_gather_ref(float* dst, const float* src, size_t n) {
  for (size_t q = 0; q < n; ++q) dst[q] = src[2 * q];
}

}  // namespace onnx_prepack::kernels
