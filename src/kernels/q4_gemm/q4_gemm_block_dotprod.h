// One block's float update, shared by the dot-product (q4_gemm_dotprod.cc) and
// i8mm (q4_gemm_i8mm.cc) level-4 kernels once each has the block's exact int32
// dots (dot[r][h]: row r, columns 4h..4h+3 of the panel). 8-bit codes were
// taken as q - 128, so 128 * sum(qa) of the block is added back (SDOT against
// ones, exact); then the ref's epilogue: acc = fma(float(dot), s * sa, acc),
// acc = fma(-corr, qsum, acc). Needs +dotprod (included by those two units only).
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/q4_gemm/q4_gemm.h"
#include "kernels/row_tiles.h"

namespace onnx_prepack::kernels {

template <int kBits, int kRows>
inline void add_block_dots(const QGemmShape& s, const QARow* rows, int64_t kb, const uint8_t* rec,
                           int32x4_t (&dot)[kRows][4], float32x4_t (&acc)[kRows][4]) {
  if constexpr (kBits == 8) {
    const int8x16_t ones = vdupq_n_s8(1);
    const int64_t k0 = kb * s.block;
    for (int r = 0; r < kRows; ++r) {
      int32x4_t sum = vdupq_n_s32(0);
      for (int i = 0; i < s.block; i += 16)
        sum = vdotq_s32(sum, vld1q_s8(rows[r].qa + k0 + i), ones);
      const int32x4_t shift = vdupq_n_s32(128 * vaddvq_s32(sum));
      for (int h = 0; h < 4; ++h) dot[r][h] = vaddq_s32(dot[r][h], shift);
    }
  }
  const float* scales = reinterpret_cast<const float*>(rec + s.code_bytes());
  const float* corr = scales + kQPanel;
  for (int r = 0; r < kRows; ++r) {
    const float32x4_t sa = vdupq_n_f32(rows[r].a_scale[kb]);
    const float32x4_t qsum = vdupq_n_f32(rows[r].a_qsum[kb]);
    for (int h = 0; h < 4; ++h) {
      const float32x4_t scale = vmulq_f32(vld1q_f32(scales + 4 * h), sa);
      acc[r][h] = vfmaq_f32(acc[r][h], vcvtq_f32_s32(dot[r][h]), scale);
      acc[r][h] = vfmsq_f32(acc[r][h], vld1q_f32(corr + 4 * h), qsum);
    }
  }
}

// The codes of k's 8g..8g+3 (`first`) and 8g+4..8g+7 (`second`) of register h
// (columns 4h..4h+3, 4 bytes a column) of group pair g of a block record, as
// int8: 4-bit codes are the low and high nibbles of one 64-byte group, 8-bit
// codes two groups, taken as q - 128 (XOR 0x80).
template <int kBits>
inline void load_codes(const uint8_t* rec, int g, int h, int8x16_t& first, int8x16_t& second) {
  if constexpr (kBits == 4) {
    const uint8x16_t v = vld1q_u8(rec + g * 64 + h * 16);
    first = vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F)));
    second = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
  } else {
    const uint8x16_t flip = vdupq_n_u8(0x80);
    first = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(rec + 2 * g * 64 + h * 16), flip));
    second = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(rec + (2 * g + 1) * 64 + h * 16), flip));
  }
}

// The level-4 driver loop of both kernels: panels p0..p1, rows in tiles of
// kRowTile (then the remainder), the code width as a constant. `tile` is
// `[&]<int kBits, int kRows>(const uint8_t* panel, int64_t p, size_t first_row)`.
template <int kRowTile, class Tile>
inline void for_each_l4_tile(const QGemmShape& s, size_t row_count, const uint8_t* packed,
                             int64_t p0, int64_t p1, Tile&& tile) {
  auto panels = [&]<int kBits>() {
    for (int64_t p = p0; p < p1; ++p) {
      const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
      for_each_row_tile<kRowTile>(
          row_count, [&]<int R>(size_t r) { tile.template operator()<kBits, R>(panel, p, r); });
    }
  };
  if (s.bits == 4) {
    panels.template operator()<4>();
  } else {
    panels.template operator()<8>();
  }
}

}  // namespace onnx_prepack::kernels
