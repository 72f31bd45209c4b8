// NEON variants of vec_math.h: 4 lanes, the elementwise tails through the ref
// twin (vec_math_ref.cc) and the row tails through a padded 4-lane block. Every
// FMA is explicit (vfmaq_f32) and division is IEEE (vdivq_f32), so that the
// elementwise results match vec_math_ref.cc bit for bit; min / max are the
// x86 compare-and-select ones (vec_exp_neon.h), not FMIN / FMAX.
#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/vec_math/vec_exp_neon.h"
#include "kernels/vec_math/vec_math.h"

namespace onnx_prepack::kernels::vec {
namespace {

// The first n < 4 floats of p, the other lanes `fill`; and its inverse.
float32x4_t load_part(const float* p, size_t n, float fill) {
  float b[4] = {fill, fill, fill, fill};
  std::memcpy(b, p, n * sizeof(float));
  return vld1q_f32(b);
}
void store_part(float* p, size_t n, float32x4_t v) {
  float b[4];
  vst1q_f32(b, v);
  std::memcpy(p, b, n * sizeof(float));
}

constexpr uint32_t kLaneIndex[4] = {0, 1, 2, 3};

float32x4_t fma4(float32x4_t a, float32x4_t b, float c) {  // = fma(a, b, c)
  return vfmaq_f32(vdupq_n_f32(c), a, b);
}

// |t| with the sign of x.
float32x4_t copysign4(float32x4_t t, float32x4_t x) {
  return vbslq_f32(vdupq_n_u32(0x80000000u), x, t);
}

float32x4_t tanh4(float32x4_t x) {
  const float32x4_t ax = vabsq_f32(x);
  const float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t q = vdupq_n_f32(3.59212803657248102e-3f);
  q = fma4(q, x2, -8.86323552990219656e-3f);
  q = fma4(q, x2, 2.18694885361552028e-2f);
  q = fma4(q, x2, -5.39682539682539683e-2f);
  q = fma4(q, x2, 1.33333333333333333e-1f);
  q = fma4(q, x2, -3.33333333333333333e-1f);
  const float32x4_t small = vfmaq_f32(x, vmulq_f32(x, x2), q);
  const float32x4_t e = exp_neon(vmulq_f32(vdupq_n_f32(-2.0f), neon_min_ps(vdupq_n_f32(9.0f), ax)));
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t t = vdivq_f32(vsubq_f32(one, e), vaddq_f32(one, e));
  const float32x4_t large = copysign4(t, x);
  return vbslq_f32(vcltq_f32(ax, vdupq_n_f32(0.375f)), small, large);
}

float32x4_t erf4(float32x4_t x) {
  const float32x4_t ax = vabsq_f32(x);
  const float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t q = vdupq_n_f32(1.64621143658892462e-6f);
  q = fma4(q, x2, -1.49256503584062500e-5f);
  q = fma4(q, x2, 1.20553329817896643e-4f);
  q = fma4(q, x2, -8.54832702345085085e-4f);
  q = fma4(q, x2, 5.22397762544218797e-3f);
  q = fma4(q, x2, -2.68661706451312525e-2f);
  q = fma4(q, x2, 1.12837916709551257e-1f);
  q = fma4(q, x2, -3.76126389031837538e-1f);
  q = fma4(q, x2, 1.12837916709551257f);
  const float32x4_t small = vmulq_f32(x, q);
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t t = vdivq_f32(one, fma4(vdupq_n_f32(0.3275911f), ax, 1.0f));
  float32x4_t p = vdupq_n_f32(1.061405429f);
  p = fma4(p, t, -1.453152027f);
  p = fma4(p, t, 1.421413741f);
  p = fma4(p, t, -0.284496736f);
  p = fma4(p, t, 0.254829592f);
  p = vmulq_f32(p, t);
  const float32x4_t e = exp_neon(vnegq_f32(x2));  // exp_ref(-x2)
  // fma(-p, e, 1) = 1 - p e in one rounding: vfmsq_f32(1, p, e).
  const float32x4_t large = copysign4(vfmsq_f32(one, p, e), x);
  return vbslq_f32(vcltq_f32(ax, vdupq_n_f32(0.75f)), small, large);
}

float32x4_t gelu4(float32x4_t v) {
  const float32x4_t e = erf4(vmulq_f32(v, vdupq_n_f32(0.707106781186547524f)));
  return vmulq_f32(vmulq_f32(vdupq_n_f32(0.5f), v), vaddq_f32(vdupq_n_f32(1.0f), e));
}

float32x4_t gelu_tanh4(float32x4_t v) {
  const float32x4_t v3 = vmulq_f32(vmulq_f32(v, v), v);
  const float32x4_t u =
      vmulq_f32(vdupq_n_f32(0.797884560802865356f), vfmaq_f32(v, vdupq_n_f32(0.044715f), v3));
  return vmulq_f32(vmulq_f32(vdupq_n_f32(0.5f), v), vaddq_f32(vdupq_n_f32(1.0f), tanh4(u)));
}

float32x4_t op4(int op, float32x4_t a, float32x4_t b) {
  switch (op) {
    case kAdd:
      return vaddq_f32(a, b);
    case kSub:
      return vsubq_f32(a, b);
    case kMul:
      return vmulq_f32(a, b);
    default:
      return vdivq_f32(a, b);
  }
}

void unary(float32x4_t (*f)(float32x4_t), void (*ref)(const float*, float*, size_t), const float* x,
           float* y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, f(vld1q_f32(x + i)));
  if (i < n) ref(x + i, y + i, n - i);
}

}  // namespace

