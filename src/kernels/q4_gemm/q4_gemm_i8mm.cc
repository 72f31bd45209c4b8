// Armv8.6 i8mm level-4 block-quantized microkernel (q4_gemm.h): int8 A against
// the packed codes with SMMLA, bitwise q_gemm_l4_ref. It reads the same panels
// as the dot-product kernel (q4_gemm_dotprod.cc; format q4/q8_gemm_b_panel16_
// aarch64), so an i8mm CPU uses the dotprod-level entries as they are.
//
// SMMLA (vmmlaq_s32(acc, a, b)) adds the 2x2 products of a 2x8 int8 matrix a
// (two rows of A, 8 k's each) and the transpose of a 2x8 b (two columns, 8 k's
// each): acc = {r0.c0, r0.c1, r1.c0, r1.c1}. In the panel, register h of a
// group holds columns 4h..4h+3 as 4-byte lanes with k's 0..3 (`first`) and
// 4..7 (`second`), so zipping the 32-bit lanes of first and second gives
// columns (4h, 4h+1) and (4h+2, 4h+3) with their 8 k's contiguous: SMMLA's b.
// Tile: 4 rows (2 row pairs) x 16 columns, 16 int32 accumulators as in the
// dot-product kernel; an odd row count pairs its last row with zeros. Per
// block the 2x2 tiles are turned back into rows of 4 columns (ZIP1/ZIP2 on
// 64-bit lanes) and go through the dot-product kernel's exact float update
// (q4_gemm_block_dotprod.h): the int32 sums are the same integers whatever
// the order of the products, so the bits are the ref's.
#include <arm_neon.h>

#include "kernels/q4_gemm/q4_gemm.h"
#include "kernels/q4_gemm/q4_gemm_block_dotprod.h"
#include "kernels/q4_gemm/q4_gemm_tile_neon.h"

namespace onnx_prepack::kernels {
namespace {

constexpr int kRowTile = 4;

template <int kBits, int kRows>
void l4_tile(const QGemmShape& s, const QARow* rows, const uint8_t* panel, int64_t p, float* c,
             size_t ldc, const float* bias) {
  constexpr int kPairs = (kRows + 1) / 2;
  const int groups = s.block / 8;  // 8 k's: one 4-bit group, two 8-bit groups
  float32x4_t acc[kRows][4];
  for (int r = 0; r < kRows; ++r) {
    for (int h = 0; h < 4; ++h) acc[r][h] = vdupq_n_f32(0.0f);
  }
  const uint8_t* rec = panel;
  for (int64_t kb = 0; kb < s.k_blocks(); ++kb, rec += s.record_bytes()) {
    int32x4_t mm[kPairs][4][2];  // row pair q, register h, columns (4h, 4h+1) / (4h+2, 4h+3)
    for (int q = 0; q < kPairs; ++q) {
      for (int h = 0; h < 4; ++h) mm[q][h][0] = mm[q][h][1] = vdupq_n_s32(0);
    }
    const int64_t k0 = kb * s.block;
    for (int g = 0; g < groups; ++g) {
      int8x16_t a[kPairs];  // rows 2q and 2q + 1, k0 + 8g .. k0 + 8g + 7
      for (int q = 0; q < kPairs; ++q) {
        const int8x8_t lo = vld1_s8(rows[2 * q].qa + k0 + 8 * g);
        const int8x8_t hi =
            2 * q + 1 < kRows ? vld1_s8(rows[2 * q + 1].qa + k0 + 8 * g) : vdup_n_s8(0);
        a[q] = vcombine_s8(lo, hi);
      }
      for (int h = 0; h < 4; ++h) {
        int8x16_t first, second;
        load_codes<kBits>(rec, g, h, first, second);
        const int32x4_t f = vreinterpretq_s32_s8(first), n = vreinterpretq_s32_s8(second);
        const int8x16_t b01 = vreinterpretq_s8_s32(vzip1q_s32(f, n));
        const int8x16_t b23 = vreinterpretq_s8_s32(vzip2q_s32(f, n));
        for (int q = 0; q < kPairs; ++q) {
          mm[q][h][0] = vmmlaq_s32(mm[q][h][0], a[q], b01);
          mm[q][h][1] = vmmlaq_s32(mm[q][h][1], a[q], b23);
        }
      }
    }
    int32x4_t dot[kRows][4];
    for (int q = 0; q < kPairs; ++q) {
      for (int h = 0; h < 4; ++h) {
        const int64x2_t x = vreinterpretq_s64_s32(mm[q][h][0]);  // r0.c0 r0.c1 | r1.c0 r1.c1
        const int64x2_t y = vreinterpretq_s64_s32(mm[q][h][1]);  // r0.c2 r0.c3 | r1.c2 r1.c3
        dot[2 * q][h] = vreinterpretq_s32_s64(vzip1q_s64(x, y));
        if (2 * q + 1 < kRows) dot[2 * q + 1][h] = vreinterpretq_s32_s64(vzip2q_s64(x, y));
      }
    }
    add_block_dots<kBits, kRows>(s, rows, kb, rec, dot, acc);
  }
  store_tile<kRows>(acc, s, p, c, ldc, bias);
}

}  // namespace

void q_gemm_l4_i8mm(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
                    int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  for_each_l4_tile<kRowTile>(s, row_count, packed, p0, p1,
                             [&]<int kBits, int R>(const uint8_t* panel, int64_t p, size_t r) {
                               l4_tile<kBits, R>(s, rows + r, panel, p, c + r * ldc, ldc, bias);
                             });
}

}  // namespace onnx_prepack::kernels
