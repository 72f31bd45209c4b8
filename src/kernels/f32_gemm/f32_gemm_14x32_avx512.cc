// AVX-512F microkernel: up to 14 rows x 32 columns, 28 zmm accumulators, two
// B vectors per k and each A value broadcast from memory once (vbroadcastss, a
// load-port uop) for its two FMAs. Per k: 28 FMAs, 16 loads, 3 prefetches; the
// inner loop has no spills (objdump -d). See f32_gemm.h for the contract.
#include <immintrin.h>

#include <cmath>

#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// B is streamed (from L2 by the driver's blocking, from memory for few rows):
// fetch it into L1 this many k-rows ahead.
constexpr int kPrefetchRows = 16;

// The accumulators live in registers from the C load to the C store: the
// start is branch-free (a zero mask loads zeros when not accumulating) and the
// epilogue runs on the stored tile, element by element with the same
// operations, so no accumulator is spilled around the k loop.
template <int MR>
void tile(size_t nr, size_t kc, const float* a, const float* b, float* c, size_t ldc,
          uint32_t flags, const F32GemmEpilogue* ep) {
  const __mmask16 m0 = nr >= 16 ? __mmask16(0xffff) : __mmask16((1u << nr) - 1);
  const __mmask16 m1 =
      nr >= 32 ? __mmask16(0xffff) : (nr > 16 ? __mmask16((1u << (nr - 16)) - 1) : __mmask16(0));
  const __mmask16 l0 = (flags & kGemmAccumulate) ? m0 : __mmask16(0);
  const __mmask16 l1 = (flags & kGemmAccumulate) ? m1 : __mmask16(0);
  __m512 acc0[MR], acc1[MR];
  for (int i = 0; i < MR; ++i) {
    acc0[i] = _mm512_maskz_loadu_ps(l0, c + i * ldc);
    acc1[i] = _mm512_maskz_loadu_ps(l1, c + i * ldc + 16);
  }
  // kc >= 1 here (the caller handles kc == 0): a do-while keeps the
  // accumulators in registers on every path.
  // One line of the L2 hint per k (the current sliver again when there is none).
  const char* pf = static_cast<const char*>(ep->prefetch_l2 ? ep->prefetch_l2 : b);
  size_t k = kc;
  do {
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
    _mm_prefetch(reinterpret_cast<const char*>(b + 32 * kPrefetchRows), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 32 * kPrefetchRows + 16), _MM_HINT_T0);
    _mm_prefetch(pf, _MM_HINT_T1);
    pf += 64;
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
    b += 32;
  } while (--k != 0);
  for (int i = 0; i < MR; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);
  }
  if (!(flags & kGemmFinal)) return;
  const bool scale = ep->alpha != 1.0f;
  if (!scale && ep->bias == nullptr) return;
  const __m512 al = _mm512_set1_ps(ep->alpha);
  const __m512 be = _mm512_set1_ps(ep->beta);
  for (int i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    __m512 v0 = _mm512_maskz_loadu_ps(m0, row);
    __m512 v1 = _mm512_maskz_loadu_ps(m1, row + 16);
    if (scale) {
      v0 = _mm512_mul_ps(al, v0);
      v1 = _mm512_mul_ps(al, v1);
    }
    if (ep->bias != nullptr) {
      const float* brow = ep->bias + ptrdiff_t(i) * ep->bias_rs;
      __m512 w0, w1;
      if (ep->bias_cs == 0) {
        w0 = w1 = _mm512_set1_ps(*brow);
      } else {
        w0 = _mm512_maskz_loadu_ps(m0, brow);
        w1 = _mm512_maskz_loadu_ps(m1, brow + 16);
      }
      v0 = _mm512_fmadd_ps(be, w0, v0);
      v1 = _mm512_fmadd_ps(be, w1, v1);
    }
    _mm512_mask_storeu_ps(row, m0, v0);
    _mm512_mask_storeu_ps(row + 16, m1, v1);
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

void f32_gemm_14x32_avx512(size_t mr, size_t nr, size_t kc, const float* a, const float* b,
                           float* c, size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  if (kc == 0) {
    // An empty chain: 0 (or c) then the epilogue; the 1-row tile does it row by row.
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
