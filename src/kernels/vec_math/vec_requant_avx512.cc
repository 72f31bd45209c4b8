// AVX-512F variant of vec_requant.h: 16 lanes, masked tails; the operation
// sequence of requant_value (vec_requant_ref.cc).
// g++-12 warns inside its own avx512fintrin.h (_mm512_undefined_ps, GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "kernels/vec_math/vec_requant.h"

namespace onnx_prepack::kernels::vec {
namespace {

// 16 values: the product, clamped, rounded in the current mode (vcvtps2dq),
// the zero point added; in range, so the byte truncation (vpmovdb) is exact.
__m128i requant16(__m512i a, __m512 m, __m512 vlo, __m512 vhi, __m512i zp) {
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), m);
  v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi);
  return _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), zp));
}

}  // namespace

void requant_row_avx512(const int32_t* c, const int32_t* bias, const float* mult, size_t n,
                        int32_t zp, bool y_signed, uint8_t* y) {
  const int32_t lo = y_signed ? -128 : 0, hi = y_signed ? 127 : 255;
  const __m512 vlo = _mm512_set1_ps(float(lo - zp)), vhi = _mm512_set1_ps(float(hi - zp));
  const __m512i z = _mm512_set1_epi32(zp);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m512i a = _mm512_loadu_si512(c + j);
    if (bias) a = _mm512_add_epi32(a, _mm512_loadu_si512(bias + j));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + j),
                     requant16(a, _mm512_loadu_ps(mult + j), vlo, vhi, z));
  }
  if (j < n) {
    const __mmask16 k = __mmask16((1u << (n - j)) - 1u);
    __m512i a = _mm512_maskz_loadu_epi32(k, c + j);
    if (bias) a = _mm512_add_epi32(a, _mm512_maskz_loadu_epi32(k, bias + j));
    _mm_mask_storeu_epi8(y + j, k, requant16(a, _mm512_maskz_loadu_ps(k, mult + j), vlo, vhi, z));
  }
}

}  // namespace onnx_prepack::kernels::vec
