// NEON depthwise row kernel (f32_conv.h): 16 outputs in four q-register
// accumulators per step, every tap one broadcast and four loads, then 4 at a
// time and a scalar fused tail. vfmaq_f32(acc, w, x) is one fused multiply-add
// per element in tap order, as the ref kernel's std::fma chain, so both give the
// same bits.
#include <arm_neon.h>

#include <cmath>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void dw_row_neon(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                 float bias) {
  const float32x4_t b = vdupq_n_f32(bias);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float32x4_t a0 = b, a1 = b, a2 = b, a3 = b;
    for (size_t t = 0; t < taps; ++t) {
      const float32x4_t wv = vdupq_n_f32(w[t]);
      const float* p = src[t] + i;
      a0 = vfmaq_f32(a0, wv, vld1q_f32(p));
      a1 = vfmaq_f32(a1, wv, vld1q_f32(p + 4));
      a2 = vfmaq_f32(a2, wv, vld1q_f32(p + 8));
      a3 = vfmaq_f32(a3, wv, vld1q_f32(p + 12));
    }
    vst1q_f32(out + i, a0);
    vst1q_f32(out + i + 4, a1);
    vst1q_f32(out + i + 8, a2);
    vst1q_f32(out + i + 12, a3);
  }
  for (; i + 4 <= n; i += 4) {
    float32x4_t a0 = b;
    for (size_t t = 0; t < taps; ++t) a0 = vfmaq_f32(a0, vdupq_n_f32(w[t]), vld1q_f32(src[t] + i));
    vst1q_f32(out + i, a0);
  }
  for (; i < n; ++i) {
    float acc = bias;
    for (size_t t = 0; t < taps; ++t) acc = std::fma(w[t], src[t][i], acc);
    out[i] = acc;
  }
}

}  // namespace onnx_prepack::kernels
