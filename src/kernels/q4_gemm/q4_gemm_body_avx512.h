// The AVX-512 block-quantized microkernels (q4_gemm.h), included by
// q4_gemm_avx512.cc (AVX-512BW: u8 x s8 dots with vpmaddubsw/vpmaddwd) and
// q4_gemm_avx512vnni.cc (the same with vpdpbusd). One zmm holds the 16
// columns of a panel; rows of A are broadcast.
#pragma once

// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on _mm512_undefined_*.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels::q_avx512 {
// Internal linkage: each including file compiles these with its own target.
namespace {

constexpr int kMaxRows = 4;

// acc + sum of 4 products u8 x s8 per int32 lane. 4-bit codes (<= 15) never
// saturate vpmaddubsw; 8-bit codes go through 16-bit products instead.
template <bool kVnni, int kBits>
inline __m512i dot4(__m512i acc, __m512i u, __m512i s) {
  if constexpr (kVnni) {
    return _mm512_dpbusd_epi32(acc, u, s);
  } else if constexpr (kBits == 4) {
    const __m512i pairs = _mm512_maddubs_epi16(u, s);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
  } else {
    const __m512i u_even = _mm512_and_si512(u, _mm512_set1_epi16(0x00FF));
    const __m512i u_odd = _mm512_srli_epi16(u, 8);
    const __m512i s_even = _mm512_srai_epi16(_mm512_slli_epi16(s, 8), 8);
    const __m512i s_odd = _mm512_srai_epi16(s, 8);
    acc = _mm512_add_epi32(acc, _mm512_madd_epi16(u_even, s_even));
    return _mm512_add_epi32(acc, _mm512_madd_epi16(u_odd, s_odd));
  }
}

inline __m512i bcast4(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

inline void store_row(const QGemmShape& s, int64_t p, __m512 acc, float* c, const float* bias) {
  const int64_t n0 = p * kQPanel;
  const int64_t valid = std::min<int64_t>(kQPanel, s.N - n0);
  const __mmask16 mask = __mmask16((1u << valid) - 1);
  if (bias) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(mask, bias + n0));
  _mm512_mask_storeu_ps(c + n0, mask, acc);
}

// Level 4, rows [0, kRows) x panels p .. p + kPanels - 1 over all of K: each
// group of codes is loaded and split once and serves every row, each broadcast
// of A serves every panel. The int32 sums are exact, so grouping the dots (lo
// and hi nibbles, panels) changes nothing; the float epilogue per block is the
// reference's (q4_gemm_ref.cc).
template <bool kVnni, int kBits, int kRows, int kPanels>
void l4_tile(const QGemmShape& s, const QARow* rows, const uint8_t* packed, int64_t p, float* c,
             size_t ldc, const float* bias) {
  const int64_t kblocks = s.k_blocks();
  const int per_group = kBits == 4 ? 8 : 4;
  const int groups = s.block / per_group;
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const uint8_t* rec = packed + size_t(p) * s.panel_bytes();
  const size_t panel_stride = s.panel_bytes();
  __m512 facc[kRows][kPanels];
  for (int r = 0; r < kRows; ++r) {
    for (int q = 0; q < kPanels; ++q) facc[r][q] = _mm512_setzero_ps();
  }
  for (int64_t kb = 0; kb < kblocks; ++kb, rec += s.record_bytes()) {
    for (int q = 0; q < kPanels; ++q) {
      const char* ahead =
          reinterpret_cast<const char*>(rec + q * panel_stride + 4 * s.record_bytes());
      _mm_prefetch(ahead, _MM_HINT_T0);
      _mm_prefetch(ahead + 64, _MM_HINT_T0);
    }
    __m512i iacc[kRows][kPanels];
    for (int r = 0; r < kRows; ++r) {
      for (int q = 0; q < kPanels; ++q) iacc[r][q] = _mm512_setzero_si512();
    }
    const int64_t k0 = kb * s.block;
    for (int g = 0; g < groups; ++g) {
      const int64_t k = k0 + g * per_group;
      if constexpr (kBits == 4) {
        __m512i lo[kPanels], hi[kPanels];
        for (int q = 0; q < kPanels; ++q) {
          const __m512i v = _mm512_load_si512(rec + q * panel_stride + g * 64);
          lo[q] = _mm512_and_si512(v, low4);
          hi[q] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
        }
        for (int r = 0; r < kRows; ++r) {
          const __m512i a0 = bcast4(rows[r].qa + k), a1 = bcast4(rows[r].qa + k + 4);
          for (int q = 0; q < kPanels; ++q) {
            iacc[r][q] = dot4<kVnni, 4>(iacc[r][q], lo[q], a0);
            iacc[r][q] = dot4<kVnni, 4>(iacc[r][q], hi[q], a1);
          }
        }
      } else {
        __m512i v[kPanels];
        for (int q = 0; q < kPanels; ++q) v[q] = _mm512_load_si512(rec + q * panel_stride + g * 64);
        for (int r = 0; r < kRows; ++r) {
          const __m512i a0 = bcast4(rows[r].qa + k);
          for (int q = 0; q < kPanels; ++q) iacc[r][q] = dot4<kVnni, 8>(iacc[r][q], v[q], a0);
        }
      }
    }
    for (int q = 0; q < kPanels; ++q) {
      const float* meta = reinterpret_cast<const float*>(rec + q * panel_stride + s.code_bytes());
      const __m512 sc = _mm512_load_ps(meta);
      const __m512 corr = _mm512_load_ps(meta + kQPanel);
      for (int r = 0; r < kRows; ++r) {
        const __m512 dot = _mm512_cvtepi32_ps(iacc[r][q]);
        const __m512 scale = _mm512_mul_ps(sc, _mm512_set1_ps(rows[r].a_scale[kb]));
        facc[r][q] = _mm512_fmadd_ps(dot, scale, facc[r][q]);
        facc[r][q] = _mm512_fnmadd_ps(corr, _mm512_set1_ps(rows[r].a_qsum[kb]), facc[r][q]);
      }
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int q = 0; q < kPanels; ++q) store_row(s, p + q, facc[r][q], c + size_t(r) * ldc, bias);
  }
}

// Lane byte `r` of each int32 lane, as float.
template <int kShift>
inline __m512 lane_byte(__m512i v) {
  if constexpr (kShift == 24) {
    return _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 24));
  } else if constexpr (kShift == 0) {
    return _mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(0xFF)));
  } else {
    return _mm512_cvtepi32_ps(
        _mm512_and_si512(_mm512_srli_epi32(v, kShift), _mm512_set1_epi32(0xFF)));
  }
}

