// AVX-512 VNNI level-4 microkernel: each 64-byte group of codes is one vpdpbusd
// per row and panel (unsigned codes x signed int8 A). Reached only on hosts with
// AVX512_VNNI (q_gemm_select); the _avx512vnni suffix gives this file alone -mavx512vnni.
#include <algorithm>

#include "kernels/q4_gemm/q4_gemm_body_avx512.h"

namespace onnx_prepack::kernels {

void q_gemm_l4_avx512vnni(const QGemmShape& s, const QARow* rows, size_t row_count,
                          const uint8_t* packed, int64_t p0, int64_t p1, float* c, size_t ldc,
                          const float* bias) {
  if (s.bits == 4) {
    q_avx512::l4_rows<true, 4>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  } else {
    q_avx512::l4_rows<true, 8>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
  }
}

}  // namespace onnx_prepack::kernels
