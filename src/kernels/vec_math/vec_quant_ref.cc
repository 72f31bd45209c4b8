// Portable twin of vec_quant_avx2.cc / vec_quant_avx512.cc / vec_quant_neon.cc (see vec_quant.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/vec_math/vec_quant.h"

namespace onnx_prepack::kernels::vec {
namespace {

float min_ps(float a, float b) { return a < b ? a : b; }  // = minps(a, b)
float max_ps(float a, float b) { return a > b ? a : b; }  // = maxps(a, b)

// sat_u8 of an integral float: max first, so NaN becomes 0 (maxps(NaN, 0) = 0).
uint8_t sat_u8(float v) { return uint8_t(min_ps(max_ps(v, 0.0f), 255.0f)); }

}  // namespace

void f32_minmax_ref(const float* x, size_t n, float* lo, float* hi) {
  float l = *lo, h = *hi;
  for (size_t i = 0; i < n; ++i) {
    l = min_ps(x[i], l);
    h = max_ps(x[i], h);
  }
  *lo = l;
  *hi = h;
}

void f32_quantize_u8_ref(const float* x, uint8_t* y, size_t n, float scale, float zp) {
  if (n == 0) return;  // y may be null (an empty tensor): memset must not see it
  if (scale == 0.0f) {
    std::memset(y, sat_u8(0.0f + zp), n);
    return;
  }
  for (size_t i = 0; i < n; ++i) y[i] = sat_u8(std::nearbyint(x[i] / scale) + zp);
}

DynamicQuantParams dynamic_quant_params(float lo, float hi) {
  const float scale = (hi - lo) / 255.0f;
  const float zp = scale == 0 ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
  // -inf / inf: NaN, which the scalar code stored as 0 (x86's conversion); a zero point of 0
  // quantizes every element of such a range to 0, as the NaN did.
  return {scale, std::isnan(zp) ? 0.0f : zp};
}

const QuantKernels& quant_kernels(device::IsaLevel level) {
  static const QuantKernels kRef = {"ref", f32_minmax_ref, f32_quantize_u8_ref};
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  static const QuantKernels kAvx2 = {"avx2", f32_minmax_avx2, f32_quantize_u8_avx2};
  static const QuantKernels kAvx512 = {"avx512", f32_minmax_avx512, f32_quantize_u8_avx512};
  if (level >= device::IsaLevel::kAvx512) return kAvx512;
  if (level >= device::IsaLevel::kAvx2) return kAvx2;
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  static const QuantKernels kNeon = {"neon", f32_minmax_neon, f32_quantize_u8_neon};
  if (level >= device::IsaLevel::kNeon) return kNeon;
#else
  (void)level;
#endif
  return kRef;
}

const QuantKernels& host_quant_kernels() { return quant_kernels(device::host_isa_level()); }

}  // namespace onnx_prepack::kernels::vec