// Four k's held in lane bytes 0..3 of `w`, against a[k..k+3] of each row.
template <int kRows>
inline void fma4(__m512i w, const QARow* rows, int64_t k, __m512 (&bacc)[kRows][2]) {
  const __m512 w0 = lane_byte<0>(w), w1 = lane_byte<8>(w), w2 = lane_byte<16>(w),
               w3 = lane_byte<24>(w);
  for (int r = 0; r < kRows; ++r) {
    const float* a = rows[r].a + k;
    bacc[r][0] = _mm512_fmadd_ps(w0, _mm512_set1_ps(a[0]), bacc[r][0]);
    bacc[r][1] = _mm512_fmadd_ps(w1, _mm512_set1_ps(a[1]), bacc[r][1]);
    bacc[r][0] = _mm512_fmadd_ps(w2, _mm512_set1_ps(a[2]), bacc[r][0]);
    bacc[r][1] = _mm512_fmadd_ps(w3, _mm512_set1_ps(a[3]), bacc[r][1]);
  }
}

template <int kBits, int kRows>
void l0_tile(const QGemmShape& s, const QARow* rows, const uint8_t* packed, int64_t p0, int64_t p1,
             float* c, size_t ldc, const float* bias) {
  const int64_t kblocks = s.k_blocks();
  const int per_group = kBits == 4 ? 8 : 4;
  const int groups = s.block / per_group;
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* rec = packed + size_t(p) * s.panel_bytes();
    __m512 facc[kRows];
    for (int r = 0; r < kRows; ++r) facc[r] = _mm512_setzero_ps();
    for (int64_t kb = 0; kb < kblocks; ++kb, rec += s.record_bytes()) {
      _mm_prefetch(reinterpret_cast<const char*>(rec + 4 * s.record_bytes()), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(rec + 4 * s.record_bytes() + 64), _MM_HINT_T0);
      __m512 bacc[kRows][2];
      for (int r = 0; r < kRows; ++r) bacc[r][0] = bacc[r][1] = _mm512_setzero_ps();
      const int64_t k0 = kb * s.block;
      for (int g = 0; g < groups; ++g) {
        const __m512i v = _mm512_load_si512(rec + g * 64);
        const int64_t k = k0 + g * per_group;
        if constexpr (kBits == 4) {
          fma4<kRows>(_mm512_and_si512(v, low4), rows, k, bacc);
          fma4<kRows>(_mm512_and_si512(_mm512_srli_epi16(v, 4), low4), rows, k + 4, bacc);
        } else {
          fma4<kRows>(v, rows, k, bacc);
        }
      }
      const float* meta = reinterpret_cast<const float*>(rec + s.code_bytes());
      const __m512 sc = _mm512_load_ps(meta);
      const __m512 corr = _mm512_load_ps(meta + kQPanel);
      for (int r = 0; r < kRows; ++r) {
        facc[r] = _mm512_fmadd_ps(_mm512_add_ps(bacc[r][0], bacc[r][1]), sc, facc[r]);
        facc[r] = _mm512_fnmadd_ps(corr, _mm512_set1_ps(rows[r].a_sum[kb]), facc[r]);
      }
    }
    for (int r = 0; r < kRows; ++r) store_row(s, p, facc[r], c + size_t(r) * ldc, bias);
  }
}

