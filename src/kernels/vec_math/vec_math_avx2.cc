// AVX2+FMA variants of vec_math.h: 8 lanes, masked tails. Every FMA is explicit
// so that the elementwise results match vec_math_ref.cc bit for bit.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/vec_math/vec_exp_avx2.h"
#include "kernels/vec_math/vec_math.h"

namespace onnx_prepack::kernels::vec {

// Lanes [0, n) set, n <= 8.
static __m256i v256_tail(size_t n) {
  alignas(32) static const int32_t kLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLanes + 8 - n));
}

static float v256_hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static float v256_hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static __m256 v256_abs(__m256 x) {
  return _mm256_castsi256_ps(
      _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff)));
}

// |t| with the sign of x.
static __m256 v256_copysign(__m256 t, __m256 x) {
  const __m256i sign =
      _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(int(0x80000000u)));
  return _mm256_castsi256_ps(_mm256_or_si256(
      _mm256_and_si256(_mm256_castps_si256(t), _mm256_set1_epi32(0x7fffffff)), sign));
}

static __m256 v256_tanh(__m256 x) {
  const __m256 ax = v256_abs(x);
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 q = _mm256_set1_ps(3.59212803657248102e-3f);
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-8.86323552990219656e-3f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(2.18694885361552028e-2f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-5.39682539682539683e-2f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(1.33333333333333333e-1f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-3.33333333333333333e-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(x, x2), q, x);
  const __m256 e =
      exp_avx2(_mm256_mul_ps(_mm256_set1_ps(-2.0f), _mm256_min_ps(_mm256_set1_ps(9.0f), ax)));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  const __m256 large = v256_copysign(t, x);
  const __m256 is_small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.375f), _CMP_LT_OQ);
  return _mm256_blendv_ps(large, small, is_small);
}

static __m256 v256_erf(__m256 x) {
  const __m256 ax = v256_abs(x);
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 q = _mm256_set1_ps(1.64621143658892462e-6f);
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-1.49256503584062500e-5f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(1.20553329817896643e-4f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-8.54832702345085085e-4f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(5.22397762544218797e-3f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-2.68661706451312525e-2f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(1.12837916709551257e-1f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-3.76126389031837538e-1f));
  q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(1.12837916709551257f));
  const __m256 small = _mm256_mul_ps(x, q);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), ax, one));
  __m256 p = _mm256_set1_ps(1.061405429f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
  p = _mm256_mul_ps(p, t);
  const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), x2));
  const __m256 large = v256_copysign(_mm256_fnmadd_ps(p, e, one), x);
  const __m256 is_small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.75f), _CMP_LT_OQ);
  return _mm256_blendv_ps(large, small, is_small);
}

static __m256 v256_gelu(__m256 v) {
  const __m256 e = v256_erf(_mm256_mul_ps(v, _mm256_set1_ps(0.707106781186547524f)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
                       _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

static __m256 v256_gelu_tanh(__m256 v) {
  const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.797884560802865356f),
                                 _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), v3, v));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
                       _mm256_add_ps(_mm256_set1_ps(1.0f), v256_tanh(u)));
}

static __m256 v256_op(int op, __m256 a, __m256 b) {
  switch (op) {
    case kAdd:
      return _mm256_add_ps(a, b);
    case kSub:
      return _mm256_sub_ps(a, b);
    case kMul:
      return _mm256_mul_ps(a, b);
    default:
      return _mm256_div_ps(a, b);
  }
}

void f32_binary_avx2(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                     size_t n) {
  const __m256 av = sa ? _mm256_setzero_ps() : _mm256_set1_ps(a[0]);
  const __m256 bv = sb ? _mm256_setzero_ps() : _mm256_set1_ps(b[0]);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = sa ? _mm256_loadu_ps(a + i) : av;
    const __m256 y = sb ? _mm256_loadu_ps(b + i) : bv;
    _mm256_storeu_ps(o + i, v256_op(op, x, y));
  }
  if (i < n) {
    const __m256i m = v256_tail(n - i);
    const __m256 x = sa ? _mm256_maskload_ps(a + i, m) : av;
    // Masked-off lanes divide 0 by 1, never by 0.
    const __m256 y = sb ? _mm256_blendv_ps(_mm256_set1_ps(1.0f), _mm256_maskload_ps(b + i, m),
                                           _mm256_castsi256_ps(m))
                        : bv;
    _mm256_maskstore_ps(o + i, m, v256_op(op, x, y));
  }
}

static void v256_unary(__m256 (*f)(__m256), const float* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i m = v256_tail(n - i);
    _mm256_maskstore_ps(y + i, m, f(_mm256_maskload_ps(x + i, m)));
  }
}

