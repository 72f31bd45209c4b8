// NEON variant of vec_requant.h: 8 lanes per step (two q registers), the tail
// by the ref twin; the operation sequence of requant_value (compare-and-select
// clamps, so NaN becomes lo as with maxps, and FRINTI: nearbyint in the
// current mode), so the bits of vec_requant_ref.cc.
#include <arm_neon.h>

#include "kernels/vec_math/vec_requant.h"

namespace onnx_prepack::kernels::vec {
namespace {

// requant_value of 4 wrapped sums, as int32 lanes in [lo, hi].
int32x4_t requant4(int32x4_t a, float32x4_t mult, float32x4_t vlo, float32x4_t vhi, int32x4_t zp) {
  float32x4_t v = vmulq_f32(vcvtq_f32_s32(a), mult);
  v = vbslq_f32(vcgtq_f32(v, vlo), v, vlo);  // = maxps(v, vlo)
  v = vbslq_f32(vcltq_f32(v, vhi), v, vhi);  // = minps(v, vhi)
  return vaddq_s32(vcvtq_s32_f32(vrndiq_f32(v)), zp);
}

}  // namespace

void requant_row_neon(const int32_t* c, const int32_t* bias, const float* mult, size_t n,
                      int32_t zp, bool y_signed, uint8_t* y) {
  const int32_t lo = y_signed ? -128 : 0, hi = y_signed ? 127 : 255;
  const float32x4_t vlo = vdupq_n_f32(float(lo - zp)), vhi = vdupq_n_f32(float(hi - zp));
  const int32x4_t z = vdupq_n_s32(zp);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    int32x4_t a0 = vld1q_s32(c + j), a1 = vld1q_s32(c + j + 4);
    if (bias) {  // vaddq_s32 wraps, as the ref's unsigned sum
      a0 = vaddq_s32(a0, vld1q_s32(bias + j));
      a1 = vaddq_s32(a1, vld1q_s32(bias + j + 4));
    }
    const int32x4_t q0 = requant4(a0, vld1q_f32(mult + j), vlo, vhi, z);
    const int32x4_t q1 = requant4(a1, vld1q_f32(mult + j + 4), vlo, vhi, z);
    // The low byte of each lane (the values lie in [-128, 255]): int8 or uint8 bits.
    const int16x8_t h = vcombine_s16(vmovn_s32(q0), vmovn_s32(q1));
    vst1_u8(y + j, vreinterpret_u8_s8(vmovn_s16(h)));
  }
  if (j < n)
    requant_row_ref(c + j, bias ? bias + j : nullptr, mult + j, n - j, zp, y_signed, y + j);
}

}  // namespace onnx_prepack::kernels::vec
