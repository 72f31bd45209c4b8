// The output stage the NEON and dot-product microkernels (q4_gemm_neon.cc,
// q4_gemm_dotprod.cc) share: a kRows x 16 tile of float accumulators (register
// h of a row holds columns 4h..4h+3 of panel p) stored to C, the columns past
// N dropped and the bias added as one float add, as the ref kernel does.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels {

template <int kRows>
inline void store_tile(const float32x4_t (&acc)[kRows][4], const QGemmShape& s, int64_t p, float* c,
                       size_t ldc, const float* bias) {
  for (int r = 0; r < kRows; ++r) {
    float tmp[kQPanel];
    for (int h = 0; h < 4; ++h) vst1q_f32(tmp + 4 * h, acc[r][h]);
    for (int64_t j = 0; j < kQPanel && p * kQPanel + j < s.N; ++j) {
      const int64_t n = p * kQPanel + j;
      c[size_t(r) * ldc + size_t(n)] = tmp[j] + (bias ? bias[n] : 0.0f);
    }
  }
}

}  // namespace onnx_prepack::kernels
