// float16 / bfloat16 <-> float conversion of arrays for the half adapter
// (runtime/half_adapter.cc): F16C and AVX2 variants (vec_half_avx2.cc), NEON
// ones (vec_half_neon.cc) and a portable twin (vec_half_ref.cc, on the scalar conversions below).
// Round to nearest even; NaNs stay NaN (quieted); all variants give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels::vec {

// One value (the scalar conversions the tensor code uses too).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);

struct HalfConvert {
  void (*f16_to_f32)(const uint16_t* x, float* y, size_t n);
  void (*f32_to_f16)(const float* x, uint16_t* y, size_t n);
  void (*bf16_to_f32)(const uint16_t* x, float* y, size_t n);
  void (*f32_to_bf16)(const float* x, uint16_t* y, size_t n);
};

void f16_to_f32_ref(const uint16_t* x, float* y, size_t n);
void f32_to_f16_ref(const float* x, uint16_t* y, size_t n);
void bf16_to_f32_ref(const uint16_t* x, float* y, size_t n);
void f32_to_bf16_ref(const float* x, uint16_t* y, size_t n);
void f16_to_f32_avx2(const uint16_t* x, float* y, size_t n);
void f32_to_f16_avx2(const float* x, uint16_t* y, size_t n);
void bf16_to_f32_avx2(const uint16_t* x, float* y, size_t n);
void f32_to_bf16_avx2(const float* x, uint16_t* y, size_t n);
void f16_to_f32_neon(const uint16_t* x, float* y, size_t n);
void f32_to_f16_neon(const float* x, uint16_t* y, size_t n);
void bf16_to_f32_neon(const uint16_t* x, float* y, size_t n);
void f32_to_bf16_neon(const float* x, uint16_t* y, size_t n);
// BFCVTN (vec_half_bf16.cc, aarch64 with FEAT_BF16).
void f32_to_bf16_bfcvt(const float* x, uint16_t* y, size_t n);

// The variant for `level` (AVX-512 hosts use the AVX2 one; aarch64 hosts the
// NEON one, with BFCVTN for f32 -> bf16 when `bf16`, FEAT_BF16, is set), and
// for the host (its capped level and bf16 feature).
const HalfConvert& half_convert(device::IsaLevel level, bool bf16 = false);
const HalfConvert& host_half_convert();

}  // namespace onnx_prepack::kernels::vec
