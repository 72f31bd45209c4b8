// AVX-512F depthwise row kernel: 32 outputs in two zmm accumulators per step,
// every tap one broadcast and two loads; a masked tail (f32_conv.h).
#include <immintrin.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void dw_row_avx512(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                   float bias) {
  const __m512 b = _mm512_set1_ps(bias);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 a0 = b, a1 = b;
    for (size_t t = 0; t < taps; ++t) {
      const __m512 wv = _mm512_set1_ps(w[t]);
      a0 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src[t] + i), a0);
      a1 = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src[t] + i + 16), a1);
    }
    _mm512_storeu_ps(out + i, a0);
    _mm512_storeu_ps(out + i + 16, a1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1);
    __m512 a0 = b;
    for (size_t t = 0; t < taps; ++t) {
      a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_maskz_loadu_ps(m, src[t] + i), a0);
    }
    _mm512_mask_storeu_ps(out + i, m, a0);
  }
}

}  // namespace onnx_prepack::kernels
