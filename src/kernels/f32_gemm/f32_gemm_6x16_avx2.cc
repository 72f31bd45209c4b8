// AVX2 + FMA microkernel: up to 6 rows x 16 columns, 12 ymm accumulators, two
// B vectors per k and one broadcast A value. See f32_gemm.h for the contract.
#include <immintrin.h>

#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// Lane masks for maskload/maskstore: a window of 8 lanes starting at 8 - n.
alignas(32) const int32_t kMaskWindow[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                             0,  0,  0,  0,  0,  0,  0,  0};

__m256i lanes(size_t n) {  // first n (0..8) lanes set
  if (n > 8) n = 8;
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskWindow + 8 - n));
}

template <int MR>
void tile(size_t nr, size_t kc, const float* a, const float* b, float* c, size_t ldc,
          uint32_t flags, const F32GemmEpilogue* ep) {
  const __m256i m0 = lanes(nr);
  const __m256i m1 = lanes(nr > 8 ? nr - 8 : 0);
  __m256 acc0[MR], acc1[MR];
  if (flags & kGemmAccumulate) {
    for (int i = 0; i < MR; ++i) {
      acc0[i] = _mm256_maskload_ps(c + i * ldc, m0);
      acc1[i] = _mm256_maskload_ps(c + i * ldc + 8, m1);
    }
  } else {
    for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
  }
  for (size_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    _mm_prefetch(reinterpret_cast<const char*>(b + 256), _MM_HINT_T0);
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
    b += 16;
  }
  if (flags & kGemmFinal) {
    if (ep->alpha != 1.0f) {
      const __m256 al = _mm256_set1_ps(ep->alpha);
      for (int i = 0; i < MR; ++i) {
        acc0[i] = _mm256_mul_ps(al, acc0[i]);
        acc1[i] = _mm256_mul_ps(al, acc1[i]);
      }
    }
    if (ep->bias != nullptr) {
      const __m256 be = _mm256_set1_ps(ep->beta);
      for (int i = 0; i < MR; ++i) {
        const float* row = ep->bias + ptrdiff_t(i) * ep->bias_rs;
        __m256 v0, v1;
        if (ep->bias_cs == 0) {
          v0 = v1 = _mm256_set1_ps(*row);
        } else {
          v0 = _mm256_maskload_ps(row, m0);
          v1 = _mm256_maskload_ps(row + 8, m1);
        }
        acc0[i] = _mm256_fmadd_ps(be, v0, acc0[i]);
        acc1[i] = _mm256_fmadd_ps(be, v1, acc1[i]);
      }
    }
  }
  for (int i = 0; i < MR; ++i) {
    _mm256_maskstore_ps(c + i * ldc, m0, acc0[i]);
    _mm256_maskstore_ps(c + i * ldc + 8, m1, acc1[i]);
  }
}

}  // namespace

void f32_gemm_6x16_avx2(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                        size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  switch (mr) {
    case 1:
      return tile<1>(nr, kc, a, b, c, ldc, flags, ep);
    case 2:
      return tile<2>(nr, kc, a, b, c, ldc, flags, ep);
    case 3:
      return tile<3>(nr, kc, a, b, c, ldc, flags, ep);
    case 4:
      return tile<4>(nr, kc, a, b, c, ldc, flags, ep);
    case 5:
      return tile<5>(nr, kc, a, b, c, ldc, flags, ep);
    case 6:
      return tile<6>(nr, kc, a, b, c, ldc, flags, ep);
    default:
      return;
  }
}

}  // namespace onnx_prepack::kernels
