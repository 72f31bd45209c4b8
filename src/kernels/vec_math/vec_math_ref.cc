// Portable twin of vec_math_avx2.cc / vec_math_avx512.cc / vec_math_neon.cc: the same operation
// sequence per element (std::fma where they use an FMA), so the elementwise
// results are bit-identical; the tests' oracle and the fallback without AVX2.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/vec_math/vec_exp_ref.h"
#include "kernels/vec_math/vec_math.h"

namespace onnx_prepack::kernels::vec {

static float ref_min(float a, float b) { return a < b ? a : b; }  // = minps(a, b)
static float ref_max(float a, float b) { return a > b ? a : b; }  // = maxps(a, b)

static float ref_tanh(float x) {
  const float ax = std::fabs(x);
  // |x| < 0.375: x + x^3 (T3 + x^2 (T5 + ...)).
  const float x2 = x * x;
  float q = 3.59212803657248102e-3f;
  q = std::fma(q, x2, -8.86323552990219656e-3f);
  q = std::fma(q, x2, 2.18694885361552028e-2f);
  q = std::fma(q, x2, -5.39682539682539683e-2f);
  q = std::fma(q, x2, 1.33333333333333333e-1f);
  q = std::fma(q, x2, -3.33333333333333333e-1f);
  const float small = std::fma(x * x2, q, x);
  const float e = exp_ref(-2.0f * ref_min(9.0f, ax));
  const float t = (1.0f - e) / (1.0f + e);
  const float large = std::copysign(t, x);
  return ax < 0.375f ? small : large;
}

static float ref_erf(float x) {
  const float ax = std::fabs(x);
  const float x2 = x * x;
  float q = 1.64621143658892462e-6f;
  q = std::fma(q, x2, -1.49256503584062500e-5f);
  q = std::fma(q, x2, 1.20553329817896643e-4f);
  q = std::fma(q, x2, -8.54832702345085085e-4f);
  q = std::fma(q, x2, 5.22397762544218797e-3f);
  q = std::fma(q, x2, -2.68661706451312525e-2f);
  q = std::fma(q, x2, 1.12837916709551257e-1f);
  q = std::fma(q, x2, -3.76126389031837538e-1f);
  q = std::fma(q, x2, 1.12837916709551257f);
  const float small = x * q;
  const float t = 1.0f / std::fma(0.3275911f, ax, 1.0f);
  float p = 1.061405429f;
  p = std::fma(p, t, -1.453152027f);
  p = std::fma(p, t, 1.421413741f);
  p = std::fma(p, t, -0.284496736f);
  p = std::fma(p, t, 0.254829592f);
  p = p * t;
  const float e = exp_ref(-x2);
  const float large = std::copysign(std::fma(-p, e, 1.0f), x);
  return ax < 0.75f ? small : large;
}

void f32_binary_ref(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                    size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float x = a[i * sa], y = b[i * sb];
    switch (op) {
      case kAdd:
        o[i] = x + y;
        break;
      case kSub:
        o[i] = x - y;
        break;
      case kMul:
        o[i] = x * y;
        break;
      default:
        o[i] = x / y;
        break;
    }
  }
}

void f32_erf_ref(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = ref_erf(x[i]);
}

void f32_exp_ref(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = exp_ref(x[i]);
}

void f32_tanh_ref(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = ref_tanh(x[i]);
}

void f32_gelu_ref(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float e = ref_erf(v * 0.707106781186547524f);
    y[i] = (0.5f * v) * (1.0f + e);
  }
}

void f32_gelu_tanh_ref(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float v3 = (v * v) * v;
    const float u = 0.797884560802865356f * std::fma(0.044715f, v3, v);
    y[i] = (0.5f * v) * (1.0f + ref_tanh(u));
  }
}

void f32_softmax_rows_ref(const float* x, float* y, size_t rows, size_t len) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    float mx = -INFINITY;
    for (size_t j = 0; j < len; ++j) mx = ref_max(mx, xr[j]);
    float sum = 0.0f;
    for (size_t j = 0; j < len; ++j) {
      const float e = exp_ref(xr[j] - mx);
      yr[j] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
    for (size_t j = 0; j < len; ++j) yr[j] *= inv;
  }
}

void f32_layer_norm_rows_ref(const float* x, const float* scale, const float* bias, float* y,
                             float* mean, float* inv_std, size_t rows, size_t len, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    double sum = 0.0;
    for (size_t j = 0; j < len; ++j) sum += xr[j];
    const float mu = float(sum / double(len));
    double var = 0.0;
    for (size_t j = 0; j < len; ++j) {
      const double d = double(xr[j] - mu);
      var += d * d;
    }
    const float inv = float(1.0 / std::sqrt(var / double(len) + double(eps)));
    if (mean) mean[r] = mu;
    if (inv_std) inv_std[r] = inv;
    for (size_t j = 0; j < len; ++j) {
      const float v = (xr[j] - mu) * inv;
      yr[j] = bias ? std::fma(v, scale[j], bias[j]) : v * scale[j];
    }
  }
}

static const VecKernels kRef = {
    "ref",        f32_binary_ref,    f32_erf_ref,          f32_tanh_ref,
    f32_gelu_ref, f32_gelu_tanh_ref, f32_softmax_rows_ref, f32_layer_norm_rows_ref,
    f32_exp_ref};

const VecKernels& vec_kernels(device::IsaLevel level) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  static const VecKernels kAvx2 = {
      "avx2",        f32_binary_avx2,    f32_erf_avx2,          f32_tanh_avx2,
      f32_gelu_avx2, f32_gelu_tanh_avx2, f32_softmax_rows_avx2, f32_layer_norm_rows_avx2,
      f32_exp_avx2};
  static const VecKernels kAvx512 = {
      "avx512",        f32_binary_avx512,    f32_erf_avx512,          f32_tanh_avx512,
      f32_gelu_avx512, f32_gelu_tanh_avx512, f32_softmax_rows_avx512, f32_layer_norm_rows_avx512,
      f32_exp_avx512};
  if (level >= device::IsaLevel::kAvx512) return kAvx512;
  if (level >= device::IsaLevel::kAvx2) return kAvx2;
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  static const VecKernels kNeon = {
      "neon",        f32_binary_neon,    f32_erf_neon,          f32_tanh_neon,
      f32_gelu_neon, f32_gelu_tanh_neon, f32_softmax_rows_neon, f32_layer_norm_rows_neon,
      f32_exp_neon};
  if (level >= device::IsaLevel::kNeon) return kNeon;
#else
  (void)level;
#endif
  return kRef;
}

const VecKernels& host_vec_kernels() { return vec_kernels(device::host_isa_level()); }

}  // namespace onnx_prepack::kernels::vec
