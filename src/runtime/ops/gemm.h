// The runtime's own fp32 GEMM for operands that are not prepared weights
// (activation x activation in attention, and the fallback when weight
// preparation is off): register-blocked micro-kernels that read B in place.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"

namespace onnx_prepack::runtime {

// C[M,N] = A[M,K] * B[K,N] (+ C when accumulate). Row-major; lda/ldb/ldc are
// row strides in elements. Operands must not overlap C.
void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc, bool accumulate, base::ThreadPool* pool);

// Micro-kernels: mr <= MR rows, nr <= NR columns, kc depth. B is read at
// b[kk * ldb + j]. accumulate != 0 adds to C.
extern "C" {
void f32_matmul_4x16_ref(size_t mr, size_t nr, size_t kc, const float* a, size_t lda,
                         const float* b, size_t ldb, float* c, size_t ldc, int accumulate);
void f32_matmul_6x16_avx2(size_t mr, size_t nr, size_t kc, const float* a, size_t lda,
                          const float* b, size_t ldb, float* c, size_t ldc, int accumulate);
void f32_matmul_8x32_avx512(size_t mr, size_t nr, size_t kc, const float* a, size_t lda,
                            const float* b, size_t ldb, float* c, size_t ldc, int accumulate);
}

}  // namespace onnx_prepack::runtime
