// AVX2+FMA micro-kernel, 6 rows x 16 columns, B read in place.
#include <immintrin.h>

#include "runtime/ops/gemm.h"

namespace onnx_prepack::runtime {

static __m256i f32_matmul_avx2_mask(size_t n) {
  alignas(32) static const int kLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                             0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLanes + 8 - n));
}

extern "C" void f32_matmul_6x16_avx2(size_t mr, size_t nr, size_t kc, const float* a, size_t lda,
                                     const float* b, size_t ldb, float* c, size_t ldc,
                                     int accumulate) {
  const float* ar[6];
  for (size_t i = 0; i < 6; ++i) ar[i] = a + (i < mr ? i : 0) * lda;
  size_t n0 = nr < 8 ? nr : 8;
  size_t n1 = nr > 8 ? nr - 8 : 0;
  __m256i m0 = f32_matmul_avx2_mask(n0);
  __m256i m1 = f32_matmul_avx2_mask(n1);
  __m256 acc[6][2];
  for (size_t i = 0; i < 6; ++i) {
    if (accumulate && i < mr) {
      acc[i][0] = _mm256_maskload_ps(c + i * ldc, m0);
      acc[i][1] = _mm256_maskload_ps(c + i * ldc + 8, m1);
    } else {
      acc[i][0] = _mm256_setzero_ps();
      acc[i][1] = _mm256_setzero_ps();
    }
  }
  if (mr == 1) {
    for (size_t kk = 0; kk < kc; ++kk) {
      const float* br = b + kk * ldb;
      __m256 b0 = _mm256_maskload_ps(br, m0);
      __m256 b1 = _mm256_maskload_ps(br + 8, m1);
      __m256 av = _mm256_broadcast_ss(ar[0] + kk);
      acc[0][0] = _mm256_fmadd_ps(av, b0, acc[0][0]);
      acc[0][1] = _mm256_fmadd_ps(av, b1, acc[0][1]);
    }
  } else {
    for (size_t kk = 0; kk < kc; ++kk) {
      const float* br = b + kk * ldb;
      __m256 b0 = _mm256_maskload_ps(br, m0);
      __m256 b1 = _mm256_maskload_ps(br + 8, m1);
      for (size_t i = 0; i < 6; ++i) {
        __m256 av = _mm256_broadcast_ss(ar[i] + kk);
        acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
      }
    }
  }
  for (size_t i = 0; i < mr; ++i) {
    _mm256_maskstore_ps(c + i * ldc, m0, acc[i][0]);
    _mm256_maskstore_ps(c + i * ldc + 8, m1, acc[i][1]);
  }
}

}  // namespace onnx_prepack::runtime
