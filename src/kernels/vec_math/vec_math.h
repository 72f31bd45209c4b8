// Vectorised float kernels of the hot transformer-encoder operators, one
// translation unit per ISA (vec_math_avx512.cc, vec_math_avx2.cc, vec_math_neon.cc)
// and a portable twin (vec_math_ref.cc) that is the tests' oracle and the fallback. Chosen at
// plan time from device::host_isa_level() (ONNX_PREPACK_MAX_ISA caps it).
//
// Elementwise functions (binary, erf, tanh, gelu) evaluate the same operation
// sequence in every variant (explicit FMAs, IEEE division), so ref, AVX2,
// AVX-512 and NEON agree bit for bit. Row reductions (softmax, layer norm) differ in the
// order of their sums across variants but never with the thread count: a row is
// always computed by one call.
//
// Approximations (absolute error vs the exact function, measured in the tests):
//   exp(x), x <= 0: range reduction by ln 2 (Cody-Waite) + degree-7 polynomial,
//     relative error ~2 ulp, 0 below -87.34 (the float normal range).
//   tanh: odd Taylor series to x^13 for |x| < 0.375, else (1 - e) / (1 + e) with
//     e = exp(-2|x|) (|x| clamped to 9); error < 3e-7.
//   erf: Taylor series to x^17 for |x| < 0.75, else Abramowitz-Stegun 7.1.26,
//     1 - t P(t) exp(-x^2) with t = 1 / (1 + p|x|); error < 3e-7.
#pragma once

#include <cstddef>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels::vec {

enum BinaryOp : int { kAdd = 0, kSub = 1, kMul = 2, kDiv = 3 };

// o[i] = a[i * sa] op b[i * sb], sa and sb 0 or 1.
using BinaryFn = void (*)(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                          size_t n);
// y[i] = f(x[i]); y may equal x.
using UnaryFn = void (*)(const float* x, float* y, size_t n);
// Softmax over each of `rows` contiguous rows of `len` floats.
using SoftmaxFn = void (*)(const float* x, float* y, size_t rows, size_t len);
// Layer normalisation of `rows` contiguous rows of `len` floats:
// y = (x - mean) * inv_std * scale + bias (bias may be null), inv_std =
// 1 / sqrt(var + eps); mean / inv_std written per row when non-null.
using LayerNormFn = void (*)(const float* x, const float* scale, const float* bias, float* y,
                             float* mean, float* inv_std, size_t rows, size_t len, float eps);

void f32_binary_ref(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                    size_t n);
void f32_binary_avx2(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                     size_t n);
void f32_binary_avx512(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                       size_t n);
void f32_binary_neon(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                     size_t n);

void f32_erf_ref(const float* x, float* y, size_t n);
void f32_erf_avx2(const float* x, float* y, size_t n);
void f32_erf_avx512(const float* x, float* y, size_t n);
void f32_erf_neon(const float* x, float* y, size_t n);

// e^x for x <= 88 (clamped there), 0 below ln(2^-126): the one exp polynomial of each ISA
// (vec_exp_ref.h, vec_exp_avx2.h, vec_exp_avx512.h, vec_exp_neon.h) that every function here and in
// vec_act.h calls, exposed for its test.
void f32_exp_ref(const float* x, float* y, size_t n);
void f32_exp_avx2(const float* x, float* y, size_t n);
void f32_exp_avx512(const float* x, float* y, size_t n);
void f32_exp_neon(const float* x, float* y, size_t n);
void f32_tanh_ref(const float* x, float* y, size_t n);
void f32_tanh_avx2(const float* x, float* y, size_t n);
void f32_tanh_avx512(const float* x, float* y, size_t n);
void f32_tanh_neon(const float* x, float* y, size_t n);

// Gelu, approximate = none: 0.5 x (1 + erf(x / sqrt 2)).
void f32_gelu_ref(const float* x, float* y, size_t n);
void f32_gelu_avx2(const float* x, float* y, size_t n);
void f32_gelu_avx512(const float* x, float* y, size_t n);
void f32_gelu_neon(const float* x, float* y, size_t n);

// Gelu, approximate = tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
void f32_gelu_tanh_ref(const float* x, float* y, size_t n);
void f32_gelu_tanh_avx2(const float* x, float* y, size_t n);
void f32_gelu_tanh_avx512(const float* x, float* y, size_t n);
void f32_gelu_tanh_neon(const float* x, float* y, size_t n);

void f32_softmax_rows_ref(const float* x, float* y, size_t rows, size_t len);
void f32_softmax_rows_avx2(const float* x, float* y, size_t rows, size_t len);
void f32_softmax_rows_avx512(const float* x, float* y, size_t rows, size_t len);
void f32_softmax_rows_neon(const float* x, float* y, size_t rows, size_t len);

void f32_layer_norm_rows_ref(const float* x, const float* scale, const float* bias, float* y,
                             float* mean, float* inv_std, size_t rows, size_t len, float eps);
void f32_layer_norm_rows_avx2(const float* x, const float* scale, const float* bias, float* y,
                              float* mean, float* inv_std, size_t rows, size_t len, float eps);
void f32_layer_norm_rows_avx512(const float* x, const float* scale, const float* bias, float* y,
                                float* mean, float* inv_std, size_t rows, size_t len, float eps);
void f32_layer_norm_rows_neon(const float* x, const float* scale, const float* bias, float* y,
                              float* mean, float* inv_std, size_t rows, size_t len, float eps);

struct VecKernels {
  const char* isa;
  BinaryFn binary;
  UnaryFn erf;
  UnaryFn tanh;
  UnaryFn gelu;
  UnaryFn gelu_tanh;
  SoftmaxFn softmax_rows;
  LayerNormFn layer_norm_rows;
  UnaryFn exp;  // the shared exp, for its test
};

// The variant for `level` (ref, avx2, avx512 or neon).
const VecKernels& vec_kernels(device::IsaLevel level);
// The variant for device::host_isa_level() now.
const VecKernels& host_vec_kernels();

}  // namespace onnx_prepack::kernels::vec
