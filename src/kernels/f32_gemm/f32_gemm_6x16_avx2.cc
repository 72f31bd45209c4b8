// AVX2 + FMA microkernel: up to 6 rows x 16 columns, 12 ymm accumulators, two
// B vectors per k and one broadcast A value. See f32_gemm.h for the contract.
#include <immintrin.h>

#include <cmath>

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

// As in the AVX-512 kernel: accumulators stay in registers from the C load
// (a zero mask loads zeros when not accumulating) to the C store, and the
// epilogue runs on the stored tile with the same operations.
template <int MR>
void tile(size_t nr, size_t kc, const float* a, const float* b, float* c, size_t ldc,
          uint32_t flags, const F32GemmEpilogue* ep) {
  const bool acc_c = (flags & kGemmAccumulate) != 0;
  __m256 acc0[MR], acc1[MR];
  {
    const __m256i l0 = lanes(acc_c ? nr : 0);
    const __m256i l1 = lanes(acc_c && nr > 8 ? nr - 8 : 0);
    for (int i = 0; i < MR; ++i) {
      acc0[i] = _mm256_maskload_ps(c + i * ldc, l0);
      acc1[i] = _mm256_maskload_ps(c + i * ldc + 8, l1);
    }
  }
  const char* pf = static_cast<const char*>(ep->prefetch_l2 ? ep->prefetch_l2 : b);
  size_t k = kc;  // >= 1: the caller handles kc == 0
  do {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    _mm_prefetch(reinterpret_cast<const char*>(b + 256), _MM_HINT_T0);
    _mm_prefetch(pf, _MM_HINT_T1);
    pf += 64;
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
    b += 16;
  } while (--k != 0);
  const __m256i m0 = lanes(nr);
  const __m256i m1 = lanes(nr > 8 ? nr - 8 : 0);
  for (int i = 0; i < MR; ++i) {
    _mm256_maskstore_ps(c + i * ldc, m0, acc0[i]);
    _mm256_maskstore_ps(c + i * ldc + 8, m1, acc1[i]);
  }
  if (!(flags & kGemmFinal)) return;
  const bool scale = ep->alpha != 1.0f;
  if (!scale && ep->bias == nullptr) return;
  const __m256 al = _mm256_set1_ps(ep->alpha);
  const __m256 be = _mm256_set1_ps(ep->beta);
  for (int i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    __m256 v0 = _mm256_maskload_ps(row, m0);
    __m256 v1 = _mm256_maskload_ps(row + 8, m1);
    if (scale) {
      v0 = _mm256_mul_ps(al, v0);
      v1 = _mm256_mul_ps(al, v1);
    }
    if (ep->bias != nullptr) {
      const float* brow = ep->bias + ptrdiff_t(i) * ep->bias_rs;
      __m256 w0, w1;
      if (ep->bias_cs == 0) {
        w0 = w1 = _mm256_set1_ps(*brow);
      } else {
        w0 = _mm256_maskload_ps(brow, m0);
        w1 = _mm256_maskload_ps(brow + 8, m1);
      }
      v0 = _mm256_fmadd_ps(be, w0, v0);
      v1 = _mm256_fmadd_ps(be, w1, v1);
    }
    _mm256_maskstore_ps(row, m0, v0);
    _mm256_maskstore_ps(row + 8, m1, v1);
  }
}

// kc == 0: row i of the tile is c (accumulating) or 0, then the epilogue.
void empty_row(size_t nr, float* c, uint32_t flags, const F32GemmEpilogue* ep, size_t i) {
  if (!(flags & kGemmAccumulate)) {
    for (size_t j = 0; j < nr; ++j) c[j] = 0.0f;
  }
  if (!(flags & kGemmFinal)) return;
  for (size_t j = 0; j < nr; ++j) {
    float v = c[j];
    if (ep->alpha != 1.0f) v = ep->alpha * v;
    if (ep->bias != nullptr) {
      v = std::fma(ep->beta, ep->bias[ptrdiff_t(i) * ep->bias_rs + ptrdiff_t(j) * ep->bias_cs], v);
    }
    c[j] = v;
  }
}

}  // namespace

void f32_gemm_6x16_avx2(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                        size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  if (kc == 0) {
    for (size_t i = 0; i < mr; ++i) empty_row(nr, c + i * ldc, flags, ep, i);
    return;
  }
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