// Calls fn(rows, panels) as integral constants for a runtime row count
// (1..kMax) and panel count (1..2).
template <int kMax, int kRows = 1, class Fn>
inline void with_tile(size_t rows, int panels, Fn&& fn) {
  if constexpr (kRows < kMax) {
    if (rows > size_t(kRows)) return with_tile<kMax, kRows + 1>(rows, panels, fn);
  }
  if (panels == 2) {
    fn(std::integral_constant<int, kRows>(), std::integral_constant<int, 2>());
  } else {
    fn(std::integral_constant<int, kRows>(), std::integral_constant<int, 1>());
  }
}

// Level 4, any number of rows: panels two at a time, every row tile of 4 (the
// last 1..3) reads the pair while it is hot.
template <bool kVnni, int kBits>
void l4_rows(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
             int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  for (int64_t p = p0; p < p1; p += 2) {
    const int panels = int(std::min<int64_t>(2, p1 - p));
    for (size_t r0 = 0; r0 < row_count; r0 += kMaxRows) {
      with_tile<kMaxRows>(std::min<size_t>(kMaxRows, row_count - r0), panels,
                          [&](auto kr, auto kp) {
                            l4_tile<kVnni, kBits, decltype(kr)::value, decltype(kp)::value>(
                                s, rows + r0, packed, p, c + r0 * ldc, ldc, bias);
                          });
    }
  }
}

// Level 0, any number of rows: tiles of 4 rows (the last 1..3) over each
// panel, codes widened to float in registers once per tile. (Widening a panel
// pair once into an L1 buffer for every row tile measured 15-30 % slower on
// Zen 5: the in-register widening runs on otherwise idle ALU ports.)
template <int kBits>
void l0_rows(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
             int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  for (size_t r0 = 0; r0 < row_count; r0 += kMaxRows) {
    with_tile<kMaxRows>(std::min<size_t>(kMaxRows, row_count - r0), 1, [&](auto kr, auto) {
      l0_tile<kBits, decltype(kr)::value>(s, rows + r0, packed, p0, p1, c + r0 * ldc, ldc, bias);
    });
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels::q_avx512
