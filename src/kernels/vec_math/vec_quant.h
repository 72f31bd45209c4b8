// Vectorised DynamicQuantizeLinear (float -> uint8 per tensor): the min / max
// reduction and the quantize pass, one translation unit per ISA
// (vec_quant_avx2.cc, vec_quant_avx512.cc, vec_quant_neon.cc) and a portable
// twin (vec_quant_ref.cc). All give the bits of the scalar definition:
//
//   lo = min(0, min x), hi = max(0, max x)  NaN elements skipped (a NaN never
//                                            wins minps(x, lo) / maxps(x, hi))
//   y  = sat_u8(nearbyint(x / scale) + zp)  IEEE division (vdivps, no
//        reciprocal), rounding in the current mode (nearest even by default),
//        a NaN quotient (x NaN, or inf / inf) gives 0
//
// lo and hi do not depend on the order of the reduction: a lane starts at +0
// and -0 never replaces it (-0 < +0 is false), so lanes hold no signed zeros
// and no NaN, and their min / max is one value whatever the grouping.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels::vec {

// *lo = min(*lo, x...), *hi = max(*hi, x...) with the operand order
// lo = x < lo ? x : lo, hi = x > hi ? x : hi. Start both at +0 (the operator's
// range, and what makes the result independent of the order); chunks may then
// be reduced separately and their results combined the same way.
using MinMaxFn = void (*)(const float* x, size_t n, float* lo, float* hi);
// y[i] = sat_u8(nearbyint(x[i] / scale) + zp); zp is an integer in [0, 255].
// scale 0 gives sat_u8(zp) everywhere (the operator's all-zero case).
using QuantizeU8Fn = void (*)(const float* x, uint8_t* y, size_t n, float scale, float zp);

void f32_minmax_ref(const float* x, size_t n, float* lo, float* hi);
void f32_minmax_avx2(const float* x, size_t n, float* lo, float* hi);
void f32_minmax_avx512(const float* x, size_t n, float* lo, float* hi);
void f32_minmax_neon(const float* x, size_t n, float* lo, float* hi);

void f32_quantize_u8_ref(const float* x, uint8_t* y, size_t n, float scale, float zp);
void f32_quantize_u8_avx2(const float* x, uint8_t* y, size_t n, float scale, float zp);
void f32_quantize_u8_avx512(const float* x, uint8_t* y, size_t n, float scale, float zp);
void f32_quantize_u8_neon(const float* x, uint8_t* y, size_t n, float scale, float zp);

struct QuantKernels {
  const char* isa;
  MinMaxFn minmax;
  QuantizeU8Fn quantize_u8;
};

// The variant for `level` (ref, avx2, avx512 or neon), and for device::host_isa_level() now.
const QuantKernels& quant_kernels(device::IsaLevel level);
const QuantKernels& host_quant_kernels();

// DynamicQuantizeLinear's scale and zero point from the reduced range:
// scale = (hi - lo) / 255, zp = scale == 0 ? 0 : clamp(nearbyint(-lo / scale), 0, 255),
// and zp 0 where that is NaN (lo = -inf: every element then quantizes to 0).
struct DynamicQuantParams {
  float scale;
  float zp;
};
DynamicQuantParams dynamic_quant_params(float lo, float hi);

}  // namespace onnx_prepack::kernels::vec
