// AVX-512F variants of vec_math.h: 16 lanes, masked tails. Every FMA is
// explicit so that the elementwise results match vec_math_ref.cc bit for bit.
// g++-12 warns inside its own avx512fintrin.h (_mm512_undefined_ps, GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/vec_math/vec_exp_avx512.h"
#include "kernels/vec_math/vec_math.h"

namespace onnx_prepack::kernels::vec {

static __mmask16 v512_tail(size_t n) { return __mmask16((1u << n) - 1u); }

static __m512 v512_abs(__m512 x) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
}

// |t| with the sign of x.
static __m512 v512_copysign(__m512 t, __m512 x) {
  const __m512i sign =
      _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(int(0x80000000u)));
  return _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_and_si512(_mm512_castps_si512(t), _mm512_set1_epi32(0x7fffffff)), sign));
}

static __m512 v512_tanh(__m512 x) {
  const __m512 ax = v512_abs(x);
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 q = _mm512_set1_ps(3.59212803657248102e-3f);
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-8.86323552990219656e-3f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(2.18694885361552028e-2f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-5.39682539682539683e-2f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(1.33333333333333333e-1f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-3.33333333333333333e-1f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(x, x2), q, x);
  const __m512 e =
      exp_avx512(_mm512_mul_ps(_mm512_set1_ps(-2.0f), _mm512_min_ps(_mm512_set1_ps(9.0f), ax)));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
  const __m512 large = v512_copysign(t, x);
  const __mmask16 is_small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.375f), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(is_small, large, small);
}

static __m512 v512_erf(__m512 x) {
  const __m512 ax = v512_abs(x);
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 q = _mm512_set1_ps(1.64621143658892462e-6f);
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-1.49256503584062500e-5f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(1.20553329817896643e-4f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-8.54832702345085085e-4f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(5.22397762544218797e-3f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-2.68661706451312525e-2f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(1.12837916709551257e-1f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-3.76126389031837538e-1f));
  q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(1.12837916709551257f));
  const __m512 small = _mm512_mul_ps(x, q);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), ax, one));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  p = _mm512_mul_ps(p, t);
  const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), x2));
  const __m512 large = v512_copysign(_mm512_fnmadd_ps(p, e, one), x);
  const __mmask16 is_small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.75f), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(is_small, large, small);
}

static __m512 v512_gelu(__m512 v) {
  const __m512 e = v512_erf(_mm512_mul_ps(v, _mm512_set1_ps(0.707106781186547524f)));
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v),
                       _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

static __m512 v512_gelu_tanh(__m512 v) {
  const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
  const __m512 u = _mm512_mul_ps(_mm512_set1_ps(0.797884560802865356f),
                                 _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), v3, v));
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v),
                       _mm512_add_ps(_mm512_set1_ps(1.0f), v512_tanh(u)));
}

static __m512 v512_op(int op, __m512 a, __m512 b) {
  switch (op) {
    case kAdd:
      return _mm512_add_ps(a, b);
    case kSub:
      return _mm512_sub_ps(a, b);
    case kMul:
      return _mm512_mul_ps(a, b);
    default:
      return _mm512_div_ps(a, b);
  }
}

void f32_binary_avx512(int op, const float* a, size_t sa, const float* b, size_t sb, float* o,
                       size_t n) {
  const __m512 av = sa ? _mm512_setzero_ps() : _mm512_set1_ps(a[0]);
  const __m512 bv = sb ? _mm512_setzero_ps() : _mm512_set1_ps(b[0]);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = sa ? _mm512_loadu_ps(a + i) : av;
    const __m512 y = sb ? _mm512_loadu_ps(b + i) : bv;
    _mm512_storeu_ps(o + i, v512_op(op, x, y));
  }
  if (i < n) {
    const __mmask16 m = v512_tail(n - i);
    const __m512 x = sa ? _mm512_maskz_loadu_ps(m, a + i) : av;
    // Masked-off lanes divide 0 by 1, never by 0.
    const __m512 y = sb ? _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, b + i) : bv;
    _mm512_mask_storeu_ps(o + i, m, v512_op(op, x, y));
  }
}

