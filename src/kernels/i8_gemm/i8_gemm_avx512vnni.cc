// AVX-512 VNNI int8 GEMM microkernel (i8_gemm.h): tiles of up to 8 rows x 2
// panels (32 columns), one vpdpbusd per row, panel and group of 4 k; the
// 16 accumulators and 2 B vectors stay in registers. Reached only on hosts
// with AVX512_VNNI (i8_gemm_select); the _avx512vnni suffix gives this file
// alone -mavx512vnni.
// g++-12 warns inside its own avx512fintrin.h (_mm512_undefined_ps, GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>
#include <utility>

#include "kernels/i8_gemm/i8_gemm.h"

namespace onnx_prepack::kernels {
namespace {

constexpr int kRows = 8;

template <int R, int P>
void tile(const I8GemmShape& s, const I8Tile& t, size_t r0, const uint8_t* packed, int64_t p) {
  const size_t groups = size_t(s.k_groups()), pb = s.panel_bytes();
  const uint8_t* panel = packed + size_t(p) * pb;
  const uint8_t* a = t.a + r0 * t.lda;
  __m512i acc[R][P];
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < P; ++q) acc[r][q] = _mm512_setzero_si512();
  }
  for (size_t g = 0; g < groups; ++g) {
    __m512i b[P];
    for (int q = 0; q < P; ++q) b[q] = _mm512_loadu_si512(panel + size_t(q) * pb + g * 64);
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + size_t(r) * t.lda + g * 4, 4);
      const __m512i av = _mm512_set1_epi32(quad);
      for (int q = 0; q < P; ++q) acc[r][q] = _mm512_dpbusd_epi32(acc[r][q], av, b[q]);
    }
  }
  // Epilogue: dot - za' (colsum - K zb') - rowsum zb', lane arithmetic mod 2^32.
  const __m512i kk = _mm512_set1_epi32(int32_t(uint32_t(s.K)));
  for (int q = 0; q < P; ++q) {
    const int64_t n0 = (p + q) * kI8Panel;
    const __m512i colsum = _mm512_loadu_si512(panel + size_t(q) * pb + groups * 64);
    const __m512i zb = _mm512_loadu_si512(t.col_zb + n0);
    const __m512i cs = _mm512_sub_epi32(colsum, _mm512_mullo_epi32(kk, zb));
    const int64_t left = s.N - n0;
    const __mmask16 mask = left >= kI8Panel ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    // The float epilogue (i8_gemm.h): one IEEE operation per step, as the ref's.
    __m512 scale = _mm512_setzero_ps(), bias = _mm512_setzero_ps();
    if (t.col_scale != nullptr) scale = _mm512_loadu_ps(t.col_scale + n0);
    if (t.col_bias != nullptr) bias = _mm512_loadu_ps(t.col_bias + n0);
    for (int r = 0; r < R; ++r) {
      const size_t row = r0 + size_t(r);
      __m512i v =
          _mm512_sub_epi32(acc[r][q], _mm512_mullo_epi32(_mm512_set1_epi32(t.row_za[row]), cs));
      v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(t.row_sum[row]), zb));
      if (t.col_scale == nullptr) {
        _mm512_mask_storeu_epi32(t.c + row * t.ldc + size_t(n0), mask, v);
        continue;
      }
      // A per-row scale: the multiplier row_scale * col_scale, rounded first (as the ref's).
      const __m512 mult =
          t.row_scale ? _mm512_mul_ps(_mm512_set1_ps(t.row_scale[row]), scale) : scale;
      __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(v), mult);
      // g++ builds _mm512_mul_ps / _add_ps from plain vector arithmetic, which -mfma may
      // contract into one FMA (one rounding, not the chain's two): keep them apart.
      __asm__("" : "+v"(y));
      if (t.col_bias != nullptr) y = t.bias_first ? _mm512_add_ps(bias, y) : _mm512_add_ps(y, bias);
      if (t.relu) {
        const __m512 zero = _mm512_setzero_ps();
        y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, zero, _CMP_LT_OQ), y, zero);
      }
      _mm512_mask_storeu_ps(t.cf + row * t.ldc + size_t(n0), mask, y);
    }
  }
}

using TileFn = void (*)(const I8GemmShape&, const I8Tile&, size_t, const uint8_t*, int64_t);

template <int P, int... Rs>
constexpr TileFn pick(int rows, std::integer_sequence<int, Rs...>) {
  TileFn fn = nullptr;
  ((rows == Rs + 1 ? (fn = tile<Rs + 1, P>, 0) : 0), ...);
  return fn;
}

}  // namespace

void i8_gemm_avx512vnni(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed, int64_t p0,
                        int64_t p1) {
  // Panel pairs outermost: the pair (2 K x 16 bytes) stays in L1/L2 while every row tile reads it.
  for (int64_t p = p0; p < p1; p += 2) {
    const bool two = p + 1 < p1;
    for (size_t r = 0; r < t.rows; r += kRows) {
      const int rows = int(t.rows - r < size_t(kRows) ? t.rows - r : size_t(kRows));
      const TileFn fn = two ? pick<2>(rows, std::make_integer_sequence<int, kRows>{})
                            : pick<1>(rows, std::make_integer_sequence<int, kRows>{});
      fn(s, t, r, packed, p);
    }
  }
}

}  // namespace onnx_prepack::kernels
