// AVX2 + FMA depthwise row kernel: 16 outputs in two ymm accumulators per step,
// then 8, then a scalar fused tail (f32_conv.h).
#include <immintrin.h>

#include <cmath>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void dw_row_avx2(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                 float bias) {
  const __m256 b = _mm256_set1_ps(bias);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 a0 = b, a1 = b;
    for (size_t t = 0; t < taps; ++t) {
      const __m256 wv = _mm256_set1_ps(w[t]);
      a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src[t] + i), a0);
      a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src[t] + i + 8), a1);
    }
    _mm256_storeu_ps(out + i, a0);
    _mm256_storeu_ps(out + i + 8, a1);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 a0 = b;
    for (size_t t = 0; t < taps; ++t) {
      a0 = _mm256_fmadd_ps(_mm256_set1_ps(w[t]), _mm256_loadu_ps(src[t] + i), a0);
    }
    _mm256_storeu_ps(out + i, a0);
  }
  for (; i < n; ++i) {
    float acc = bias;
    for (size_t t = 0; t < taps; ++t) acc = std::fma(w[t], src[t][i], acc);
    out[i] = acc;
  }
}

}  // namespace onnx_prepack::kernels
