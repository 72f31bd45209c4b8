// AVX-512 pooling row kernels (f32_conv.h): 16 outputs per step for strides 1
// and 2 (stride 2 deinterleaves two loads with vpermt2ps), scalar otherwise
// and in the tail. vmaxps(x, best) is `x > best ? x : best` (the second
// operand on NaN or equal values), the ref kernel's update; the average sums
// in double, 8 lanes a register, in the ref kernel's tap order, so every
// level gives the same bits.
// g++-12 warns inside its own avx512fintrin.h (_mm512_undefined_ps, GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

// p[0], p[2], ..., p[30]; reads p[0..32).
inline __m512 load_even16(const float* p) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx, _mm512_loadu_ps(p + 16));
}

// p[0], p[2], ..., p[14]; reads p[0..16).
inline __m256 load_even8(const float* p) {
  const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  return _mm256_permutex2var_ps(_mm256_loadu_ps(p), idx, _mm256_loadu_ps(p + 8));
}

template <size_t S>
size_t max_rows(float* out, size_t n, const float* const* src, size_t rows, size_t kw) {
  // Stride 2 reads one float past the last tap: stop a step early.
  const size_t end = S == 1 ? n : (n > 0 ? n - 1 : 0);
  auto ld = [](const float* p) { return S == 1 ? _mm512_loadu_ps(p) : load_even16(p); };
  size_t j = 0;
  for (; j + 16 <= end; j += 16) {
    __m512 best = ld(src[0] + j * S);
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = (r == 0 ? 1 : 0); k < kw; ++k) best = _mm512_max_ps(ld(p + k), best);
    }
    _mm512_storeu_ps(out + j, best);
  }
  return j;
}

template <size_t S>
size_t avg_rows(float* out, size_t n, const float* const* src, size_t rows, size_t kw, double div) {
  const size_t end = S == 1 ? n : (n > 0 ? n - 1 : 0);
  const __m512d d = _mm512_set1_pd(div);
  auto ld = [](const float* p) {
    return _mm512_cvtps_pd(S == 1 ? _mm256_loadu_ps(p) : load_even8(p));
  };
  size_t j = 0;
  for (; j + 16 <= end; j += 16) {
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = 0; k < kw; ++k) {
        s0 = _mm512_add_pd(s0, ld(p + k));
        s1 = _mm512_add_pd(s1, ld(p + k + 8 * S));
      }
    }
    _mm256_storeu_ps(out + j, _mm512_cvtpd_ps(_mm512_div_pd(s0, d)));
    _mm256_storeu_ps(out + j + 8, _mm512_cvtpd_ps(_mm512_div_pd(s1, d)));
  }
  for (; j + 8 <= end; j += 8) {
    __m512d s0 = _mm512_setzero_pd();
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = 0; k < kw; ++k) s0 = _mm512_add_pd(s0, ld(p + k));
    }
    _mm256_storeu_ps(out + j, _mm512_cvtpd_ps(_mm512_div_pd(s0, d)));
  }
  return j;
}

}  // namespace

void max_pool_row_avx512(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                         size_t stride) {
  size_t j = 0;
  if (stride == 1) j = max_rows<1>(out, n, src, rows, kw);
  if (stride == 2) j = max_rows<2>(out, n, src, rows, kw);
  // The rest (fewer than 16 outputs, or other strides) on the AVX2 rows.
  if (j < n) {
    const float* rest[64];
    if (rows <= 64) {
      for (size_t r = 0; r < rows; ++r) rest[r] = src[r] + j * stride;
      return max_pool_row_avx2(out + j, n - j, rest, rows, kw, stride);
    }
    max_pool_cols_ref(out, j, n, src, rows, kw, stride);  // taller windows
  }
}

void avg_pool_row_avx512(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                         size_t stride, double div) {
  size_t j = 0;
  if (stride == 1) j = avg_rows<1>(out, n, src, rows, kw, div);
  if (stride == 2) j = avg_rows<2>(out, n, src, rows, kw, div);
  if (j < n) {
    const float* rest[64];
    if (rows <= 64) {
      for (size_t r = 0; r < rows; ++r) rest[r] = src[r] + j * stride;
      return avg_pool_row_avx2(out + j, n - j, rest, rows, kw, stride, div);
    }
    avg_pool_cols_ref(out, j, n, src, rows, kw, stride, div);  // taller windows
  }
}

}  // namespace onnx_prepack::kernels
