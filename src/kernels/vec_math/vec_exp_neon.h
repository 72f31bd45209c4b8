// The one exp polynomial of the NEON variants (vec_math_neon.cc, vec_act_neon.cc): the
// operation sequence of exp_ref (vec_exp_ref.h) on 4 lanes, so both give the same bits.
// Also the x86 min / max semantics the ref twins spell out (min_ps, max_ps), because NEON's
// own FMIN / FMAX propagate NaN and order -0 below +0, and FMINNM / FMAXNM drop the NaN
// whatever its operand: neither is minps(a, b) = a < b ? a : b.
// Included by *_neon.cc translation units only (aarch64, cmake/isa.cmake); internal linkage
// keeps one copy per unit.
#pragma once

#include <arm_neon.h>

namespace onnx_prepack::kernels::vec {
namespace {

// a < b ? a : b and a > b ? a : b lane by lane: b when either is NaN, b for +-0 ties.
inline float32x4_t neon_min_ps(float32x4_t a, float32x4_t b) {
  return vbslq_f32(vcltq_f32(a, b), a, b);
}
inline float32x4_t neon_max_ps(float32x4_t a, float32x4_t b) {
  return vbslq_f32(vcgtq_f32(a, b), a, b);
}

// e^x for x <= 88 (clamped to 88 above); 0 below ln(2^-126); NaN stays NaN.
inline float32x4_t exp_neon(float32x4_t x) {
  const float32x4_t lo = vdupq_n_f32(-87.3365478515625f);
  const uint32x4_t under = vcltq_f32(x, lo);
  x = neon_max_ps(lo, neon_min_ps(vdupq_n_f32(88.0f), x));
  // Nearest even, as exp_ref's nearbyint in the default rounding mode (and AVX2's rounding).
  const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341f)));
  // vfmaq_f32(c, a, b) = fma(a, b, c).
  float32x4_t r = vfmaq_f32(x, n, vdupq_n_f32(-0.693145751953125f));
  r = vfmaq_f32(r, n, vdupq_n_f32(-1.42860682028622680e-06f));
  float32x4_t p = vdupq_n_f32(1.98412698412698413e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.38888888888888889e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.33333333333333333e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.16666666666666667e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.66666666666666667e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
  // n is integral in [-126, 127] (NaN converts to 0, and the NaN stays in p).
  const int32x4_t bits = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  const float32x4_t y = vmulq_f32(p, vreinterpretq_f32_s32(bits));
  return vbslq_f32(under, vdupq_n_f32(0.0f), y);
}

}  // namespace
}  // namespace onnx_prepack::kernels::vec
