// AVX2 variant of vec_quant.h: 8 lanes, the tail through the portable twin
// (the same operation sequence as vec_quant_ref.cc, so the same bits).
#include <immintrin.h>

#include <cstring>

#include "kernels/vec_math/vec_quant.h"

namespace onnx_prepack::kernels::vec {
namespace {

// nearbyint: the current rounding mode (nearest even by default), no exceptions.
constexpr int kRound = _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC;

// 8 quantized values as int32 lanes in [0, 255].
__m256i quantize8(__m256 x, __m256 s, __m256 zp) {
  __m256 q = _mm256_round_ps(_mm256_div_ps(x, s), kRound);
  q = _mm256_add_ps(q, zp);
  q = _mm256_min_ps(_mm256_max_ps(q, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
  return _mm256_cvttps_epi32(q);
}

}  // namespace

void f32_minmax_avx2(const float* x, size_t n, float* lo, float* hi) {
  __m256 l[4], h[4];
  for (int k = 0; k < 4; ++k) {
    l[k] = _mm256_set1_ps(*lo);
    h[k] = _mm256_set1_ps(*hi);
  }
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * k);
      l[k] = _mm256_min_ps(v, l[k]);
      h[k] = _mm256_max_ps(v, h[k]);
    }
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    l[0] = _mm256_min_ps(v, l[0]);
    h[0] = _mm256_max_ps(v, h[0]);
  }
  const __m256 l01 = _mm256_min_ps(l[0], l[1]), l23 = _mm256_min_ps(l[2], l[3]);
  const __m256 h01 = _mm256_max_ps(h[0], h[1]), h23 = _mm256_max_ps(h[2], h[3]);
  alignas(32) float lv[8], hv[8];
  _mm256_store_ps(lv, _mm256_min_ps(l01, l23));
  _mm256_store_ps(hv, _mm256_max_ps(h01, h23));
  float a = lv[0], b = hv[0];
  for (int k = 1; k < 8; ++k) {
    a = lv[k] < a ? lv[k] : a;
    b = hv[k] > b ? hv[k] : b;
  }
  *lo = a;
  *hi = b;
  if (i < n) f32_minmax_ref(x + i, n - i, lo, hi);
}

void f32_quantize_u8_avx2(const float* x, uint8_t* y, size_t n, float scale, float zp) {
  if (scale == 0.0f) {
    f32_quantize_u8_ref(x, y, n, scale, zp);
    return;
  }
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = quantize8(_mm256_loadu_ps(x + i), s, z);
    const __m256i b = quantize8(_mm256_loadu_ps(x + i + 8), s, z);
    const __m256i c = quantize8(_mm256_loadu_ps(x + i + 16), s, z);
    const __m256i d = quantize8(_mm256_loadu_ps(x + i + 24), s, z);
    // packs interleave the 128-bit halves: [a0 b0 c0 d0 | a1 b1 c1 d1] after two packs.
    const __m256i ab = _mm256_packus_epi32(a, b), cd = _mm256_packus_epi32(c, d);
    const __m256i bytes = _mm256_packus_epi16(ab, cd);
    const __m256i ordered =
        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), ordered);
  }
  if (i < n) f32_quantize_u8_ref(x + i, y + i, n - i, scale, zp);
}

}  // namespace onnx_prepack::kernels::vec
