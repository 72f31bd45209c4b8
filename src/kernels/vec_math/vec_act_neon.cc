// NEON variant of vec_act.h: 4 lanes, the tail through the ref twin; the same
// operation sequence as vec_act_ref.cc (explicit FMAs, IEEE division, the x86
// min / max operand order of vec_exp_neon.h), so the same bits.
#include <arm_neon.h>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_exp_neon.h"

namespace onnx_prepack::kernels::vec {
namespace {

// x + x where x is NaN (ref's early return), y elsewhere.
float32x4_t keep_nan(float32x4_t x, float32x4_t y) {
  return vbslq_f32(vceqq_f32(x, x), y, vaddq_f32(x, x));
}

template <int op>
float32x4_t act(float32x4_t x, float32x4_t p0, float32x4_t p1) {
  const float32x4_t zero = vdupq_n_f32(0.0f), one = vdupq_n_f32(1.0f);
  if constexpr (op == kActClip) return neon_min_ps(p1, neon_max_ps(p0, x));
  if constexpr (op == kActHardSigmoid)
    return neon_max_ps(zero, neon_min_ps(one, vfmaq_f32(p1, p0, x)));
  if constexpr (op == kActHardSwish) {
    const float32x4_t h = vfmaq_f32(vdupq_n_f32(0.5f), x, vdupq_n_f32(1.0f / 6.0f));
    return vmulq_f32(x, neon_max_ps(zero, neon_min_ps(one, h)));
  }
  if constexpr (op == kActLeakyRelu) return vbslq_f32(vcgeq_f32(x, zero), x, vmulq_f32(x, p0));
  if constexpr (op == kActExp) {
    const uint32x4_t big = vcgtq_f32(x, vdupq_n_f32(88.0f));
    float32x4_t y = exp_neon(x);
    if (vmaxvq_u32(big)) {  // e^(x - 88) e^88 past the polynomial's clamp
      const float32x4_t hi = vmulq_f32(exp_neon(vsubq_f32(x, vdupq_n_f32(88.0f))),
                                       vdupq_n_f32(1.6516362549940018e38f));
      y = vbslq_f32(big, hi, y);
    }
    return keep_nan(x, y);
  }
  if constexpr (op == kActSigmoid) {
    const float32x4_t e = exp_neon(vnegq_f32(vabsq_f32(x)));  // exp_ref(-|x|)
    const float32x4_t inv = vdivq_f32(one, vaddq_f32(one, e));
    return keep_nan(x, vbslq_f32(vcgeq_f32(x, zero), inv, vmulq_f32(e, inv)));
  }
  return x;
}

template <int op>
void run(const float* x, float* y, size_t n, float p0, float p1) {
  const float32x4_t a = vdupq_n_f32(p0), b = vdupq_n_f32(p1);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, act<op>(vld1q_f32(x + i), a, b));
  if (i < n) f32_act_ref(op, x + i, y + i, n - i, p0, p1);
}

}  // namespace

void f32_act_neon(int op, const float* x, float* y, size_t n, float p0, float p1) {
  const bool vectorised = with_act_op(op, [&]<int kOp>() { run<kOp>(x, y, n, p0, p1); });
  if (!vectorised) f32_act_ref(op, x, y, n, p0, p1);
}

}  // namespace onnx_prepack::kernels::vec