void f32_binary_neon(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                     size_t n) {
  if (n == 0) return;
  const float32x4_t av = vdupq_n_f32(a[0]), bv = vdupq_n_f32(b[0]);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t x = sa ? vld1q_f32(a + i) : av;
    const float32x4_t y = sb ? vld1q_f32(b + i) : bv;
    vst1q_f32(o + i, op4(op, x, y));
  }
  if (i < n) f32_binary_ref(op, a + i * sa, sa, b + i * sb, sb, o + i, n - i);
}

void f32_erf_neon(const float* x, float* y, size_t n) { unary(erf4, f32_erf_ref, x, y, n); }
void f32_exp_neon(const float* x, float* y, size_t n) { unary(exp_neon, f32_exp_ref, x, y, n); }
void f32_tanh_neon(const float* x, float* y, size_t n) { unary(tanh4, f32_tanh_ref, x, y, n); }
void f32_gelu_neon(const float* x, float* y, size_t n) { unary(gelu4, f32_gelu_ref, x, y, n); }
void f32_gelu_tanh_neon(const float* x, float* y, size_t n) {
  unary(gelu_tanh4, f32_gelu_tanh_ref, x, y, n);
}

void f32_softmax_rows_neon(const float* x, float* y, size_t rows, size_t len) {
  const size_t full = len / 4 * 4, rest = len - full;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    float32x4_t mx = vdupq_n_f32(-INFINITY);
    for (size_t j = 0; j < full; j += 4) mx = neon_max_ps(mx, vld1q_f32(xr + j));
    if (rest) mx = neon_max_ps(mx, load_part(xr + full, rest, -INFINITY));
    // Halving steps with the same compare-and-select max.
    const float32x2_t m2 = vget_low_f32(neon_max_ps(mx, vextq_f32(mx, mx, 2)));
    const float m01 = vget_lane_f32(m2, 0), m1 = vget_lane_f32(m2, 1);
    const float32x4_t m = vdupq_n_f32(m01 > m1 ? m01 : m1);
    float32x4_t sum = vdupq_n_f32(0.0f);
    for (size_t j = 0; j < full; j += 4) {
      const float32x4_t e = exp_neon(vsubq_f32(vld1q_f32(xr + j), m));
      vst1q_f32(yr + j, e);
      sum = vaddq_f32(sum, e);
    }
    float32x4_t et = vdupq_n_f32(0.0f);
    if (rest) {
      // Padding -inf - m gives e = 0, so the padded lanes add nothing.
      et = exp_neon(vsubq_f32(load_part(xr + full, rest, -INFINITY), m));
      sum = vaddq_f32(sum, et);
    }
    const float32x4_t inv = vdupq_n_f32(1.0f / vaddvq_f32(sum));
    for (size_t j = 0; j < full; j += 4) vst1q_f32(yr + j, vmulq_f32(vld1q_f32(yr + j), inv));
    if (rest) store_part(yr + full, rest, vmulq_f32(et, inv));
  }
}