static void v512_unary(__m512 (*f)(__m512), const float* x, float* y, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = v512_tail(n - i);
    _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

void f32_erf_avx512(const float* x, float* y, size_t n) { v512_unary(v512_erf, x, y, n); }
void f32_exp_avx512(const float* x, float* y, size_t n) { v512_unary(exp_avx512, x, y, n); }
void f32_tanh_avx512(const float* x, float* y, size_t n) { v512_unary(v512_tanh, x, y, n); }
void f32_gelu_avx512(const float* x, float* y, size_t n) { v512_unary(v512_gelu, x, y, n); }
void f32_gelu_tanh_avx512(const float* x, float* y, size_t n) {
  v512_unary(v512_gelu_tanh, x, y, n);
}

void f32_softmax_rows_avx512(const float* x, float* y, size_t rows, size_t len) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    __m512 mx = ninf;
    size_t j = 0;
    for (; j + 16 <= len; j += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(xr + j));
    const __mmask16 tail = v512_tail(len - j);
    if (j < len) mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(ninf, tail, xr + j));
    const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 sum = _mm512_setzero_ps();
    for (j = 0; j + 16 <= len; j += 16) {
      const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(xr + j), m));
      _mm512_storeu_ps(yr + j, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (j < len) {
      const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xr + j), m));
      _mm512_mask_storeu_ps(yr + j, tail, e);
      sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(tail, e));
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
    for (j = 0; j + 16 <= len; j += 16) {
      _mm512_storeu_ps(yr + j, _mm512_mul_ps(_mm512_loadu_ps(yr + j), inv));
    }
    if (j < len) {
      _mm512_mask_storeu_ps(yr + j, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, yr + j), inv));
    }
  }
}

void f32_layer_norm_rows_avx512(const float* x, const float* scale, const float* bias, float* y,
                                float* mean, float* inv_std, size_t rows, size_t len, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    size_t j = 0;
    const __mmask16 tail = v512_tail(len % 16);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    for (; j + 32 <= len; j += 32) {
      s0 = _mm512_add_ps(s0, _mm512_loadu_ps(xr + j));
      s1 = _mm512_add_ps(s1, _mm512_loadu_ps(xr + j + 16));
    }
    for (; j + 16 <= len; j += 16) s0 = _mm512_add_ps(s0, _mm512_loadu_ps(xr + j));
    if (j < len) s1 = _mm512_add_ps(s1, _mm512_maskz_loadu_ps(tail, xr + j));
    const float mu = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / float(len);
    const __m512 muv = _mm512_set1_ps(mu);
    s0 = _mm512_setzero_ps();
    s1 = _mm512_setzero_ps();
    for (j = 0; j + 32 <= len; j += 32) {
      const __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(xr + j), muv);
      const __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(xr + j + 16), muv);
      s0 = _mm512_fmadd_ps(d0, d0, s0);
      s1 = _mm512_fmadd_ps(d1, d1, s1);
    }
    for (; j + 16 <= len; j += 16) {
      const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(xr + j), muv);
      s0 = _mm512_fmadd_ps(d, d, s0);
    }
    if (j < len) {
      const __m512 d = _mm512_maskz_sub_ps(tail, _mm512_maskz_loadu_ps(tail, xr + j), muv);
      s1 = _mm512_fmadd_ps(d, d, s1);
    }
    const float var = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) / float(len);
    const float inv = 1.0f / std::sqrt(var + eps);
    if (mean) mean[r] = mu;
    if (inv_std) inv_std[r] = inv;
    const __m512 iv = _mm512_set1_ps(inv);
    for (j = 0; j + 16 <= len; j += 16) {
      const __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(xr + j), muv), iv);
      const __m512 s = _mm512_loadu_ps(scale + j);
      _mm512_storeu_ps(
          yr + j, bias ? _mm512_fmadd_ps(v, s, _mm512_loadu_ps(bias + j)) : _mm512_mul_ps(v, s));
    }
    if (j < len) {
      const __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, xr + j), muv), iv);
      const __m512 s = _mm512_maskz_loadu_ps(tail, scale + j);
      _mm512_mask_storeu_ps(yr + j, tail,
                            bias ? _mm512_fmadd_ps(v, s, _mm512_maskz_loadu_ps(tail, bias + j))
                                 : _mm512_mul_ps(v, s));
    }
  }
}

}  // namespace onnx_prepack::kernels::vec
