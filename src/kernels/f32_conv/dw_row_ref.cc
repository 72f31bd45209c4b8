// Portable twin of the depthwise row kernels (f32_conv.h).
#include <cmath>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void dw_row_ref(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                float bias) {
  for (size_t i = 0; i < n; ++i) {
    float acc = bias;
    for (size_t t = 0; t < taps; ++t) acc = std::fma(w[t], src[t][i], acc);
    out[i] = acc;
  }
}

}  // namespace onnx_prepack::kernels
