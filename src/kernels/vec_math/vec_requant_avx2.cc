// AVX2 variant of vec_requant.h: 8 lanes, the tail by requant_value; the
// operation sequence of vec_requant_ref.cc.
#include <immintrin.h>

#include <cstring>

#include "kernels/vec_math/vec_requant.h"

namespace onnx_prepack::kernels::vec {

void requant_row_avx2(const int32_t* c, const int32_t* bias, const float* mult, size_t n,
                      int32_t zp, bool y_signed, uint8_t* y) {
  const int32_t lo = y_signed ? -128 : 0, hi = y_signed ? 127 : 255;
  const __m256 vlo = _mm256_set1_ps(float(lo - zp)), vhi = _mm256_set1_ps(float(hi - zp));
  const __m256i z = _mm256_set1_epi32(zp);
  // The low byte of each int32 to the first 4 bytes of its 128-bit lane, then
  // the two lanes' first dwords together: 8 bytes (the values are in range).
  const __m256i bytes =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i lanes = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + j));
    if (bias)
      a = _mm256_add_epi32(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + j)));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(mult + j));
    v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);
    const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), z);
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, bytes), lanes);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + j), _mm256_castsi256_si128(packed));
  }
  if (j < n)
    requant_row_ref(c + j, bias ? bias + j : nullptr, mult + j, n - j, zp, y_signed, y + j);
}

}  // namespace onnx_prepack::kernels::vec
