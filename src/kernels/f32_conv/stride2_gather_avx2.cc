// AVX2 stride-2 gather of the Conv drivers' phase-split rows (f32_conv.h): 8
// outputs a step from two loads, even lanes picked by vshufps and put in order
// by vpermpd. A copy, so every level writes the same bytes.
#include <immintrin.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void stride2_gather_avx2(float* dst, const float* src, size_t n) {
  size_t q = 0;
  // A step reads src[2q .. 2q + 16); the last element needed is src[2(n - 1)],
  // so a step runs only while 2q + 15 <= 2(n - 1), i.e. q + 9 <= n.
  for (; q + 9 <= n; q += 8) {
    const __m256 a = _mm256_loadu_ps(src + 2 * q);
    const __m256 b = _mm256_loadu_ps(src + 2 * q + 8);
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
    _mm256_storeu_ps(dst + q, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e),
                                                                     _MM_SHUFFLE(3, 1, 2, 0))));
  }
  for (; q < n; ++q) dst[q] = src[2 * q];
}

}  // namespace onnx_prepack::kernels
