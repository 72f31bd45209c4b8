// NEON variant of vec_half.h: 8 lanes per step, tails through the ref twin.
// float16: FCVTL / FCVTN (vcvt_f32_f16 / vcvt_f16_f32, Armv8-A baseline) round
// to nearest even in the default FPCR mode and keep a NaN's sign and top
// payload bits with the quiet bit set, which is what float_to_half and
// f16_to_f32_ref spell out (FPCR.DN and FZ are clear on Linux). bfloat16: the
// integer shifts and rounding of float_to_bfloat16.
#include <arm_neon.h>

#include "kernels/vec_math/vec_half.h"

namespace onnx_prepack::kernels::vec {

void f16_to_f32_neon(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t h = vld1q_u16(x + i);
    vst1q_f32(y + i, vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(h))));
    vst1q_f32(y + i + 4, vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(h))));
  }
  f16_to_f32_ref(x + i, y + i, n - i);
}

void f32_to_f16_neon(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x4_t lo = vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i)));
    const uint16x4_t hi = vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i + 4)));
    vst1q_u16(y + i, vcombine_u16(lo, hi));
  }
  f32_to_f16_ref(x + i, y + i, n - i);
}

void bf16_to_f32_neon(const uint16_t* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t b = vld1q_u16(x + i);
    vst1q_f32(y + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(b), 16)));
    vst1q_f32(y + i + 4, vreinterpretq_f32_u32(vshll_n_u16(vget_high_u16(b), 16)));
  }
  bf16_to_f32_ref(x + i, y + i, n - i);
}

namespace {

// float_to_bfloat16 of 4 lanes.
uint16x4_t to_bf16(float32x4_t f) {
  const uint32x4_t v = vreinterpretq_u32_f32(f);
  // Round to nearest even: add 0x7fff plus the lowest kept bit, keep the top half.
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(v, 16), vdupq_n_u32(1));
  const uint32x4_t rounded = vshrq_n_u32(vaddq_u32(v, vaddq_u32(lsb, vdupq_n_u32(0x7fff))), 16);
  // NaN: the top half with the quiet bit set.
  const uint32x4_t quiet = vorrq_u32(vshrq_n_u32(v, 16), vdupq_n_u32(0x40));
  const uint32x4_t is_nan =
      vcgtq_u32(vandq_u32(v, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
  return vmovn_u32(vbslq_u32(is_nan, quiet, rounded));  // < 2^16: exact
}

}  // namespace

void f32_to_bf16_neon(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    vst1q_u16(y + i, vcombine_u16(to_bf16(vld1q_f32(x + i)), to_bf16(vld1q_f32(x + i + 4))));
  f32_to_bf16_ref(x + i, y + i, n - i);
}

}  // namespace onnx_prepack::kernels::vec
