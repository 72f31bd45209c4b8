// AVX-512 (F/BW/DQ/VL) block-quantized microkernels: float level 0, and level 4
// with u8 x s8 dots built from vpmaddubsw + vpmaddwd (hosts without VNNI).
#include <algorithm>

#include "kernels/q4_gemm/q4_gemm_body_avx512.h"

namespace onnx_prepack::kernels {

void q_gemm_l0_avx512(const QGemmShape& s, const QARow* rows, size_t row_count,
                      const uint8_t* packed, int64_t p0, int64_t p1, float* c, size_t ldc,
                      const float* bias) {
  if (s.bits == 4) {
    q_avx512::l0_rows<4>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  } else {
    q_avx512::l0_rows<8>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  }
}

void q_gemm_l4_avx512(const QGemmShape& s, const QARow* rows, size_t row_count,
                      const uint8_t* packed, int64_t p0, int64_t p1, float* c, size_t ldc,
                      const float* bias) {
  if (s.bits == 4) {
    q_avx512::l4_rows<false, 4>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  } else {
    q_avx512::l4_rows<false, 8>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  }
}

}  // namespace onnx_prepack::kernels
