// AVX-512F indirect Conv microkernel: up to 14 output channels x 32 output
// pixels of one output row, 28 zmm accumulators started from the bias; filter
// row k reads the 32 input pixels at base + offs[k] of the zero-padded input
// (no unfold). See f32_conv.h for the contract. The accumulator loops are
// unrolled by pragma: without it GCC 12 keeps the arrays on the stack and
// stores every accumulator each filter row.
#include <immintrin.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

constexpr size_t kPrefetch = kConvIndirectPrefetch;

template <int MR>
void tile(size_t nr, size_t k, const float* a, const float* base, const ptrdiff_t* offs,
          const float* bias, float* c, size_t ldc) {
  const __mmask16 m0 = nr >= 16 ? __mmask16(0xffff) : __mmask16((1u << nr) - 1);
  const __mmask16 m1 =
      nr >= 32 ? __mmask16(0xffff) : (nr > 16 ? __mmask16((1u << (nr - 16)) - 1) : __mmask16(0));
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    acc0[i] = acc1[i] = bias ? _mm512_set1_ps(bias[i]) : _mm512_setzero_ps();
  }
  for (size_t kk = 0; kk < k; ++kk) {
    const float* b = base + offs[kk];
    // The runs jump between input planes, which no hardware prefetcher follows:
    // fetch the run kPrefetch filter rows ahead (offs has that many extra entries).
    const char* pf = reinterpret_cast<const char*>(base + offs[kk + kPrefetch]);
    _mm_prefetch(pf, _MM_HINT_T0);
    _mm_prefetch(pf + 64, _MM_HINT_T0);
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
    a += MR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);
  }
}

}  // namespace

void conv_indirect_14x32_avx512(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                                const ptrdiff_t* offs, const float* bias, float* c, size_t ldc) {
  switch (mr) {
#define OP_CASE(n) \
  case n:          \
    return tile<n>(nr, k, a, base, offs, bias, c, ldc);
    OP_CASE(1)
    OP_CASE(2)
    OP_CASE(3)
    OP_CASE(4)
    OP_CASE(5)
    OP_CASE(6)
    OP_CASE(7)
    OP_CASE(8)
    OP_CASE(9)
    OP_CASE(10)
    OP_CASE(11)
    OP_CASE(12)
    OP_CASE(13)
    OP_CASE(14)
#undef OP_CASE
    default:
      return;
  }
}

}  // namespace onnx_prepack::kernels
