// AVX2 pooling row kernels (f32_conv.h): 8 outputs per step for strides 1
// and 2 (stride 2 deinterleaves two loads), scalar otherwise and in the tail.
// vmaxps(x, best) is `x > best ? x : best` (the second operand on NaN or equal
// values), the ref kernel's update; the average sums in double, 4 lanes a
// register, in the ref kernel's tap order, so both give the same bits.
#include <immintrin.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

// src[0], src[2], ..., src[14]; reads src[0..16).
inline __m256 load_even8(const float* p) {
  const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
  const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

// src[0], src[2], src[4], src[6]; reads src[0..8).
inline __m128 load_even4(const float* p) {
  return _mm_shuffle_ps(_mm_loadu_ps(p), _mm_loadu_ps(p + 4), _MM_SHUFFLE(2, 0, 2, 0));
}

template <size_t S>
size_t max_rows(float* out, size_t n, const float* const* src, size_t rows, size_t kw) {
  // Stride 2 reads one float past the last tap: stop a step early.
  const size_t end = S == 1 ? n : (n > 0 ? n - 1 : 0);
  size_t j = 0;
  for (; j + 8 <= end; j += 8) {
    auto ld = [&](const float* p) { return S == 1 ? _mm256_loadu_ps(p) : load_even8(p); };
    __m256 best = ld(src[0] + j * S);
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = (r == 0 ? 1 : 0); k < kw; ++k) best = _mm256_max_ps(ld(p + k), best);
    }
    _mm256_storeu_ps(out + j, best);
  }
  return j;
}

template <size_t S>
size_t avg_rows(float* out, size_t n, const float* const* src, size_t rows, size_t kw, double div) {
  const size_t end = S == 1 ? n : (n > 0 ? n - 1 : 0);
  const __m256d d = _mm256_set1_pd(div);
  size_t j = 0;
  auto ld = [&](const float* p) {
    return _mm256_cvtps_pd(S == 1 ? _mm_loadu_ps(p) : load_even4(p));
  };
  for (; j + 8 <= end; j += 8) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = 0; k < kw; ++k) {
        s0 = _mm256_add_pd(s0, ld(p + k));
        s1 = _mm256_add_pd(s1, ld(p + k + 4 * S));
      }
    }
    const __m128 lo = _mm256_cvtpd_ps(_mm256_div_pd(s0, d));
    const __m128 hi = _mm256_cvtpd_ps(_mm256_div_pd(s1, d));
    _mm256_storeu_ps(out + j, _mm256_set_m128(hi, lo));
  }
  for (; j + 4 <= end; j += 4) {
    __m256d s0 = _mm256_setzero_pd();
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = 0; k < kw; ++k) s0 = _mm256_add_pd(s0, ld(p + k));
    }
    _mm_storeu_ps(out + j, _mm256_cvtpd_ps(_mm256_div_pd(s0, d)));
  }
  return j;
}

}  // namespace

void max_pool_row_avx2(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride) {
  size_t j = 0;
  if (stride == 1) j = max_rows<1>(out, n, src, rows, kw);
  if (stride == 2) j = max_rows<2>(out, n, src, rows, kw);
  max_pool_cols_ref(out, j, n, src, rows, kw, stride);
}

void avg_pool_row_avx2(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride, double div) {
  size_t j = 0;
  if (stride == 1) j = avg_rows<1>(out, n, src, rows, kw, div);
  if (stride == 2) j = avg_rows<2>(out, n, src, rows, kw, div);
  avg_pool_cols_ref(out, j, n, src, rows, kw, stride, div);
}

}  // namespace onnx_prepack::kernels