void f32_erf_avx2(const float* x, float* y, size_t n) { v256_unary(v256_erf, x, y, n); }
void f32_exp_avx2(const float* x, float* y, size_t n) { v256_unary(exp_avx2, x, y, n); }
void f32_tanh_avx2(const float* x, float* y, size_t n) { v256_unary(v256_tanh, x, y, n); }
void f32_gelu_avx2(const float* x, float* y, size_t n) { v256_unary(v256_gelu, x, y, n); }
void f32_gelu_tanh_avx2(const float* x, float* y, size_t n) { v256_unary(v256_gelu_tanh, x, y, n); }

void f32_softmax_rows_avx2(const float* x, float* y, size_t rows, size_t len) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  const size_t full = len / 8 * 8;
  const __m256i tail = v256_tail(len - full);
  const __m256 tailf = _mm256_castsi256_ps(tail);
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    __m256 mx = ninf;
    size_t j = 0;
    for (; j < full; j += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(xr + j));
    if (full < len) {
      mx = _mm256_max_ps(mx, _mm256_blendv_ps(ninf, _mm256_maskload_ps(xr + full, tail), tailf));
    }
    const __m256 m = _mm256_set1_ps(v256_hmax(mx));
    __m256 sum = _mm256_setzero_ps();
    for (j = 0; j < full; j += 8) {
      const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(xr + j), m));
      _mm256_storeu_ps(yr + j, e);
      sum = _mm256_add_ps(sum, e);
    }
    if (full < len) {
      const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_maskload_ps(xr + full, tail), m));
      _mm256_maskstore_ps(yr + full, tail, e);
      sum = _mm256_add_ps(sum, _mm256_and_ps(e, tailf));
    }
    const __m256 inv = _mm256_set1_ps(1.0f / v256_hsum(sum));
    for (j = 0; j < full; j += 8) {
      _mm256_storeu_ps(yr + j, _mm256_mul_ps(_mm256_loadu_ps(yr + j), inv));
    }
    if (full < len) {
      _mm256_maskstore_ps(yr + full, tail, _mm256_mul_ps(_mm256_maskload_ps(yr + full, tail), inv));
    }
  }
}

void f32_layer_norm_rows_avx2(const float* x, const float* scale, const float* bias, float* y,
                              float* mean, float* inv_std, size_t rows, size_t len, float eps) {
  const size_t full = len / 8 * 8;
  const __m256i tail = v256_tail(len - full);
  const __m256 tailf = _mm256_castsi256_ps(tail);
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    size_t j = 0;
    for (; j + 16 <= full; j += 16) {
      s0 = _mm256_add_ps(s0, _mm256_loadu_ps(xr + j));
      s1 = _mm256_add_ps(s1, _mm256_loadu_ps(xr + j + 8));
    }
    for (; j < full; j += 8) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(xr + j));
    if (full < len) s1 = _mm256_add_ps(s1, _mm256_maskload_ps(xr + full, tail));
    const float mu = v256_hsum(_mm256_add_ps(s0, s1)) / float(len);
    const __m256 muv = _mm256_set1_ps(mu);
    s0 = _mm256_setzero_ps();
    s1 = _mm256_setzero_ps();
    for (j = 0; j + 16 <= full; j += 16) {
      const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(xr + j), muv);
      const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(xr + j + 8), muv);
      s0 = _mm256_fmadd_ps(d0, d0, s0);
      s1 = _mm256_fmadd_ps(d1, d1, s1);
    }
    for (; j < full; j += 8) {
      const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(xr + j), muv);
      s0 = _mm256_fmadd_ps(d, d, s0);
    }
    if (full < len) {
      const __m256 d =
          _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(xr + full, tail), muv), tailf);
      s1 = _mm256_fmadd_ps(d, d, s1);
    }
    const float var = v256_hsum(_mm256_add_ps(s0, s1)) / float(len);
    const float inv = 1.0f / std::sqrt(var + eps);
    if (mean) mean[r] = mu;
    if (inv_std) inv_std[r] = inv;
    const __m256 iv = _mm256_set1_ps(inv);
    for (j = 0; j < full; j += 8) {
      const __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + j), muv), iv);
      const __m256 s = _mm256_loadu_ps(scale + j);
      _mm256_storeu_ps(
          yr + j, bias ? _mm256_fmadd_ps(v, s, _mm256_loadu_ps(bias + j)) : _mm256_mul_ps(v, s));
    }
    if (full < len) {
      const __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(xr + full, tail), muv), iv);
      const __m256 s = _mm256_maskload_ps(scale + full, tail);
      _mm256_maskstore_ps(yr + full, tail,
                          bias ? _mm256_fmadd_ps(v, s, _mm256_maskload_ps(bias + full, tail))
                               : _mm256_mul_ps(v, s));
    }
  }
}

}  // namespace onnx_prepack::kernels::vec
