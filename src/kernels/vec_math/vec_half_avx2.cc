// F16C / AVX2 variant of vec_half.h: 8 lanes, tails through the ref twin.
#include <immintrin.h>

#include "kernels/vec_math/vec_half.h"

namespace onnx_prepack::kernels::vec {

void f16_to_f32_avx2(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  f16_to_f32_ref(x + i, y + i, n - i);
}

void f32_to_f16_avx2(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(y + i),
        _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  f32_to_f16_ref(x + i, y + i, n - i);
}

void bf16_to_f32_avx2(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_ps(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  bf16_to_f32_ref(x + i, y + i, n - i);
}

void f32_to_bf16_avx2(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  for (; i + 8 <= n; i += 8) {
    const __m256i v = _mm256_castps_si256(_mm256_loadu_ps(x + i));
    // Round to nearest even: add 0x7fff plus the lowest kept bit, keep the top half.
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(v, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(v, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    // NaN: the top half with the quiet bit set.
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(v, 16), _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(v, abs_mask), inf);
    const __m256i r = _mm256_blendv_epi8(rounded, quiet, is_nan);
    // 8 x 32-bit -> 8 x 16-bit (values < 2^16, so the unsigned pack is exact).
    const __m128i packed =
        _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), packed);
  }
  f32_to_bf16_ref(x + i, y + i, n - i);
}

}  // namespace onnx_prepack::kernels::vec
