// The one exp polynomial of the portable variants (vec_math_ref.cc, vec_act_ref.cc), the twin
// of vec_exp_avx2.h and vec_exp_avx512.h: range reduction by ln 2 (Cody-Waite split), degree-7
// polynomial, scale by 2^n; the same operation sequence with std::fma where they use an FMA, so
// all three give the same bits. About 2 ulp for x <= 88; 0 below ln(2^-126); NaN stays NaN.
// Included by the portable translation units only; internal linkage keeps one copy per unit.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace onnx_prepack::kernels::vec {
namespace {

constexpr float kExpLog2e = 1.44269504088896341f;
constexpr float kExpLn2Hi = 0.693145751953125f;
constexpr float kExpLn2Lo = 1.42860682028622680e-06f;
constexpr float kExpHi = 88.0f;
constexpr float kExpLo = -87.3365478515625f;  // ln(2^-126)

// minps(a, b) / maxps(a, b): b when either is NaN.
inline float exp_min(float a, float b) { return a < b ? a : b; }
inline float exp_max(float a, float b) { return a > b ? a : b; }

// e^x for x <= 88 (clamped to 88 above); 0 below kExpLo; NaN stays NaN.
inline float exp_ref(float x) {
  if (std::isnan(x)) return x + x;
  const bool under = x < kExpLo;
  x = exp_max(kExpLo, exp_min(kExpHi, x));
  const float n = std::nearbyint(x * kExpLog2e);
  float r = std::fma(n, -kExpLn2Hi, x);
  r = std::fma(n, -kExpLn2Lo, r);
  float p = 1.98412698412698413e-4f;
  p = std::fma(p, r, 1.38888888888888889e-3f);
  p = std::fma(p, r, 8.33333333333333333e-3f);
  p = std::fma(p, r, 4.16666666666666667e-2f);
  p = std::fma(p, r, 1.66666666666666667e-1f);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  const uint32_t bits = uint32_t(int32_t(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return under ? 0.0f : p * scale;
}

}  // namespace
}  // namespace onnx_prepack::kernels::vec
