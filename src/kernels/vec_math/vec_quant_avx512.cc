// AVX-512F variant of vec_quant.h: 16 lanes, masked tails; the same operation
// sequence as vec_quant_ref.cc.
// g++-12 warns inside its own avx512fintrin.h (_mm512_undefined_ps, GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "kernels/vec_math/vec_quant.h"

namespace onnx_prepack::kernels::vec {
namespace {

// nearbyint: the current rounding mode (nearest even by default), no exceptions.
constexpr int kRound = _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC;

__m128i quantize16(__m512 x, __m512 s, __m512 zp) {
  __m512 q = _mm512_roundscale_ps(_mm512_div_ps(x, s), kRound);
  q = _mm512_add_ps(q, zp);
  q = _mm512_min_ps(_mm512_max_ps(q, _mm512_setzero_ps()), _mm512_set1_ps(255.0f));
  return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(q));
}

}  // namespace

void f32_minmax_avx512(const float* x, size_t n, float* lo, float* hi) {
  // Four accumulators of each for the latency of vminps / vmaxps, every lane
  // starting at the caller's value; the tail is masked.
  __m512 l[4], h[4];
  for (int k = 0; k < 4; ++k) {
    l[k] = _mm512_set1_ps(*lo);
    h[k] = _mm512_set1_ps(*hi);
  }
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int k = 0; k < 4; ++k) {
      const __m512 v = _mm512_loadu_ps(x + i + 16 * k);
      l[k] = _mm512_min_ps(v, l[k]);
      h[k] = _mm512_max_ps(v, h[k]);
    }
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    l[0] = _mm512_min_ps(v, l[0]);
    h[0] = _mm512_max_ps(v, h[0]);
  }
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    l[0] = _mm512_mask_min_ps(l[0], m, v, l[0]);
    h[0] = _mm512_mask_max_ps(h[0], m, v, h[0]);
  }
  const __m512 l01 = _mm512_min_ps(l[0], l[1]), l23 = _mm512_min_ps(l[2], l[3]);
  const __m512 h01 = _mm512_max_ps(h[0], h[1]), h23 = _mm512_max_ps(h[2], h[3]);
  alignas(64) float lv[16], hv[16];
  _mm512_store_ps(lv, _mm512_min_ps(l01, l23));
  _mm512_store_ps(hv, _mm512_max_ps(h01, h23));
  float a = lv[0], b = hv[0];
  for (int k = 1; k < 16; ++k) {
    a = lv[k] < a ? lv[k] : a;
    b = hv[k] > b ? hv[k] : b;
  }
  *lo = a;
  *hi = b;
}

void f32_quantize_u8_avx512(const float* x, uint8_t* y, size_t n, float scale, float zp) {
  if (scale == 0.0f) {
    f32_quantize_u8_ref(x, y, n, scale, zp);
    return;
  }
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zp);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), quantize16(_mm512_loadu_ps(x + i), s, z));
  }
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1u);
    _mm_mask_storeu_epi8(y + i, m, quantize16(_mm512_maskz_loadu_ps(m, x + i), s, z));
  }
}

}  // namespace onnx_prepack::kernels::vec
