// AVX2 + F16C B packing: row copies for K x N sources, 8 x 8 register
// transposes for N x K sources, binary16 widened with vcvtph2ps (exact).
// Writes the same bytes as f32_pack_b_ref.
#include <immintrin.h>

#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {
namespace {

__m256 load8(const void* base, size_t idx, bool half) {
  if (half) {
    const uint16_t* p = static_cast<const uint16_t*>(base) + idx;
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  return _mm256_loadu_ps(static_cast<const float*>(base) + idx);
}

float load1(const void* base, size_t idx, bool half) {
  if (half) {
    const uint16_t* p = static_cast<const uint16_t*>(base) + idx;
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(*p)));
  }
  return static_cast<const float*>(base)[idx];
}

void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

void pack_kn(const F32PackBArgs* args, size_t p, bool half) {
  const size_t k_total = args->k, n = args->n, nr = args->nr;
  float* dst = args->dst + p * k_total * nr;
  const size_t j0 = p * nr;
  const size_t cols = n - j0 < nr ? n - j0 : nr;
  const size_t full = cols & ~size_t(7);
  const size_t ld = args->ld != 0 ? args->ld : n;
  for (size_t k = 0; k < k_total; ++k) {
    float* d = dst + k * nr;
    const size_t row = k * ld + j0;
    size_t j = 0;
    for (; j < full; j += 8) _mm256_storeu_ps(d + j, load8(args->src, row + j, half));
    for (; j < cols; ++j) d[j] = load1(args->src, row + j, half);
    for (; j < nr; ++j) d[j] = 0.0f;
  }
}

void pack_nk(const F32PackBArgs* args, size_t p, bool half) {
  const size_t k_total = args->k, n = args->n, nr = args->nr;
  float* dst = args->dst + p * k_total * nr;
  const size_t j0 = p * nr;
  const size_t cols = n - j0 < nr ? n - j0 : nr;
  const size_t k_full = k_total & ~size_t(7);
  const size_t ld = args->ld != 0 ? args->ld : k_total;
  for (size_t jg = 0; jg < nr; jg += 8) {
    const size_t rows = cols > jg ? (cols - jg < 8 ? cols - jg : 8) : 0;
    size_t k = 0;
    if (rows == 8) {
      for (; k < k_full; k += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i) r[i] = load8(args->src, (j0 + jg + i) * ld + k, half);
        transpose8(r);
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (k + i) * nr + jg, r[i]);
      }
    }
    for (; k < k_total; ++k) {
      float* d = dst + k * nr + jg;
      size_t i = 0;
      for (; i < rows; ++i) d[i] = load1(args->src, (j0 + jg + i) * ld + k, half);
      for (; i < 8; ++i) d[i] = 0.0f;
    }
  }
}

}  // namespace

void f32_pack_b_avx2(const F32PackBArgs* args, size_t panel_begin, size_t panel_end) {
  const bool half = args->type == PackSourceType::kFloat16;
  for (size_t p = panel_begin; p < panel_end; ++p) {
    if (args->layout == PackSourceLayout::kKN) {
      pack_kn(args, p, half);
    } else {
      pack_nk(args, p, half);
    }
  }
}

}  // namespace onnx_prepack::kernels
