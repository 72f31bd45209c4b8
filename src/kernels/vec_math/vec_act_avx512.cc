// AVX-512F variant of vec_act.h: 16 lanes, masked tails; the same operation
// sequence as vec_act_ref.cc.
// g++-12 warns inside its own avx512fintrin.h (_mm512_undefined_ps, GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_exp_avx512.h"

namespace onnx_prepack::kernels::vec {
namespace {

template <int op>
__m512 act(__m512 x, __m512 p0, __m512 p1) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  if constexpr (op == kActClip) return _mm512_min_ps(p1, _mm512_max_ps(p0, x));
  if constexpr (op == kActHardSigmoid)
    return _mm512_max_ps(zero, _mm512_min_ps(one, _mm512_fmadd_ps(p0, x, p1)));
  if constexpr (op == kActHardSwish) {
    const __m512 h = _mm512_fmadd_ps(x, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
    return _mm512_mul_ps(x, _mm512_max_ps(zero, _mm512_min_ps(one, h)));
  }
  if constexpr (op == kActLeakyRelu) {
    const __mmask16 pos = _mm512_cmp_ps_mask(x, zero, _CMP_GE_OQ);
    return _mm512_mask_blend_ps(pos, _mm512_mul_ps(x, p0), x);
  }
  if constexpr (op == kActExp) {
    const __mmask16 big = _mm512_cmp_ps_mask(x, _mm512_set1_ps(88.0f), _CMP_GT_OQ);
    __m512 y = exp_avx512(x);
    if (big) {
      const __m512 hi = _mm512_mul_ps(exp_avx512(_mm512_sub_ps(x, _mm512_set1_ps(88.0f))),
                                      _mm512_set1_ps(1.6516362549940018e38f));
      y = _mm512_mask_blend_ps(big, y, hi);
    }
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, y, _mm512_add_ps(x, x));
  }
  if constexpr (op == kActSigmoid) {
    const __m512 ax = _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
    const __m512 e = exp_avx512(_mm512_sub_ps(zero, ax));
    const __m512 inv = _mm512_div_ps(one, _mm512_add_ps(one, e));
    const __mmask16 pos = _mm512_cmp_ps_mask(x, zero, _CMP_GE_OQ);
    const __m512 y = _mm512_mask_blend_ps(pos, _mm512_mul_ps(e, inv), inv);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, y, _mm512_add_ps(x, x));
  }
  return x;
}

template <int op>
void run(const float* x, float* y, size_t n, float p0, float p1) {
  const __m512 a = _mm512_set1_ps(p0), b = _mm512_set1_ps(p1);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, act<op>(_mm512_loadu_ps(x + i), a, b));
  if (i < n) {
    const __mmask16 m = __mmask16((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, act<op>(_mm512_maskz_loadu_ps(m, x + i), a, b));
  }
}

}  // namespace

void f32_act_avx512(int op, const float* x, float* y, size_t n, float p0, float p1) {
  const bool vectorised = with_act_op(op, [&]<int kOp>() { run<kOp>(x, y, n, p0, p1); });
  if (!vectorised) f32_act_ref(op, x, y, n, p0, p1);
}

}  // namespace onnx_prepack::kernels::vec
