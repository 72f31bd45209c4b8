// Portable twin of vec_act_avx2.cc / vec_act_avx512.cc / vec_act_neon.cc (see vec_act.h).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_exp_ref.h"

namespace onnx_prepack::kernels::vec {
namespace {

float min_ps(float a, float b) { return a < b ? a : b; }  // = minps(a, b)
float max_ps(float a, float b) { return a > b ? a : b; }  // = maxps(a, b)

// e^88, the factor that extends exp_core past 88.
constexpr float kExp88 = 1.6516362549940018e38f;

float act(int op, float x, float p0, float p1) {
  switch (op) {
    case kActClip:
      return min_ps(p1, max_ps(p0, x));
    case kActHardSigmoid:
      return max_ps(0.0f, min_ps(1.0f, std::fma(p0, x, p1)));
    case kActHardSwish:
      return x * max_ps(0.0f, min_ps(1.0f, std::fma(x, 1.0f / 6.0f, 0.5f)));
    case kActLeakyRelu:
      return x >= 0.0f ? x : x * p0;
    case kActExp:
      if (std::isnan(x)) return x + x;
      return x > 88.0f ? exp_ref(x - 88.0f) * kExp88 : exp_ref(x);
    case kActSigmoid: {
      if (std::isnan(x)) return x + x;
      const float e = exp_ref(-std::fabs(x));
      const float inv = 1.0f / (1.0f + e);
      return x >= 0.0f ? inv : e * inv;
    }
    default:
      return x;
  }
}

}  // namespace

void f32_act_ref(int op, const float* x, float* y, size_t n, float p0, float p1) {
  for (size_t i = 0; i < n; ++i) y[i] = act(op, x[i], p0, p1);
}

ActFn act_kernel(device::IsaLevel level) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  if (level >= device::IsaLevel::kAvx512) return f32_act_avx512;
  if (level >= device::IsaLevel::kAvx2) return f32_act_avx2;
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  if (level >= device::IsaLevel::kNeon) return f32_act_neon;
#else
  (void)level;
#endif
  return f32_act_ref;
}

ActFn host_act_kernel() { return act_kernel(device::host_isa_level()); }

}  // namespace onnx_prepack::kernels::vec
