// The epilogue of the aarch64 int8 GEMM kernels (i8_gemm_dotprod.cc, i8_gemm_i8mm.cc): one row
// of 16 columns of a panel from its int32 dot products, i8_gemm.h's
//   C = dot + colsum(b') (a_offset - za') + zb' (za' K - rowsum(u))   (mod 2^32)
// where dot is sum_k (u - a_offset) b' (a_offset 128 for SDOT's u - 128, 0 for USMMLA's u), then
// the optional float epilogue in the ref's operations and order: SCVTF (round to nearest), FMUL
// by the (row x column rounded) multiplier, FADD of the bias in the caller's operand order, Relu
// as the select `y < 0 ? 0 : y`. Included only by those aarch64 units (internal linkage).
#pragma once

#include <arm_neon.h>

#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// Column terms of one panel: its stored column sums and zb' of its 16 columns.
struct NeonPanelTerms {
  uint32x4_t cs[4], zb[4];
};

inline NeonPanelTerms neon_panel_terms(const I8GemmShape& s, const I8Tile& t, const uint8_t* panel,
                                       size_t n0) {
  NeonPanelTerms p;
  const size_t groups = size_t(s.k_groups());
  for (int q = 0; q < 4; ++q) {
    int32_t tmp[4];
    std::memcpy(tmp, panel + groups * 64 + size_t(q) * 16, 16);
    p.cs[q] = vreinterpretq_u32_s32(vld1q_s32(tmp));
    p.zb[q] = vreinterpretq_u32_s32(vld1q_s32(t.col_zb + n0 + size_t(q) * 4));
  }
  return p;
}

// Row r of the tile, columns [n0, n0 + cols) (cols <= 16), from its 16 dot products.
inline void neon_epilogue_row(const I8GemmShape& s, const I8Tile& t, const NeonPanelTerms& p,
                              size_t r, size_t n0, size_t cols, const int32x4_t dot[4],
                              uint32_t a_offset) {
  const uint32_t za = uint32_t(t.row_za[r]);
  const uint32_t cs_mult = a_offset - za;
  const uint32_t zb_mult = za * uint32_t(s.K) - uint32_t(t.row_sum[r]);
  uint32x4_t v[4];
  for (int q = 0; q < 4; ++q) {
    v[q] = vmlaq_n_u32(vreinterpretq_u32_s32(dot[q]), p.cs[q], cs_mult);
    v[q] = vmlaq_n_u32(v[q], p.zb[q], zb_mult);
  }
  if (t.col_scale == nullptr) {
    int32_t* c = t.c + r * t.ldc + n0;
    if (cols == size_t(kI8Panel)) {
      for (int q = 0; q < 4; ++q) vst1q_s32(c + q * 4, vreinterpretq_s32_u32(v[q]));
    } else {
      int32_t tmp[kI8Panel];
      for (int q = 0; q < 4; ++q) vst1q_s32(tmp + q * 4, vreinterpretq_s32_u32(v[q]));
      std::memcpy(c, tmp, cols * 4);
    }
    return;
  }
  float32x4_t y[4];
  const float32x4_t zero = vdupq_n_f32(0.0f);
  for (int q = 0; q < 4; ++q) {
    float32x4_t mult = vld1q_f32(t.col_scale + n0 + size_t(q) * 4);
    if (t.row_scale != nullptr) mult = vmulq_n_f32(mult, t.row_scale[r]);
    y[q] = vmulq_f32(vcvtq_f32_s32(vreinterpretq_s32_u32(v[q])), mult);
    if (t.col_bias != nullptr) {
      const float32x4_t bias = vld1q_f32(t.col_bias + n0 + size_t(q) * 4);
      y[q] = t.bias_first ? vaddq_f32(bias, y[q]) : vaddq_f32(y[q], bias);
    }
    if (t.relu) y[q] = vbslq_f32(vcltq_f32(y[q], zero), zero, y[q]);
  }
  float* cf = t.cf + r * t.ldc + n0;
  if (cols == size_t(kI8Panel)) {
    for (int q = 0; q < 4; ++q) vst1q_f32(cf + q * 4, y[q]);
  } else {
    float tmp[kI8Panel];
    for (int q = 0; q < 4; ++q) vst1q_f32(tmp + q * 4, y[q]);
    std::memcpy(cf, tmp, cols * 4);
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels
