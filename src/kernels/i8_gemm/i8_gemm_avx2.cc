// AVX2 int8 GEMM microkernel (i8_gemm.h), exact: A's uint8 and B's int8 are
// widened to int16 (vpmovzxbw / vpmovsxbw) and multiplied with vpmaddwd, whose
// pair sums (at most 2 * 255 * 128) cannot overflow; vpmaddubsw would
// saturate its int16 pair sums. Tiles of 2 rows x 1 panel: per 4 columns an
// accumulator of 8 int32 lanes holds 2 partial sums per column, added in the
// epilogue. Also the kernel of AVX-512 hosts without VNNI.
#include <immintrin.h>

#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"

namespace onnx_prepack::kernels {
namespace {

constexpr int kRows = 2;

// The 16 column sums of one row's 4 accumulators (lanes 2c, 2c + 1: column c).
__m256i reduce_pairs(__m256i a, __m256i b) {
  // hadd: [a01 a23 b01 b23 | a45 a67 b45 b67] = columns [0 1 4 5 | 2 3 6 7]
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(a, b), 0xD8);
}

template <int R>
void tile(const I8GemmShape& s, const I8Tile& t, size_t r0, const uint8_t* panel, int64_t p) {
  const size_t groups = size_t(s.k_groups());
  const uint8_t* a = t.a + r0 * t.lda;
  __m256i acc[R][4];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_setzero_si256();
  }
  for (size_t g = 0; g < groups; ++g) {
    __m256i aw[R];
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + size_t(r) * t.lda + g * 4, 4);
      aw[r] = _mm256_cvtepu8_epi16(_mm_set1_epi32(quad));  // [a0 a1 a2 a3] x 4 as int16
    }
    for (int c = 0; c < 4; ++c) {
      const __m128i raw =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(panel + g * 64 + size_t(c) * 16));
      const __m256i bw = _mm256_cvtepi8_epi16(raw);  // columns 4c..4c+3, 4 k each
      for (int r = 0; r < R; ++r) {
        acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(aw[r], bw));
      }
    }
  }
  // Epilogue: dot - za' (colsum - K zb') - rowsum zb', lane arithmetic mod 2^32.
  const int64_t n0 = p * kI8Panel;
  const __m256i kk = _mm256_set1_epi32(int32_t(uint32_t(s.K)));
  __m256i zb[2], cs[2];
  for (int h = 0; h < 2; ++h) {
    zb[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.col_zb + n0 + 8 * h));
    const __m256i colsum =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + groups * 64 + 32 * size_t(h)));
    cs[h] = _mm256_sub_epi32(colsum, _mm256_mullo_epi32(kk, zb[h]));
  }
  const size_t cols = size_t(s.N - n0 < kI8Panel ? s.N - n0 : kI8Panel);
  // The float epilogue (i8_gemm.h): one IEEE operation per step, as the ref's.
  __m256 scale[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()}, bias[2] = {scale[0], scale[1]};
  for (int h = 0; h < 2; ++h) {
    if (t.col_scale != nullptr) scale[h] = _mm256_loadu_ps(t.col_scale + n0 + 8 * h);
    if (t.col_bias != nullptr) bias[h] = _mm256_loadu_ps(t.col_bias + n0 + 8 * h);
  }
  for (int r = 0; r < R; ++r) {
    const size_t row = r0 + size_t(r);
    const __m256i za = _mm256_set1_epi32(t.row_za[row]);
    const __m256i rs = _mm256_set1_epi32(t.row_sum[row]);
    __m256i v[2] = {reduce_pairs(acc[r][0], acc[r][1]), reduce_pairs(acc[r][2], acc[r][3])};
    for (int h = 0; h < 2; ++h) {
      v[h] = _mm256_sub_epi32(v[h], _mm256_mullo_epi32(za, cs[h]));
      v[h] = _mm256_sub_epi32(v[h], _mm256_mullo_epi32(rs, zb[h]));
    }
    if (t.col_scale != nullptr) {
      __m256 y[2];
      for (int h = 0; h < 2; ++h) {
        y[h] = _mm256_mul_ps(_mm256_cvtepi32_ps(v[h]), scale[h]);
        // g++ builds _mm256_mul_ps / _add_ps from plain vector arithmetic, which -mfma
        // would contract into one FMA (one rounding, not the chain's two): keep them apart.
        __asm__("" : "+x"(y[h]));
        if (t.col_bias != nullptr)
          y[h] = t.bias_first ? _mm256_add_ps(bias[h], y[h]) : _mm256_add_ps(y[h], bias[h]);
        if (t.relu) {
          const __m256 zero = _mm256_setzero_ps();
          y[h] = _mm256_blendv_ps(y[h], zero, _mm256_cmp_ps(y[h], zero, _CMP_LT_OQ));
        }
      }
      float* out = t.cf + row * t.ldc + size_t(n0);
      if (cols == size_t(kI8Panel)) {
        _mm256_storeu_ps(out, y[0]);
        _mm256_storeu_ps(out + 8, y[1]);
      } else {
        alignas(32) float tmp[kI8Panel];
        _mm256_store_ps(tmp, y[0]);
        _mm256_store_ps(tmp + 8, y[1]);
        std::memcpy(out, tmp, cols * 4);
      }
      continue;
    }
    int32_t* out = t.c + row * t.ldc + size_t(n0);
    if (cols == size_t(kI8Panel)) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v[0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), v[1]);
    } else {
      alignas(32) int32_t tmp[kI8Panel];
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), v[0]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp + 8), v[1]);
      std::memcpy(out, tmp, cols * 4);
    }
  }
}

}  // namespace

void i8_gemm_avx2(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed, int64_t p0,
                  int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
    size_t r = 0;
    for (; r + kRows <= t.rows; r += kRows) tile<kRows>(s, t, r, panel, p);
    if (r < t.rows) tile<1>(s, t, r, panel, p);
  }
}

}  // namespace onnx_prepack::kernels
