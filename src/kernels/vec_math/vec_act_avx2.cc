// AVX2+FMA variant of vec_act.h: 8 lanes, masked tails; the same operation
// sequence as vec_act_ref.cc.
#include <immintrin.h>

#include <cstdint>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_exp_avx2.h"

namespace onnx_prepack::kernels::vec {
namespace {

__m256i tail_mask(size_t n) {
  alignas(32) static const int32_t kLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLanes + 8 - n));
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
    __m256 y = exp_avx2(x);
    if (_mm256_movemask_ps(big)) {
      const __m256 hi = _mm256_mul_ps(exp_avx2(_mm256_sub_ps(x, _mm256_set1_ps(88.0f))),
                                      _mm256_set1_ps(1.6516362549940018e38f));
      y = _mm256_blendv_ps(y, hi, big);
    }
    const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, x), nan);
  }
  if constexpr (op == kActSigmoid) {
    const __m256 ax = _mm256_castsi256_ps(
        _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff)));
    const __m256 e = exp_avx2(_mm256_sub_ps(zero, ax));
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
  const bool vectorised = with_act_op(op, [&]<int kOp>() { run<kOp>(x, y, n, p0, p1); });
  if (!vectorised) f32_act_ref(op, x, y, n, p0, p1);
}

}  // namespace onnx_prepack::kernels::vec
