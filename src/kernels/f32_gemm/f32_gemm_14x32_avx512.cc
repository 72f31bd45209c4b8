// AVX-512F microkernel: up to 14 rows x 32 columns, 28 zmm accumulators, two
// B vectors per k and the A values broadcast from memory (the FMA's {1to16}
// operand). See f32_gemm.h for the contract.
#include <immintrin.h>

#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// Few rows: B streams from memory, so fetch 16 k-rows ahead. Many rows: the
// B slice is reused from L1 by the driver and prefetches only cost slots.
constexpr int kPrefetchRows = 8;

template <int MR>
void tile(size_t nr, size_t kc, const float* a, const float* b, float* c, size_t ldc,
          uint32_t flags, const F32GemmEpilogue* ep) {
  const __mmask16 m0 = nr >= 16 ? __mmask16(0xffff) : __mmask16((1u << nr) - 1);
  const __mmask16 m1 =
      nr >= 32 ? __mmask16(0xffff) : (nr > 16 ? __mmask16((1u << (nr - 16)) - 1) : __mmask16(0));
  __m512 acc0[MR], acc1[MR];
  if (flags & kGemmAccumulate) {
    for (int i = 0; i < MR; ++i) {
      acc0[i] = _mm512_maskz_loadu_ps(m0, c + i * ldc);
      acc1[i] = _mm512_maskz_loadu_ps(m1, c + i * ldc + 16);
    }
  } else {
    for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  }
  for (size_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
    if (MR <= kPrefetchRows) {
      _mm_prefetch(reinterpret_cast<const char*>(b + 512), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(b + 528), _MM_HINT_T0);
    }
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
    b += 32;
  }
  if (flags & kGemmFinal) {
    if (ep->alpha != 1.0f) {
      const __m512 al = _mm512_set1_ps(ep->alpha);
      for (int i = 0; i < MR; ++i) {
        acc0[i] = _mm512_mul_ps(al, acc0[i]);
        acc1[i] = _mm512_mul_ps(al, acc1[i]);
      }
    }
    if (ep->bias != nullptr) {
      const __m512 be = _mm512_set1_ps(ep->beta);
      for (int i = 0; i < MR; ++i) {
        const float* row = ep->bias + ptrdiff_t(i) * ep->bias_rs;
        __m512 v0, v1;
        if (ep->bias_cs == 0) {
          v0 = v1 = _mm512_set1_ps(*row);
        } else {
          v0 = _mm512_maskz_loadu_ps(m0, row);
          v1 = _mm512_maskz_loadu_ps(m1, row + 16);
        }
        acc0[i] = _mm512_fmadd_ps(be, v0, acc0[i]);
        acc1[i] = _mm512_fmadd_ps(be, v1, acc1[i]);
      }
    }
  }
  for (int i = 0; i < MR; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);
  }
}

}  // namespace

void f32_gemm_14x32_avx512(size_t mr, size_t nr, size_t kc, const float* a, const float* b,
                           float* c, size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
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
    case 7:
      return tile<7>(nr, kc, a, b, c, ldc, flags, ep);
    case 8:
      return tile<8>(nr, kc, a, b, c, ldc, flags, ep);
    case 9:
      return tile<9>(nr, kc, a, b, c, ldc, flags, ep);
    case 10:
      return tile<10>(nr, kc, a, b, c, ldc, flags, ep);
    case 11:
      return tile<11>(nr, kc, a, b, c, ldc, flags, ep);
    case 12:
      return tile<12>(nr, kc, a, b, c, ldc, flags, ep);
    case 13:
      return tile<13>(nr, kc, a, b, c, ldc, flags, ep);
    case 14:
      return tile<14>(nr, kc, a, b, c, ldc, flags, ep);
    default:
      return;
  }
}

}  // namespace onnx_prepack::kernels
