// The int8 GEMM microkernel for aarch64 with the dot-product extension (SDOT,
// Armv8.2-A+dotprod; i8_gemm_select picks it when the host's capped features
// have dotprod). Reads the i8 panel16 layout as it is (i8_gemm.h): one k-group
// of a panel is 16 columns x 4 bytes, four q registers, and `sdot v.4s, b.16b,
// a.4b[lane]` adds a row's 4 bytes of that group (broadcast by lane) to 4
// columns at once. Tile: 6 rows x 16 columns, 24 q-register accumulators, 4
// for B, A read 16 bytes (4 groups) per row: 6 q registers.
//
// SDOT is int8 x int8 while prepared A is uint8 u. The kernel feeds
// a = u - 128 (u ^ 0x80 as int8), so dot(u, b') = sdot(a, b') + 128 colsum(b'),
// and the epilogue of i8_gemm.h becomes, mod 2^32,
//   C = sdot(a, b') + colsum(b') (128 - za') + zb' (za' K - rowsum(u)),
// the same integer as the ref's (unsigned lanes, wrap-around products). The
// epilogue, float one included, is i8_gemm_epilogue_neon.h's.
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/i8_gemm/i8_gemm_epilogue_neon.h"
#include "kernels/row_tiles.h"

namespace onnx_prepack::kernels {
namespace {

constexpr int kRows = 6;

// Accumulates rows [0, R) of `a` (rows of lda bytes) against one panel.
template <int R>
void dot_panel(const uint8_t* a, size_t lda, const int8_t* b, size_t groups, int32x4_t acc[R][4]) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  for (int r = 0; r < R; ++r) {
    for (int q = 0; q < 4; ++q) acc[r][q] = vdupq_n_s32(0);
  }
  size_t g = 0;
  for (; g + 4 <= groups; g += 4) {
    int8x16_t av[R];
    for (int r = 0; r < R; ++r) {
      av[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a + size_t(r) * lda + g * 4), flip));
    }
#define OP_I8_DOT_GROUP(L)                                          \
  {                                                                 \
    const int8_t* bg = b + (g + L) * 64;                            \
    const int8x16_t b0 = vld1q_s8(bg), b1 = vld1q_s8(bg + 16);      \
    const int8x16_t b2 = vld1q_s8(bg + 32), b3 = vld1q_s8(bg + 48); \
    for (int r = 0; r < R; ++r) {                                   \
      acc[r][0] = vdotq_laneq_s32(acc[r][0], b0, av[r], L);         \
      acc[r][1] = vdotq_laneq_s32(acc[r][1], b1, av[r], L);         \
      acc[r][2] = vdotq_laneq_s32(acc[r][2], b2, av[r], L);         \
      acc[r][3] = vdotq_laneq_s32(acc[r][3], b3, av[r], L);         \
    }                                                               \
  }
    OP_I8_DOT_GROUP(0)
    OP_I8_DOT_GROUP(1)
    OP_I8_DOT_GROUP(2)
    OP_I8_DOT_GROUP(3)
#undef OP_I8_DOT_GROUP
  }
  // The last 1 to 3 groups: 4 bytes of A per row (k_groups() * 4 readable, no further).
  for (; g < groups; ++g) {
    const int8_t* bg = b + g * 64;
    const int8x16_t b0 = vld1q_s8(bg), b1 = vld1q_s8(bg + 16);
    const int8x16_t b2 = vld1q_s8(bg + 32), b3 = vld1q_s8(bg + 48);
    for (int r = 0; r < R; ++r) {
      uint32_t word;
      std::memcpy(&word, a + size_t(r) * lda + g * 4, 4);
      const int8x16_t ar =
          vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(vdupq_n_u32(word)), flip));
      acc[r][0] = vdotq_s32(acc[r][0], b0, ar);
      acc[r][1] = vdotq_s32(acc[r][1], b1, ar);
      acc[r][2] = vdotq_s32(acc[r][2], b2, ar);
      acc[r][3] = vdotq_s32(acc[r][3], b3, ar);
    }
  }
}

// Rows [r0, r0 + R) of the tile against panel p: the dot, the epilogue, the stores.
template <int R>
void tile_rows(const I8GemmShape& s, const I8Tile& t, const uint8_t* panel, int64_t p, size_t r0) {
  const size_t groups = size_t(s.k_groups());
  int32x4_t acc[R][4];
  dot_panel<R>(t.a + r0 * t.lda, t.lda, reinterpret_cast<const int8_t*>(panel), groups, acc);
  const size_t n0 = size_t(p * kI8Panel);
  const size_t cols = size_t(std::min<int64_t>(kI8Panel, s.N - int64_t(n0)));
  const NeonPanelTerms terms = neon_panel_terms(s, t, panel, n0);
  for (int i = 0; i < R; ++i) {
    neon_epilogue_row(s, t, terms, r0 + size_t(i), n0, cols, acc[i], 128u);
  }
}

}  // namespace

void i8_gemm_dotprod(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed, int64_t p0,
                     int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
    for_each_row_tile<kRows>(t.rows, [&]<int R>(size_t r) { tile_rows<R>(s, t, panel, p, r); });
  }
}

}  // namespace onnx_prepack::kernels
