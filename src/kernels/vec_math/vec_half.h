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

// The variant for `level` (AVX-512 hosts use the AVX2 one; aarch64 hosts the
// NEON one), and for the host.
const HalfConvert& half_convert(device::IsaLevel level);
const HalfConvert& host_half_convert();

}  // namespace onnx_prepack::kernels::vec
