// AVX2 int8 GEMM microkernel (i8_gemm.h), exact: A's uint8 and B's int8 are
// widened to int16 (vpmovzxbw / vpmovsxbw) and multiplied with vpmaddwd, whose
// pair sums (at most 2 * 255 * 128) cannot overflow; vpmaddubsw would
// saturate its int16 pair sums. Tiles of 2 rows x 1 panel: per 4 columns an
// accumulator of 8 int32 lanes holds 2 partial sums per column, added in the
// epilogue (i8_gemm_epilogue_256.h). Also the kernel of AVX-512 hosts without
// VNNI or AVX-VNNI.
#include <immintrin.h>

#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/i8_gemm/i8_gemm_epilogue_256.h"

namespace onnx_prepack::kernels {
namespace {

constexpr int kRows = 2;

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
  const PanelTerms256 pt = panel_terms_256(s, t, panel, p);
  for (int r = 0; r < R; ++r) {
    const __m256i dot[2] = {reduce_pairs_256(acc[r][0], acc[r][1]),
                            reduce_pairs_256(acc[r][2], acc[r][3])};
    store_row_256(t, pt, r0 + size_t(r), dot);
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
