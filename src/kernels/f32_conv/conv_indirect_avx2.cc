// AVX2 + FMA indirect Conv microkernel: up to 6 output channels x 16 output
// pixels, 12 ymm accumulators started from the bias; filter row k reads the 16
// input pixels at base + offs[k] (f32_conv.h). Partial tiles store through a
// stack row.
#include <immintrin.h>

#include <cstring>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

template <int MR>
void tile(size_t nr, size_t k, const float* a, const float* base, const ptrdiff_t* offs,
          const float* bias, float* c, size_t ldc) {
  __m256 acc0[MR], acc1[MR];
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
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
  }
  for (int i = 0; i < MR; ++i) {
    if (nr == 16) {
      _mm256_storeu_ps(c + i * ldc, acc0[i]);
      _mm256_storeu_ps(c + i * ldc + 8, acc1[i]);
    } else {
      alignas(32) float row[16];
      _mm256_store_ps(row, acc0[i]);
      _mm256_store_ps(row + 8, acc1[i]);
      std::memcpy(c + i * ldc, row, nr * sizeof(float));
    }
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
