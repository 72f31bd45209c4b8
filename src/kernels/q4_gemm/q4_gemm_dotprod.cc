// Armv8.2 dot-product level-4 block-quantized microkernel (q4_gemm.h): int8 A
// against the packed codes with SDOT by element, bitwise q_gemm_l4_ref.
//
// Tile: 4 rows x 1 panel (16 columns). A 64-byte group of codes is four q
// registers, register h holding columns 4h..4h+3 as int32 lanes of 4 bytes (4
// k's each), which is exactly SDOT's layout: vdotq_lane_s32(acc, codes, qa, l)
// adds to lane i the dot of its 4 bytes with bytes 4l..4l+3 of qa, the same 4
// k's for every column. Per block: 16 int32 accumulators (4 rows x 4
// registers), a group's 4 rows of A (8 bytes each, one d register), the code
// register and its two nibble halves: 23 registers; the 16 float accumulators
// of the running output take the rest and are touched once per block (at
// 4 rows GCC -O3 keeps part of them on the stack: about 12 q-register reloads
// in the 4-bit tile, 20 in the 8-bit one).
//
// Exactness: 4-bit codes 0..15 are valid int8, so SDOT's products and sums are
// the ref's int32 dot. 8-bit codes 0..255 are not: the kernel takes q - 128
// (the code XOR 0x80, a valid int8) and adds back 128 * sum(qa) of the block,
// an exact integer identity (|dot| < 2^23, no wrap). The float epilogue is the
// ref's: acc = fma(float(dot), s * sa, acc) (SCVTF rounds to nearest like the
// C++ conversion), acc = acc - corr * (sa * sum(qa)) fused (FMLS, the bits of
// std::fma(-corr, qsum, acc)); the bias is one float add.
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
  const int pairs = s.block / 8;  // 8 k's: one 4-bit group, two 8-bit groups
  float32x4_t acc[kRows][4];
  for (int r = 0; r < kRows; ++r) {
    for (int h = 0; h < 4; ++h) acc[r][h] = vdupq_n_f32(0.0f);
  }
  const uint8_t* rec = panel;
  for (int64_t kb = 0; kb < s.k_blocks(); ++kb, rec += s.record_bytes()) {
    int32x4_t dot[kRows][4];
    for (int r = 0; r < kRows; ++r) {
      for (int h = 0; h < 4; ++h) dot[r][h] = vdupq_n_s32(0);
    }
    const int64_t k0 = kb * s.block;
    for (int g = 0; g < pairs; ++g) {
      int8x8_t qa[kRows];  // k0 + 8g .. k0 + 8g + 7 of each row
      for (int r = 0; r < kRows; ++r) qa[r] = vld1_s8(rows[r].qa + k0 + 8 * g);
      for (int h = 0; h < 4; ++h) {
        int8x16_t first, second;  // codes of bytes 0..3 and 4..7 of qa
        load_codes<kBits>(rec, g, h, first, second);
        for (int r = 0; r < kRows; ++r) {
          dot[r][h] = vdotq_lane_s32(dot[r][h], first, qa[r], 0);
          dot[r][h] = vdotq_lane_s32(dot[r][h], second, qa[r], 1);
        }
      }
    }
    add_block_dots<kBits, kRows>(s, rows, kb, rec, dot, acc);
  }
  store_tile<kRows>(acc, s, p, c, ldc, bias);
}

}  // namespace

void q_gemm_l4_dotprod(const QGemmShape& s, const QARow* rows, size_t row_count,
                       const uint8_t* packed, int64_t p0, int64_t p1, float* c, size_t ldc,
                       const float* bias) {
  for_each_l4_tile<kRowTile>(s, row_count, packed, p0, p1,
                             [&]<int kBits, int R>(const uint8_t* panel, int64_t p, size_t r) {
                               l4_tile<kBits, R>(s, rows + r, panel, p, c + r * ldc, ldc, bias);
                             });
}

}  // namespace onnx_prepack::kernels
