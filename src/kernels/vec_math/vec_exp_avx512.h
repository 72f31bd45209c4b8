// The one exp polynomial of the AVX-512 variants (vec_math_avx512.cc, vec_act_avx512.cc): the
// operation sequence of exp_ref (vec_exp_ref.h) on 16 lanes, so both give the same bits.
// Included by *_avx512.cc translation units only (their flags, cmake/isa.cmake); internal
// linkage keeps each unit's copy compiled with that unit's flags.
#pragma once

#include <immintrin.h>

namespace onnx_prepack::kernels::vec {
namespace {

// e^x for x <= 88 (clamped to 88 above); 0 below ln(2^-126); NaN stays NaN.
inline __m512 exp_avx512(__m512 x) {
  const __mmask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3365478515625f), _CMP_LT_OQ);
  x = _mm512_max_ps(_mm512_set1_ps(-87.3365478515625f), _mm512_min_ps(_mm512_set1_ps(88.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693145751953125f), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-1.42860682028622680e-06f), r);
  __m512 p = _mm512_set1_ps(1.98412698412698413e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.38888888888888889e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.33333333333333333e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.16666666666666667e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.66666666666666667e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i bits =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  const __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
  return _mm512_mask_blend_ps(under, y, _mm512_setzero_ps());
}

}  // namespace
}  // namespace onnx_prepack::kernels::vec
