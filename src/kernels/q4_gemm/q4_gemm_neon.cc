// NEON (Advanced SIMD) level-0 block-quantized microkernel (q4_gemm.h): float
// A times the packed codes widened to float, bitwise q_gemm_l0_ref.
//
// Tile: 2 rows x 1 panel (16 columns). A panel's 16 columns are the 4 int32
// lanes of each of a 64-byte group's four q registers, so column 4h + i is lane
// i of register h. Per row and register the ref's two chains (even k, odd k) are
// two q-register accumulators, and the running output a third: 2 rows x 4 x 3 =
// 24 accumulators, plus the 2 x 2 vectors of A for a group (4 k's each, taken by
// lane) and the code being widened: 30 of the 32 vector registers, more with the
// byte masks, so GCC -O3 spills a few (about 28 stack loads in the 4-bit tile's
// body); the bits do not depend on it.
//
// Float order, as the ref's: byte r of a lane holds k = 8g + r (low nibble) and
// 8g + 4 + r (high nibble) for 4-bit, k = 4g + r for 8-bit, so the parity of
// k is the parity of r, and taking the low nibbles before the high ones and the
// groups in order feeds each chain its k's in increasing order. Every step is
// FMLA by element (vfmaq_laneq_f32, one rounding like std::fma); then
// acc = fma(even + odd, s, acc) and acc = acc - corr * sum(a) fused (FMLS: the
// same bits as std::fma(-corr, sum, acc)). The bias is one float add.
#include <arm_neon.h>

#include "kernels/q4_gemm/q4_gemm.h"
#include "kernels/q4_gemm/q4_gemm_tile_neon.h"

namespace onnx_prepack::kernels {
namespace {

constexpr int kRowTile = 2;

// Byte kByte of every int32 lane, as float (exact: 0..255).
template <int kByte>
inline float32x4_t lane_byte(uint32x4_t w) {
  if constexpr (kByte == 3) {
    return vcvtq_f32_u32(vshrq_n_u32(w, 24));
  } else if constexpr (kByte == 0) {
    return vcvtq_f32_u32(vandq_u32(w, vdupq_n_u32(0xFF)));
  } else {
    return vcvtq_f32_u32(vandq_u32(vshrq_n_u32(w, 8 * kByte), vdupq_n_u32(0xFF)));
  }
}

// One register of codes (4 columns x 4 k's) into each row's two chains; a[r]
// holds the row's 4 A values of those k's.
template <int kRows>
inline void fma_codes(uint8x16_t codes, const float32x4_t (&a)[kRows], float32x4_t (&even)[kRows],
                      float32x4_t (&odd)[kRows]) {
  const uint32x4_t w = vreinterpretq_u32_u8(codes);
  const float32x4_t q0 = lane_byte<0>(w);
  for (int r = 0; r < kRows; ++r) even[r] = vfmaq_laneq_f32(even[r], q0, a[r], 0);
  const float32x4_t q1 = lane_byte<1>(w);
  for (int r = 0; r < kRows; ++r) odd[r] = vfmaq_laneq_f32(odd[r], q1, a[r], 1);
  const float32x4_t q2 = lane_byte<2>(w);
  for (int r = 0; r < kRows; ++r) even[r] = vfmaq_laneq_f32(even[r], q2, a[r], 2);
  const float32x4_t q3 = lane_byte<3>(w);
  for (int r = 0; r < kRows; ++r) odd[r] = vfmaq_laneq_f32(odd[r], q3, a[r], 3);
}

template <int kBits, int kRows>
void l0_tile(const QGemmShape& s, const QARow* rows, const uint8_t* panel, int64_t p, float* c,
             size_t ldc, const float* bias) {
  constexpr int kPerGroup = kBits == 4 ? 8 : 4;
  const int groups = s.block / kPerGroup;
  [[maybe_unused]] const uint8x16_t low4 = vdupq_n_u8(0x0F);
  float32x4_t acc[kRows][4];
  for (int r = 0; r < kRows; ++r) {
    for (int h = 0; h < 4; ++h) acc[r][h] = vdupq_n_f32(0.0f);
  }
  const uint8_t* rec = panel;
  for (int64_t kb = 0; kb < s.k_blocks(); ++kb, rec += s.record_bytes()) {
    float32x4_t even[4][kRows], odd[4][kRows];
    for (int h = 0; h < 4; ++h) {
      for (int r = 0; r < kRows; ++r) even[h][r] = odd[h][r] = vdupq_n_f32(0.0f);
    }
    for (int g = 0; g < groups; ++g) {
      const int64_t k = kb * s.block + g * kPerGroup;
      float32x4_t a_lo[kRows];
      for (int r = 0; r < kRows; ++r) a_lo[r] = vld1q_f32(rows[r].a + k);
      if constexpr (kBits == 4) {
        float32x4_t a_hi[kRows];
        for (int r = 0; r < kRows; ++r) a_hi[r] = vld1q_f32(rows[r].a + k + 4);
        for (int h = 0; h < 4; ++h) {
          const uint8x16_t v = vld1q_u8(rec + g * 64 + h * 16);
          fma_codes<kRows>(vandq_u8(v, low4), a_lo, even[h], odd[h]);
          fma_codes<kRows>(vshrq_n_u8(v, 4), a_hi, even[h], odd[h]);
        }
      } else {
        for (int h = 0; h < 4; ++h) {
          fma_codes<kRows>(vld1q_u8(rec + g * 64 + h * 16), a_lo, even[h], odd[h]);
        }
      }
    }
    const float* scales = reinterpret_cast<const float*>(rec + s.code_bytes());
    const float* corr = scales + kQPanel;
    for (int r = 0; r < kRows; ++r) {
      const float32x4_t asum = vdupq_n_f32(rows[r].a_sum[kb]);
      for (int h = 0; h < 4; ++h) {
        acc[r][h] =
            vfmaq_f32(acc[r][h], vaddq_f32(even[h][r], odd[h][r]), vld1q_f32(scales + 4 * h));
        acc[r][h] = vfmsq_f32(acc[r][h], vld1q_f32(corr + 4 * h), asum);
      }
    }
  }
  store_tile<kRows>(acc, s, p, c, ldc, bias);
}

template <int kBits>
void l0_panels(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
               int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
    size_t r = 0;
    for (; r + kRowTile <= row_count; r += kRowTile) {
      l0_tile<kBits, kRowTile>(s, rows + r, panel, p, c + r * ldc, ldc, bias);
    }
    if (r < row_count) l0_tile<kBits, 1>(s, rows + r, panel, p, c + r * ldc, ldc, bias);
  }
}

}  // namespace

void q_gemm_l0_neon(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
                    int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  if (s.bits == 4) {
    l0_panels<4>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  } else {
    l0_panels<8>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  }
}

}  // namespace onnx_prepack::kernels
