// The int8 GEMM microkernel for aarch64 with the int8 matrix-multiply extension (USMMLA,
// Armv8.2-A+i8mm; i8_gemm_select picks it when the host's capped features have i8mm). Reads the
// i8 panel16 layout as it is (i8_gemm.h): two consecutive k-groups of a panel are, per 4
// columns, two q registers of 4 x 4 bytes; ZIP1 / ZIP2 of their 32-bit lanes give the 2 x 8
// (2 columns x 8 k) operands USMMLA reads, and `usmmla acc.4s, a.16b, b.16b` adds the 2 x 2
// block (2 rows x 2 columns) of uint8 A (2 rows x 8 k) times that int8 B. Prepared A is uint8 u
// and USMMLA is unsigned x signed, so no correction is needed (epilogue offset 0). Tile: 4 rows
// x 16 columns, 16 q-register accumulators (2 row pairs x 8 column pairs), 8 zipped B and 2 A
// registers. The 2 x 2 blocks are put back into rows (ZIP1 / ZIP2 of 64-bit lanes) before
// i8_gemm_epilogue_neon.h's epilogue.
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/i8_gemm/i8_gemm_epilogue_neon.h"
#include "kernels/row_tiles.h"

namespace onnx_prepack::kernels {
namespace {

constexpr int kRows = 4;

// 8 bytes of row `r` (of R; zeros past R) at k-group g: both groups, or only g (the last,
// odd one: k_groups() * 4 bytes are readable, no further).
template <int R>
uint8x8_t a_half(const uint8_t* a, size_t lda, int r, size_t g, bool both) {
  if (r >= R) return vdup_n_u8(0);
  const uint8_t* p = a + size_t(r) * lda + g * 4;
  if (both) return vld1_u8(p);
  uint32_t word;
  std::memcpy(&word, p, 4);
  return vcreate_u8(uint64_t(word));
}

template <int R>
void tile_rows(const I8GemmShape& s, const I8Tile& t, const uint8_t* panel, int64_t p, size_t r0) {
  constexpr int P = (R + 1) / 2;  // row pairs
  const size_t groups = size_t(s.k_groups());
  const int8_t* b = reinterpret_cast<const int8_t*>(panel);
  const uint8_t* a = t.a + r0 * t.lda;
  int32x4_t acc[P][8];
  for (int i = 0; i < P; ++i) {
    for (int c = 0; c < 8; ++c) acc[i][c] = vdupq_n_s32(0);
  }
  for (size_t g = 0; g < groups; g += 2) {
    const bool both = g + 1 < groups;
    int8x16_t z[8];
    for (int q = 0; q < 4; ++q) {
      const int32x4_t lo = vreinterpretq_s32_s8(vld1q_s8(b + g * 64 + size_t(q) * 16));
      const int32x4_t hi =
          both ? vreinterpretq_s32_s8(vld1q_s8(b + (g + 1) * 64 + size_t(q) * 16)) : vdupq_n_s32(0);
      z[2 * q] = vreinterpretq_s8_s32(vzip1q_s32(lo, hi));      // columns 4q, 4q + 1
      z[2 * q + 1] = vreinterpretq_s8_s32(vzip2q_s32(lo, hi));  // columns 4q + 2, 4q + 3
    }
    for (int i = 0; i < P; ++i) {
      const uint8x16_t av =
          vcombine_u8(a_half<R>(a, t.lda, 2 * i, g, both), a_half<R>(a, t.lda, 2 * i + 1, g, both));
      for (int c = 0; c < 8; ++c) acc[i][c] = vusmmlaq_s32(acc[i][c], av, z[c]);
    }
  }
  const size_t n0 = size_t(p * kI8Panel);
  const size_t cols = size_t(std::min<int64_t>(kI8Panel, s.N - int64_t(n0)));
  const NeonPanelTerms terms = neon_panel_terms(s, t, panel, n0);
  for (int i = 0; i < P; ++i) {
    // acc[i][c] = {r0 n, r0 n + 1, r1 n, r1 n + 1} for n = 2c: rows from the 64-bit halves.
    int32x4_t row0[4], row1[4];
    for (int q = 0; q < 4; ++q) {
      const int64x2_t x = vreinterpretq_s64_s32(acc[i][2 * q]);
      const int64x2_t y = vreinterpretq_s64_s32(acc[i][2 * q + 1]);
      row0[q] = vreinterpretq_s32_s64(vzip1q_s64(x, y));
      row1[q] = vreinterpretq_s32_s64(vzip2q_s64(x, y));
    }
    neon_epilogue_row(s, t, terms, r0 + size_t(2 * i), n0, cols, row0, 0u);
    if (2 * i + 1 < R) neon_epilogue_row(s, t, terms, r0 + size_t(2 * i + 1), n0, cols, row1, 0u);
  }
}

}  // namespace

void i8_gemm_i8mm(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed, int64_t p0,
                  int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
    for_each_row_tile<kRows>(t.rows, [&]<int R>(size_t r) { tile_rows<R>(s, t, panel, p, r); });
  }
}

}  // namespace onnx_prepack::kernels
