// The 256-bit VNNI int8 GEMM microkernel (i8_gemm.h), parameterised by its
// dot step: i8_gemm_avxvnni.cc instantiates it with the VEX vpdpbusd of
// AVX-VNNI (cores with VNNI but no AVX-512, e.g. Alder Lake and later client
// parts), and the kernel tests instantiate it with an exact AVX2 emulation of
// that instruction, so that this file's tiling and epilogue are checked bit
// for bit against the ref on hosts that lack AVX-VNNI.
//
// Tiles of up to 6 rows x 1 panel (16 columns): 2 accumulators of 8 int32
// lanes per row (12 registers), the panel group's 2 B vectors and the
// broadcast of A's 4 bytes use 15 of the 16 ymm registers. Each lane holds
// one column: vpdpbusd sums a row's 4 uint8 of k = 4g..4g+3 times the
// column's 4 int8 of the same k, the layout the packed panels already have.
#pragma once

#include <immintrin.h>

#include <cstring>
#include <utility>

#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/i8_gemm/i8_gemm_epilogue_256.h"

namespace onnx_prepack::kernels {
// Internal linkage: each translation unit keeps its own copy.
namespace {

constexpr int kVnni256Rows = 6;

// Dot::step(acc, a, b): acc + per lane sum of 4 uint8 (a) x int8 (b) products, mod 2^32.
template <class Dot, int R>
void vnni256_tile(const I8GemmShape& s, const I8Tile& t, size_t r0, const uint8_t* panel,
                  int64_t p) {
  const size_t groups = size_t(s.k_groups());
  const uint8_t* a = t.a + r0 * t.lda;
  __m256i acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (size_t g = 0; g < groups; ++g) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 64));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 64 + 32));
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + size_t(r) * t.lda + g * 4, 4);
      const __m256i av = _mm256_set1_epi32(quad);
      acc[r][0] = Dot::step(acc[r][0], av, b0);
      acc[r][1] = Dot::step(acc[r][1], av, b1);
    }
  }
  const PanelTerms256 pt = panel_terms_256(s, t, panel, p);
  for (int r = 0; r < R; ++r) store_row_256(t, pt, r0 + size_t(r), acc[r]);
}

template <class Dot>
using Vnni256TileFn = void (*)(const I8GemmShape&, const I8Tile&, size_t, const uint8_t*, int64_t);

template <class Dot, int... Rs>
Vnni256TileFn<Dot> vnni256_pick(size_t rows, std::integer_sequence<int, Rs...>) {
  Vnni256TileFn<Dot> fn = nullptr;
  ((rows == size_t(Rs + 1) ? (fn = vnni256_tile<Dot, Rs + 1>, 0) : 0), ...);
  return fn;
}

template <class Dot>
void vnni256_gemm(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed, int64_t p0,
                  int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
    size_t r = 0;
    for (; r + kVnni256Rows <= t.rows; r += kVnni256Rows) {
      vnni256_tile<Dot, kVnni256Rows>(s, t, r, panel, p);
    }
    if (r < t.rows) {
      vnni256_pick<Dot>(t.rows - r, std::make_integer_sequence<int, kVnni256Rows - 1>{})(s, t, r,
                                                                                         panel, p);
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels
