// Portable micro-kernel: the oracle and the fallback on CPUs without AVX2.
#include "runtime/ops/gemm.h"

namespace onnx_prepack::runtime {

extern "C" void f32_matmul_4x16_ref(size_t mr, size_t nr, size_t kc, const float* a, size_t lda,
                                    const float* b, size_t ldb, float* c, size_t ldc,
                                    int accumulate) {
  float acc[4][16];
  for (size_t i = 0; i < mr; ++i) {
    for (size_t j = 0; j < nr; ++j) acc[i][j] = accumulate ? c[i * ldc + j] : 0.0f;
  }
  for (size_t kk = 0; kk < kc; ++kk) {
    const float* brow = b + kk * ldb;
    for (size_t i = 0; i < mr; ++i) {
      float av = a[i * lda + kk];
      for (size_t j = 0; j < nr; ++j) acc[i][j] += av * brow[j];
    }
  }
  for (size_t i = 0; i < mr; ++i) {
    for (size_t j = 0; j < nr; ++j) c[i * ldc + j] = acc[i][j];
  }
}

}  // namespace onnx_prepack::runtime
