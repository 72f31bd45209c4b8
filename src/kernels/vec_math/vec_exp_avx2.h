// The one exp polynomial of the AVX2 variants (vec_math_avx2.cc, vec_act_avx2.cc): the
// operation sequence of exp_ref (vec_exp_ref.h) on 8 lanes, so both give the same bits.
// Included by *_avx2.cc translation units only (their flags, cmake/isa.cmake); internal
// linkage keeps each unit's copy compiled with that unit's flags.
#pragma once

#include <immintrin.h>

namespace onnx_prepack::kernels::vec {
namespace {

// e^x for x <= 88 (clamped to 88 above); 0 below ln(2^-126); NaN stays NaN.
inline __m256 exp_avx2(__m256 x) {
  const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(-87.3365478515625f), _CMP_LT_OQ);
  x = _mm256_max_ps(_mm256_set1_ps(-87.3365478515625f), _mm256_min_ps(_mm256_set1_ps(88.0f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693145751953125f), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-1.42860682028622680e-06f), r);
  __m256 p = _mm256_set1_ps(1.98412698412698413e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.38888888888888889e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.33333333333333333e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.16666666666666667e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.66666666666666667e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  return _mm256_blendv_ps(y, _mm256_setzero_ps(), under);
}

}  // namespace
}  // namespace onnx_prepack::kernels::vec
