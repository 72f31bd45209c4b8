// AVX-512 (F/BW/DQ/VL) block-quantized microkernels: float level 0, and level 4
// with u8 x s8 dots built from vpmaddubsw + vpmaddwd (hosts without VNNI).
#include <algorithm>

#include "kernels/q4_gemm/q4_gemm_body_avx512.h"

namespace onnx_prepack::kernels {
namespace {

template <int kBits, int kRows>
struct L0 {
  static void run(const QGemmShape& s, const QARow* r, const uint8_t* b, int64_t p0, int64_t p1,
                  float* c, size_t ldc, const float* bias) {
    q_avx512::l0_tile<kBits, kRows>(s, r, b, p0, p1, c, ldc, bias);
  }
};
template <int kBits, int kRows>
struct L4 {
  static void run(const QGemmShape& s, const QARow* r, const uint8_t* b, int64_t p0, int64_t p1,
                  float* c, size_t ldc, const float* bias) {
    q_avx512::l4_tile<false, kBits, kRows>(s, r, b, p0, p1, c, ldc, bias);
  }
};

}  // namespace

void q_gemm_l0_avx512(const QGemmShape& s, const QARow* rows, size_t row_count,
                      const uint8_t* packed, int64_t p0, int64_t p1, float* c, size_t ldc,
                      const float* bias) {
  q_avx512::dispatch<L0>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
}

void q_gemm_l4_avx512(const QGemmShape& s, const QARow* rows, size_t row_count,
                      const uint8_t* packed, int64_t p0, int64_t p1, float* c, size_t ldc,
                      const float* bias) {
  q_avx512::dispatch<L4>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
}

}  // namespace onnx_prepack::kernels
