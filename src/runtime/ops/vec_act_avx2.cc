// AVX2+FMA variant of vec_act.h: 8 lanes, masked tails; the same operation
// sequence as vec_act_ref.cc.
#include <immintrin.h>

#include <cstdint>

#include "runtime/ops/vec_act.h"

namespace onnx_prepack::runtime::vec {
namespace {

__m256i tail_mask(size_t n) {
  alignas(32) static const int32_t kLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLanes + 8 - n));
}

__m256 exp_core(__m256 x) {
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

template <int op>
__m256 act(__m256 x, __m256 p0, __m256 p1) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  if constexpr (op == kActClip) return _mm256_min_ps(p1, _mm256_max_ps(p0, x));
  if constexpr (op == kActHardSigmoid)
    return _mm256_max_ps(zero, _mm256_min_ps(one, _mm256_fmadd_ps(p0, x, p1)));
  if constexpr (op == kActHardSwish) {
    const __m256 h = _mm256_fmadd_ps(x, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
    return _mm256_mul_ps(x, _mm256_max_ps(zero, _mm256_min_ps(one, h)));
  }
  if constexpr (op == kActLeakyRelu) {
    const __m256 neg = _mm256_cmp_ps(x, zero, _CMP_GE_OQ);
    return _mm256_blendv_ps(_mm256_mul_ps(x, p0), x, neg);
  }
  if constexpr (op == kActExp) {
    const __m256 big = _mm256_cmp_ps(x, _mm256_set1_ps(88.0f), _CMP_GT_OQ);
    __m256 y = exp_core(x);
    if (_mm256_movemask_ps(big)) {
      const __m256 hi = _mm256_mul_ps(exp_core(_mm256_sub_ps(x, _mm256_set1_ps(88.0f))),
                                      _mm256_set1_ps(1.6516362549940018e38f));
      y = _mm256_blendv_ps(y, hi, big);
    }
    const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), nan);
  }
  if constexpr (op == kActSigmoid) {
    const __m256 ax = _mm256_castsi256_ps(
        _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff)));
    const __m256 e = exp_core(_mm256_sub_ps(zero, ax));
    const __m256 inv = _mm256_div_ps(one, _mm256_add_ps(one, e));
    const __m256 pos = _mm256_cmp_ps(x, zero, _CMP_GE_OQ);
    const __m256 y = _mm256_blendv_ps(_mm256_mul_ps(e, inv), inv, pos);
    const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), nan);
  }
  return x;
}

template <int op>
void run(const float* x, float* y, size_t n, float p0, float p1) {
  const __m256 a = _mm256_set1_ps(p0), b = _mm256_set1_ps(p1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, act<op>(_mm256_loadu_ps(x + i), a, b));
  if (i < n) {
    const __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, act<op>(_mm256_maskload_ps(x + i, m), a, b));
  }
}

}  // namespace

void f32_act_avx2(int op, const float* x, float* y, size_t n, float p0, float p1) {
  switch (op) {
    case kActClip:
      return run<kActClip>(x, y, n, p0, p1);
    case kActHardSigmoid:
      return run<kActHardSigmoid>(x, y, n, p0, p1);
    case kActHardSwish:
      return run<kActHardSwish>(x, y, n, p0, p1);
    case kActLeakyRelu:
      return run<kActLeakyRelu>(x, y, n, p0, p1);
    case kActExp:
      return run<kActExp>(x, y, n, p0, p1);
    case kActSigmoid:
      return run<kActSigmoid>(x, y, n, p0, p1);
    default:
      f32_act_ref(op, x, y, n, p0, p1);
  }
}

}  // namespace onnx_prepack::runtime::vec
