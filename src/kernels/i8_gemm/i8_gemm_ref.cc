// Portable twin of the int8 GEMM microkernels (i8_gemm.h): the definition the
// vector kernels must match bit for bit. Unsigned arithmetic: sums wrap mod
// 2^32 as the vector lanes do (no signed overflow under UBSan).
#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"

namespace onnx_prepack::kernels {

void i8_gemm_ref(const I8GemmShape& s, const I8Tile& t, const uint8_t* packed, int64_t p0,
                 int64_t p1) {
  const size_t groups = size_t(s.k_groups());
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
    int32_t colsum[kI8Panel];
    std::memcpy(colsum, panel + groups * 64, sizeof(colsum));
    for (size_t r = 0; r < t.rows; ++r) {
      const uint8_t* a = t.a + r * t.lda;
      for (int64_t j = 0; j < kI8Panel; ++j) {
        const int64_t n = p * kI8Panel + j;
        if (n >= s.N) break;
        uint32_t dot = 0;
        for (size_t g = 0; g < groups; ++g) {
          for (size_t q = 0; q < 4; ++q) {
            const int8_t b = int8_t(panel[g * 64 + size_t(j) * 4 + q]);
            dot += uint32_t(a[g * 4 + q]) * uint32_t(int32_t(b));
          }
        }
        const uint32_t zb = uint32_t(t.col_zb[n]);
        const uint32_t cs = uint32_t(colsum[j]) - uint32_t(s.K) * zb;
        const uint32_t v = dot - uint32_t(t.row_za[r]) * cs - uint32_t(t.row_sum[r]) * zb;
        if (t.col_scale == nullptr) {
          t.c[r * t.ldc + size_t(n)] = int32_t(v);
          continue;
        }
        const float mult = t.row_scale ? t.row_scale[r] * t.col_scale[n] : t.col_scale[n];
        float y = float(int32_t(v)) * mult;
        if (t.col_bias != nullptr) y = t.bias_first ? t.col_bias[n] + y : y + t.col_bias[n];
        if (t.relu) y = y < 0.0f ? 0.0f : y;
        t.cf[r * t.ldc + size_t(n)] = y;
      }
    }
  }
}

}  // namespace onnx_prepack::kernels
