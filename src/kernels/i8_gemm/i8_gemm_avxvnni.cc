// AVX-VNNI int8 GEMM microkernel (i8_gemm.h): the 256-bit VNNI tiles of
// i8_gemm_vnni256_impl.h with the VEX-encoded vpdpbusd. Reached only on hosts
// with AVX-VNNI and without AVX-512 VNNI (i8_gemm_select); the _avxvnni
// suffix gives this file alone -mavxvnni.
#include <immintrin.h>

#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/i8_gemm/i8_gemm_vnni256_impl.h"

namespace onnx_prepack::kernels {
namespace {

struct AvxVnniDot {
  static __m256i step(__m256i acc, __m256i a, __m256i b) {
    return _mm256_dpbusd_avx_epi32(acc, a, b);
  }
};

}  // namespace

void i8_gemm_avxvnni(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed, int64_t p0,
                     int64_t p1) {
  vnni256_gemm<AvxVnniDot>(s, t, packed, p0, p1);
}

}  // namespace onnx_prepack::kernels
