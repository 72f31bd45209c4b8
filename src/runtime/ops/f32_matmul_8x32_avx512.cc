// AVX-512F micro-kernel, 8 rows x 32 columns, B read in place.
#include <immintrin.h>

#include "runtime/ops/gemm.h"

namespace onnx_prepack::runtime {

extern "C" void f32_matmul_8x32_avx512(size_t mr, size_t nr, size_t kc, const float* a, size_t lda,
                                       const float* b, size_t ldb, float* c, size_t ldc,
                                       int accumulate) {
  const float* ar[8];
  for (size_t i = 0; i < 8; ++i) ar[i] = a + (i < mr ? i : 0) * lda;
  size_t n0 = nr < 16 ? nr : 16;
  size_t n1 = nr > 16 ? nr - 16 : 0;
  __mmask16 m0 = __mmask16((1u << n0) - 1u);
  __mmask16 m1 = __mmask16((1u << n1) - 1u);
  __m512 acc[8][2];
  for (size_t i = 0; i < 8; ++i) {
    if (accumulate && i < mr) {
      acc[i][0] = _mm512_maskz_loadu_ps(m0, c + i * ldc);
      acc[i][1] = _mm512_maskz_loadu_ps(m1, c + i * ldc + 16);
    } else {
      acc[i][0] = _mm512_setzero_ps();
      acc[i][1] = _mm512_setzero_ps();
    }
  }
  if (mr == 1) {
    size_t kk = 0;
    __m512 e0 = _mm512_setzero_ps(), e1 = _mm512_setzero_ps();
    for (; kk + 2 <= kc; kk += 2) {
      const float* br = b + kk * ldb;
      __m512 b0 = _mm512_maskz_loadu_ps(m0, br);
      __m512 b1 = _mm512_maskz_loadu_ps(m1, br + 16);
      __m512 b2 = _mm512_maskz_loadu_ps(m0, br + ldb);
      __m512 b3 = _mm512_maskz_loadu_ps(m1, br + ldb + 16);
      acc[0][0] = _mm512_fmadd_ps(_mm512_set1_ps(ar[0][kk]), b0, acc[0][0]);
      acc[0][1] = _mm512_fmadd_ps(_mm512_set1_ps(ar[0][kk]), b1, acc[0][1]);
      e0 = _mm512_fmadd_ps(_mm512_set1_ps(ar[0][kk + 1]), b2, e0);
      e1 = _mm512_fmadd_ps(_mm512_set1_ps(ar[0][kk + 1]), b3, e1);
    }
    for (; kk < kc; ++kk) {
      const float* br = b + kk * ldb;
      acc[0][0] =
          _mm512_fmadd_ps(_mm512_set1_ps(ar[0][kk]), _mm512_maskz_loadu_ps(m0, br), acc[0][0]);
      acc[0][1] =
          _mm512_fmadd_ps(_mm512_set1_ps(ar[0][kk]), _mm512_maskz_loadu_ps(m1, br + 16), acc[0][1]);
    }
    acc[0][0] = _mm512_add_ps(acc[0][0], e0);
    acc[0][1] = _mm512_add_ps(acc[0][1], e1);
  } else {
    for (size_t kk = 0; kk < kc; ++kk) {
      const float* br = b + kk * ldb;
      __m512 b0 = _mm512_maskz_loadu_ps(m0, br);
      __m512 b1 = _mm512_maskz_loadu_ps(m1, br + 16);
      for (size_t i = 0; i < 8; ++i) {
        __m512 av = _mm512_set1_ps(ar[i][kk]);
        acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
      }
    }
  }
  for (size_t i = 0; i < mr; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc[i][0]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc[i][1]);
  }
}

}  // namespace onnx_prepack::runtime
