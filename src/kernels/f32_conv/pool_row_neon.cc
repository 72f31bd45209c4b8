// NEON pooling row kernels (f32_conv.h): 8 outputs per step for strides 1 and 2
// (stride 2 de-interleaves with LD2), scalar otherwise and in the tail. The max
// keeps the ref kernel's update `x > best ? x : best` as a compare and a bit
// select (vmaxq_f32 would propagate a later NaN, which the ref skips); the
// average sums in double, 2 lanes a register, in the ref kernel's tap order and
// divides there, so both give the same bits.
#include <arm_neon.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

// Eight floats from p with stride S, as two q registers; stride 2 reads p[0..16).
template <size_t S>
inline float32x4x2_t load8(const float* p) {
  if constexpr (S == 1) {
    return {{vld1q_f32(p), vld1q_f32(p + 4)}};
  } else {
    return {{vld2q_f32(p).val[0], vld2q_f32(p + 8).val[0]}};
  }
}

inline float32x4_t max_update(float32x4_t best, float32x4_t v) {
  return vbslq_f32(vcgtq_f32(v, best), v, best);
}

template <size_t S>
size_t max_rows(float* out, size_t n, const float* const* src, size_t rows, size_t kw) {
  // Stride 2 reads one float past the last tap: stop a step early.
  const size_t end = S == 1 ? n : (n > 0 ? n - 1 : 0);
  size_t j = 0;
  for (; j + 8 <= end; j += 8) {
    float32x4x2_t best = load8<S>(src[0] + j * S);
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = (r == 0 ? 1 : 0); k < kw; ++k) {
        const float32x4x2_t v = load8<S>(p + k);
        best.val[0] = max_update(best.val[0], v.val[0]);
        best.val[1] = max_update(best.val[1], v.val[1]);
      }
    }
    vst1q_f32(out + j, best.val[0]);
    vst1q_f32(out + j + 4, best.val[1]);
  }
  return j;
}

template <size_t S>
size_t avg_rows(float* out, size_t n, const float* const* src, size_t rows, size_t kw, double div) {
  const size_t end = S == 1 ? n : (n > 0 ? n - 1 : 0);
  const float64x2_t d = vdupq_n_f64(div);
  size_t j = 0;
  for (; j + 8 <= end; j += 8) {
    float64x2_t s[4] = {vdupq_n_f64(0.0), vdupq_n_f64(0.0), vdupq_n_f64(0.0), vdupq_n_f64(0.0)};
    for (size_t r = 0; r < rows; ++r) {
      const float* p = src[r] + j * S;
      for (size_t k = 0; k < kw; ++k) {
        const float32x4x2_t v = load8<S>(p + k);
        s[0] = vaddq_f64(s[0], vcvt_f64_f32(vget_low_f32(v.val[0])));
        s[1] = vaddq_f64(s[1], vcvt_high_f64_f32(v.val[0]));
        s[2] = vaddq_f64(s[2], vcvt_f64_f32(vget_low_f32(v.val[1])));
        s[3] = vaddq_f64(s[3], vcvt_high_f64_f32(v.val[1]));
      }
    }
    vst1q_f32(out + j, vcvt_high_f32_f64(vcvt_f32_f64(vdivq_f64(s[0], d)), vdivq_f64(s[1], d)));
    vst1q_f32(out + j + 4, vcvt_high_f32_f64(vcvt_f32_f64(vdivq_f64(s[2], d)), vdivq_f64(s[3], d)));
  }
  return j;
}

}  // namespace

void max_pool_row_neon(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride) {
  size_t j = 0;
  if (stride == 1) j = max_rows<1>(out, n, src, rows, kw);
  if (stride == 2) j = max_rows<2>(out, n, src, rows, kw);
  max_pool_cols_ref(out, j, n, src, rows, kw, stride);
}

void avg_pool_row_neon(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride, double div) {
  size_t j = 0;
  if (stride == 1) j = avg_rows<1>(out, n, src, rows, kw, div);
  if (stride == 2) j = avg_rows<2>(out, n, src, rows, kw, div);
  avg_pool_cols_ref(out, j, n, src, rows, kw, stride, div);
}

}  // namespace onnx_prepack::kernels
