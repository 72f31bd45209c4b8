// AVX-512 pooling row kernels (f32_conv.h): 16 outputs per step for strides 1
// and 2 (stride 2 deinterleaves two loads with vpermt2ps), the max's last 1 to
// 16 outputs with masked loads; the AVX2 rows otherwise and in the average's tail. vmaxps(x, best)
// is `x > best ? x : best` (the second operand on NaN or equal values), the ref kernel's update;
// the average sums in double, 8 lanes a register, in the ref kernel's tap order, so every level
// gives the same bits. g++-12 warns inside its own avx512fintrin.h (_mm512_undefined_ps, GCC bug
// 105593).
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

// p[0], p[2], ..., p[2 (m - 1)] in the first m lanes (m <= 16); reads nothing past p[2 m - 2].
inline __m512 load_even_masked(const float* p, size_t m) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const size_t need = 2 * m - 1;
  const __mmask16 lo = __mmask16(need >= 16 ? 0xFFFFu : (1u << need) - 1);
  const __mmask16 hi = __mmask16(need > 16 ? (1u << (need - 16)) - 1 : 0u);
  return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lo, p), idx,
                                _mm512_maskz_loadu_ps(hi, p + 16));
}

// Every output: 16 per step, then the last 1 to 16 with masked loads and stores (small maps,
// a 7-wide output row, had gone to the scalar loop whole).
template <size_t S>
void max_rows(float* out, size_t n, const float* const* src, size_t rows, size_t kw) {
  // Stride 2 reads one float past the last tap: the unmasked steps stop a step early.
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
  if (j == n) return;
  const size_t m = n - j;
  const __mmask16 keep = __mmask16(m >= 16 ? 0xFFFFu : (1u << m) - 1);
  auto ldm = [&](const float* p) {
    return S == 1 ? _mm512_maskz_loadu_ps(keep, p) : load_even_masked(p, m);
  };
  __m512 best = ldm(src[0] + j * S);
  for (size_t r = 0; r < rows; ++r) {
    const float* p = src[r] + j * S;
    for (size_t k = (r == 0 ? 1 : 0); k < kw; ++k) best = _mm512_max_ps(ldm(p + k), best);
  }
  _mm512_mask_storeu_ps(out + j, keep, best);
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
  if (stride == 1) return max_rows<1>(out, n, src, rows, kw);
  if (stride == 2) return max_rows<2>(out, n, src, rows, kw);
  // Other strides on the AVX2 rows.
  max_pool_row_avx2(out, n, src, rows, kw, stride);
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