void f32_layer_norm_rows_neon(const float* x, const float* scale, const float* bias, float* y,
                              float* mean, float* inv_std, size_t rows, size_t len, float eps) {
  const size_t full = len / 4 * 4, rest = len - full;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
    size_t j = 0;
    for (; j + 8 <= full; j += 8) {
      s0 = vaddq_f32(s0, vld1q_f32(xr + j));
      s1 = vaddq_f32(s1, vld1q_f32(xr + j + 4));
    }
    for (; j < full; j += 4) s0 = vaddq_f32(s0, vld1q_f32(xr + j));
    if (rest) s1 = vaddq_f32(s1, load_part(xr + full, rest, 0.0f));
    const float mu = vaddvq_f32(vaddq_f32(s0, s1)) / float(len);
    const float32x4_t muv = vdupq_n_f32(mu);
    s0 = vdupq_n_f32(0.0f);
    s1 = s0;
    for (j = 0; j + 8 <= full; j += 8) {
      const float32x4_t d0 = vsubq_f32(vld1q_f32(xr + j), muv);
      const float32x4_t d1 = vsubq_f32(vld1q_f32(xr + j + 4), muv);
      s0 = vfmaq_f32(s0, d0, d0);
      s1 = vfmaq_f32(s1, d1, d1);
    }
    for (; j < full; j += 4) {
      const float32x4_t d = vsubq_f32(vld1q_f32(xr + j), muv);
      s0 = vfmaq_f32(s0, d, d);
    }
    if (rest) {
      // Padding with 0 and masking the differences: the padded lanes add +0.
      const uint32x4_t live = vcltq_u32(vld1q_u32(kLaneIndex), vdupq_n_u32(uint32_t(rest)));
      const float32x4_t d = vreinterpretq_f32_u32(
          vandq_u32(live, vreinterpretq_u32_f32(vsubq_f32(load_part(xr + full, rest, 0.0f), muv))));
      s1 = vfmaq_f32(s1, d, d);
    }
    const float var = vaddvq_f32(vaddq_f32(s0, s1)) / float(len);
    const float inv = 1.0f / std::sqrt(var + eps);
    if (mean) mean[r] = mu;
    if (inv_std) inv_std[r] = inv;
    const float32x4_t iv = vdupq_n_f32(inv);
    for (j = 0; j < full; j += 4) {
      const float32x4_t v = vmulq_f32(vsubq_f32(vld1q_f32(xr + j), muv), iv);
      const float32x4_t s = vld1q_f32(scale + j);
      vst1q_f32(yr + j, bias ? vfmaq_f32(vld1q_f32(bias + j), v, s) : vmulq_f32(v, s));
    }
    if (rest) {
      const float32x4_t v = vmulq_f32(vsubq_f32(load_part(xr + full, rest, 0.0f), muv), iv);
      const float32x4_t s = load_part(scale + full, rest, 0.0f);
      store_part(yr + full, rest,
                 bias ? vfmaq_f32(load_part(bias + full, rest, 0.0f), v, s) : vmulq_f32(v, s));
    }
  }
}

}  // namespace onnx_prepack::kernels::vec
