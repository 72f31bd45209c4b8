// AVX2 + FMA indirect Conv microkernel: up to 6 output channels x 16 output
// pixels, 12 ymm accumulators started from the bias; filter row k reads the 16
// input pixels at base + offs[k] (f32_conv.h). Partial tiles store through
// lane masks. The accumulator loops are unrolled by pragma: without it GCC 12
// keeps the arrays on the stack and stores all 12 accumulators every filter
// row (3-4x slower); no memcpy epilogue takes their address either.
#include <immintrin.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

template <int MR>
void tile(size_t nr, size_t k, const float* a, const float* base, const ptrdiff_t* offs,
          const float* bias, float* c, size_t ldc) {
  // Column masks (lane < nr) for the stores: masked-off lanes are never written.
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(nr)), lanes);
  const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(nr) - 8), lanes);
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    acc0[i] = acc1[i] = bias ? _mm256_set1_ps(bias[i]) : _mm256_setzero_ps();
  }
  for (size_t kk = 0; kk < k; ++kk) {
    const float* b = base + offs[kk];
    // Runs jump between input planes: fetch kConvIndirectPrefetch rows ahead.
    _mm_prefetch(reinterpret_cast<const char*>(base + offs[kk + kConvIndirectPrefetch]),
                 _MM_HINT_T0);
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    _mm256_maskstore_ps(c + i * ldc, m0, acc0[i]);
    _mm256_maskstore_ps(c + i * ldc + 8, m1, acc1[i]);
  }
}

}  // namespace

void conv_indirect_6x16_avx2(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                             const ptrdiff_t* offs, const float* bias, float* c, size_t ldc) {
  switch (mr) {
    case 1:
      return tile<1>(nr, k, a, base, offs, bias, c, ldc);
    case 2:
      return tile<2>(nr, k, a, base, offs, bias, c, ldc);
    case 3:
      return tile<3>(nr, k, a, base, offs, bias, c, ldc);
    case 4:
      return tile<4>(nr, k, a, base, offs, bias, c, ldc);
    case 5:
      return tile<5>(nr, k, a, base, offs, bias, c, ldc);
    case 6:
      return tile<6>(nr, k, a, base, offs, bias, c, ldc);
    default:
      return;
  }
}

}  // namespace onnx_prepack::kernels
