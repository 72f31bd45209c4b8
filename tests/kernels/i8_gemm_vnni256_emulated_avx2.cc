// The 256-bit VNNI int8 GEMM tiles (i8_gemm_vnni256_impl.h) with vpdpbusd
// emulated exactly in AVX2, for i8_gemm_test.cc: hosts without AVX-VNNI (this
// project's CI among them) still check the tiling and epilogue of the
// AVX-VNNI kernel bit for bit; only the instruction itself is left to hosts
// that have it. The emulation: per lane, the 4 uint8 x int8 products summed
// exactly (vpmaddwd pair sums, then the pairs), added to the accumulator mod
// 2^32, which is what vpdpbusd (not the saturating vpdpbusds) computes.
#include <immintrin.h>

#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/i8_gemm/i8_gemm_vnni256_impl.h"

namespace onnx_prepack::kernels {
namespace {

struct EmulatedDot {
  static __m256i step(__m256i acc, __m256i a, __m256i b) {
    const __m256i lo = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(a)),
                                         _mm256_cvtepi8_epi16(_mm256_castsi256_si128(b)));
    const __m256i hi = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(a, 1)),
                                         _mm256_cvtepi8_epi16(_mm256_extracti128_si256(b, 1)));
    return _mm256_add_epi32(acc, reduce_pairs_256(lo, hi));
  }
};

}  // namespace

void i8_gemm_vnni256_emulated(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed,
                              int64_t p0, int64_t p1) {
  vnni256_gemm<EmulatedDot>(s, t, packed, p0, p1);
}

}  // namespace onnx_prepack::kernels
