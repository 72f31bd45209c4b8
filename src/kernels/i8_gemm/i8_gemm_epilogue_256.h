// The epilogue of the 256-bit int8 GEMM tiles (i8_gemm.h), shared by the AVX2
// kernel and the 256-bit VNNI kernel (i8_gemm_vnni256_impl.h): one row's 16
// dot products of a panel become C = dot - za' (colsum - K zb') - rowsum zb'
// (lane arithmetic mod 2^32), then optionally the float epilogue, one IEEE
// operation per step as the ref's, and the columns below N are stored.
// Included only by translation units built with AVX2 flags.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"

namespace onnx_prepack::kernels {
// Internal linkage: each ISA translation unit keeps its own copy.
namespace {

// Sums the pair sums of vpmaddwd: lanes 2c and 2c + 1 of a (columns 0-3) and
// b (columns 4-7) give columns 0-7 in order. hadd yields
// [a01 a23 b01 b23 | a45 a67 b45 b67] = columns [0 1 4 5 | 2 3 6 7].
inline __m256i reduce_pairs_256(__m256i a, __m256i b) {
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(a, b), 0xD8);
}

// Per panel: the column terms every row of the tile shares.
struct PanelTerms256 {
  __m256i zb[2], cs[2];
  __m256 scale[2], bias[2];
  int64_t n0 = 0;
  size_t cols = 0;
};

inline PanelTerms256 panel_terms_256(const I8GemmShape& s, const I8Tile& t, const uint8_t* panel,
                                     int64_t p) {
  PanelTerms256 pt;
  const size_t groups = size_t(s.k_groups());
  pt.n0 = p * kI8Panel;
  pt.cols = size_t(s.N - pt.n0 < kI8Panel ? s.N - pt.n0 : kI8Panel);
  const __m256i kk = _mm256_set1_epi32(int32_t(uint32_t(s.K)));
  for (int h = 0; h < 2; ++h) {
    pt.zb[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.col_zb + pt.n0 + 8 * h));
    const __m256i colsum =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + groups * 64 + 32 * size_t(h)));
    pt.cs[h] = _mm256_sub_epi32(colsum, _mm256_mullo_epi32(kk, pt.zb[h]));
    pt.scale[h] = pt.bias[h] = _mm256_setzero_ps();
    if (t.col_scale != nullptr) pt.scale[h] = _mm256_loadu_ps(t.col_scale + pt.n0 + 8 * h);
    if (t.col_bias != nullptr) pt.bias[h] = _mm256_loadu_ps(t.col_bias + pt.n0 + 8 * h);
  }
  return pt;
}

// Finishes and stores row `row` of the tile: dot[0] holds columns 0-7 of the
// panel, dot[1] columns 8-15.
inline void store_row_256(const I8Tile& t, const PanelTerms256& pt, size_t row,
                          const __m256i* dot) {
  const __m256i za = _mm256_set1_epi32(t.row_za[row]);
  const __m256i rs = _mm256_set1_epi32(t.row_sum[row]);
  __m256i v[2];
  for (int h = 0; h < 2; ++h) {
    v[h] = _mm256_sub_epi32(dot[h], _mm256_mullo_epi32(za, pt.cs[h]));
    v[h] = _mm256_sub_epi32(v[h], _mm256_mullo_epi32(rs, pt.zb[h]));
  }
  if (t.col_scale != nullptr) {
    __m256 y[2];
    for (int h = 0; h < 2; ++h) {
      // A per-row scale: the multiplier row_scale * col_scale, rounded first (as the ref's).
      const __m256 mult =
          t.row_scale ? _mm256_mul_ps(_mm256_set1_ps(t.row_scale[row]), pt.scale[h]) : pt.scale[h];
      y[h] = _mm256_mul_ps(_mm256_cvtepi32_ps(v[h]), mult);
      // g++ builds _mm256_mul_ps / _add_ps from plain vector arithmetic, which -mfma
      // would contract into one FMA (one rounding, not the chain's two): keep them apart.
      __asm__("" : "+x"(y[h]));
      if (t.col_bias != nullptr)
        y[h] = t.bias_first ? _mm256_add_ps(pt.bias[h], y[h]) : _mm256_add_ps(y[h], pt.bias[h]);
      if (t.relu) {
        const __m256 zero = _mm256_setzero_ps();
        y[h] = _mm256_blendv_ps(y[h], zero, _mm256_cmp_ps(y[h], zero, _CMP_LT_OQ));
      }
    }
    float* out = t.cf + row * t.ldc + size_t(pt.n0);
    if (pt.cols == size_t(kI8Panel)) {
      _mm256_storeu_ps(out, y[0]);
      _mm256_storeu_ps(out + 8, y[1]);
    } else {
      alignas(32) float tmp[kI8Panel];
      _mm256_store_ps(tmp, y[0]);
      _mm256_store_ps(tmp + 8, y[1]);
      std::memcpy(out, tmp, pt.cols * 4);
    }
    return;
  }
  int32_t* out = t.c + row * t.ldc + size_t(pt.n0);
  if (pt.cols == size_t(kI8Panel)) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v[0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), v[1]);
  } else {
    alignas(32) int32_t tmp[kI8Panel];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v[0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(tmp + 8), v[1]);
    std::memcpy(out, tmp, pt.cols * 4);
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels
