// NEON variant of vec_quant.h: 4 lanes (16 per step), the tail through the
// portable twin. min / max are compare-and-select (x < lo ? x : lo), not FMIN /
// FMAX, which would let a NaN element win; the quotient is IEEE (vdivq_f32)
// and rounded in the current mode (vrndiq_f32, FRINTI, = nearbyint), so the
// bits are vec_quant_ref.cc's.
#include <arm_neon.h>

#include "kernels/vec_math/vec_quant.h"

namespace onnx_prepack::kernels::vec {
namespace {

float32x4_t min_ps(float32x4_t a, float32x4_t b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
float32x4_t max_ps(float32x4_t a, float32x4_t b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }

// 4 quantized values as uint16 lanes in [0, 255].
uint16x4_t quantize4(float32x4_t x, float32x4_t s, float32x4_t zp) {
  float32x4_t q = vaddq_f32(vrndiq_f32(vdivq_f32(x, s)), zp);
  // max first: a NaN quotient becomes 0, as sat_u8 does.
  q = min_ps(max_ps(q, vdupq_n_f32(0.0f)), vdupq_n_f32(255.0f));
  return vmovn_u32(vcvtq_u32_f32(q));  // integral and in range: exact
}

}  // namespace

void f32_minmax_neon(const float* x, size_t n, float* lo, float* hi) {
  float32x4_t l[4], h[4];
  for (int k = 0; k < 4; ++k) {
    l[k] = vdupq_n_f32(*lo);
    h[k] = vdupq_n_f32(*hi);
  }
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int k = 0; k < 4; ++k) {
      const float32x4_t v = vld1q_f32(x + i + 4 * k);
      l[k] = min_ps(v, l[k]);
      h[k] = max_ps(v, h[k]);
    }
  }
  for (; i + 4 <= n; i += 4) {
    const float32x4_t v = vld1q_f32(x + i);
    l[0] = min_ps(v, l[0]);
    h[0] = max_ps(v, h[0]);
  }
  float lv[4], hv[4];
  vst1q_f32(lv, min_ps(min_ps(l[0], l[1]), min_ps(l[2], l[3])));
  vst1q_f32(hv, max_ps(max_ps(h[0], h[1]), max_ps(h[2], h[3])));
  float a = lv[0], b = hv[0];
  for (int k = 1; k < 4; ++k) {
    a = lv[k] < a ? lv[k] : a;
    b = hv[k] > b ? hv[k] : b;
  }
  *lo = a;
  *hi = b;
  if (i < n) f32_minmax_ref(x + i, n - i, lo, hi);
}

void f32_quantize_u8_neon(const float* x, uint8_t* y, size_t n, float scale, float zp) {
  if (scale == 0.0f) {
    f32_quantize_u8_ref(x, y, n, scale, zp);
    return;
  }
  const float32x4_t s = vdupq_n_f32(scale), z = vdupq_n_f32(zp);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const uint16x8_t ab =
        vcombine_u16(quantize4(vld1q_f32(x + i), s, z), quantize4(vld1q_f32(x + i + 4), s, z));
    const uint16x8_t cd =
        vcombine_u16(quantize4(vld1q_f32(x + i + 8), s, z), quantize4(vld1q_f32(x + i + 12), s, z));
    vst1q_u8(y + i, vcombine_u8(vmovn_u16(ab), vmovn_u16(cd)));
  }
  if (i < n) f32_quantize_u8_ref(x + i, y + i, n - i, scale, zp);
}

}  // namespace onnx_prepack::kernels::vec
