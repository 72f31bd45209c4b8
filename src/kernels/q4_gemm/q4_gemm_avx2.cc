// AVX2 block-quantized microkernels (q4_gemm.h): a panel's 16 columns are two
// ymm halves; one row of A at a time. Level 4 builds u8 x s8 dots from
// vpmaddubsw + vpmaddwd (4-bit) or 16-bit products (8-bit).
#include <immintrin.h>

#include <algorithm>

#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels {
namespace {

template <int kBits>
inline __m256i dot4(__m256i acc, __m256i u, __m256i s) {
  if constexpr (kBits == 4) {
    const __m256i pairs = _mm256_maddubs_epi16(u, s);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  } else {
    const __m256i u_even = _mm256_and_si256(u, _mm256_set1_epi16(0x00FF));
    const __m256i u_odd = _mm256_srli_epi16(u, 8);
    const __m256i s_even = _mm256_srai_epi16(_mm256_slli_epi16(s, 8), 8);
    const __m256i s_odd = _mm256_srai_epi16(s, 8);
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(u_even, s_even));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(u_odd, s_odd));
  }
}

inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

void store_row(const QGemmShape& s, int64_t p, const __m256 (&acc)[2], float* c,
               const float* bias) {
  alignas(32) float tmp[kQPanel];
  _mm256_store_ps(tmp, acc[0]);
  _mm256_store_ps(tmp + 8, acc[1]);
  for (int64_t j = 0; j < kQPanel && p * kQPanel + j < s.N; ++j) {
    const int64_t n = p * kQPanel + j;
    c[n] = tmp[j] + (bias ? bias[n] : 0.0f);
  }
}

template <int kBits>
void l4_row(const QGemmShape& s, const QARow& a, const uint8_t* packed, int64_t p0, int64_t p1,
            float* c, const float* bias) {
  const int per_group = kBits == 4 ? 8 : 4;
  const int groups = s.block / per_group;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* rec = packed + size_t(p) * s.panel_bytes();
    __m256 facc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t kb = 0; kb < s.k_blocks(); ++kb, rec += s.record_bytes()) {
      __m256i iacc[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
      for (int g = 0; g < groups; ++g) {
        const int64_t k = kb * s.block + g * per_group;
        for (int h = 0; h < 2; ++h) {
          const __m256i v =
              _mm256_load_si256(reinterpret_cast<const __m256i*>(rec + g * 64 + h * 32));
          if constexpr (kBits == 4) {
            iacc[h] = dot4<4>(iacc[h], _mm256_and_si256(v, low4), bcast4(a.qa + k));
            iacc[h] = dot4<4>(iacc[h], _mm256_and_si256(_mm256_srli_epi16(v, 4), low4),
                              bcast4(a.qa + k + 4));
          } else {
            iacc[h] = dot4<8>(iacc[h], v, bcast4(a.qa + k));
          }
        }
      }
      const float* meta = reinterpret_cast<const float*>(rec + s.code_bytes());
      const __m256 sa = _mm256_set1_ps(a.a_scale[kb]), qsum = _mm256_set1_ps(a.a_qsum[kb]);
      for (int h = 0; h < 2; ++h) {
        const __m256 scale = _mm256_mul_ps(_mm256_load_ps(meta + 8 * h), sa);
        facc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(iacc[h]), scale, facc[h]);
        facc[h] = _mm256_fnmadd_ps(_mm256_load_ps(meta + kQPanel + 8 * h), qsum, facc[h]);
      }
    }
    store_row(s, p, facc, c, bias);
  }
}

inline __m256 lane_byte(__m256i v, int shift) {
  return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(0xFF)));
}

template <int kBits>
void l0_row(const QGemmShape& s, const QARow& a, const uint8_t* packed, int64_t p0, int64_t p1,
            float* c, const float* bias) {
  const int per_group = kBits == 4 ? 8 : 4;
  const int groups = s.block / per_group;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* rec = packed + size_t(p) * s.panel_bytes();
    __m256 facc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t kb = 0; kb < s.k_blocks(); ++kb, rec += s.record_bytes()) {
      __m256 bacc[2][2] = {{_mm256_setzero_ps(), _mm256_setzero_ps()},
                           {_mm256_setzero_ps(), _mm256_setzero_ps()}};
      for (int g = 0; g < groups; ++g) {
        const float* ak = a.a + kb * s.block + g * per_group;
        for (int h = 0; h < 2; ++h) {
          const __m256i v =
              _mm256_load_si256(reinterpret_cast<const __m256i*>(rec + g * 64 + h * 32));
          const int parts = kBits == 4 ? 2 : 1;
          for (int part = 0; part < parts; ++part) {
            const __m256i w =
                kBits == 4 ? _mm256_and_si256(part ? _mm256_srli_epi16(v, 4) : v, low4) : v;
            for (int r = 0; r < 4; ++r) {
              bacc[h][r & 1] = _mm256_fmadd_ps(lane_byte(w, 8 * r),
                                               _mm256_set1_ps(ak[part * 4 + r]), bacc[h][r & 1]);
            }
          }
        }
      }
      const float* meta = reinterpret_cast<const float*>(rec + s.code_bytes());
      const __m256 asum = _mm256_set1_ps(a.a_sum[kb]);
      for (int h = 0; h < 2; ++h) {
        facc[h] = _mm256_fmadd_ps(_mm256_add_ps(bacc[h][0], bacc[h][1]),
                                  _mm256_load_ps(meta + 8 * h), facc[h]);
        facc[h] = _mm256_fnmadd_ps(_mm256_load_ps(meta + kQPanel + 8 * h), asum, facc[h]);
      }
    }
    store_row(s, p, facc, c, bias);
  }
}

}  // namespace

void q_gemm_l0_avx2(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
                    int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  for (size_t r = 0; r < row_count; ++r) {
    if (s.bits == 4) {
      l0_row<4>(s, rows[r], packed, p0, p1, c + r * ldc, bias);
    } else {
      l0_row<8>(s, rows[r], packed, p0, p1, c + r * ldc, bias);
    }
  }
}

void q_gemm_l4_avx2(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
                    int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  for (size_t r = 0; r < row_count; ++r) {
    if (s.bits == 4) {
      l4_row<4>(s, rows[r], packed, p0, p1, c + r * ldc, bias);
    } else {
      l4_row<8>(s, rows[r], packed, p0, p1, c + r * ldc, bias);
    }
  }
}

}  // namespace onnx_prepack::kernels
