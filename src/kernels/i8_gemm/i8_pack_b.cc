// B packing for the int8 GEMM (i8_gemm.h): one layout for every ISA, so it is
// written by portable code once, at plan time.
#include <cstring>

#include "kernels/i8_gemm/i8_gemm.h"

namespace onnx_prepack::kernels {

void i8_pack_b(const I8GemmShape& s, const void* b, size_t ldb, uint8_t* out, bool transposed) {
  std::memset(out, 0, s.packed_bytes());
  const auto* bs = static_cast<const int8_t*>(b);
  const auto* bu = static_cast<const uint8_t*>(b);
  const size_t groups = size_t(s.k_groups());
  for (int64_t p = 0; p < s.panels(); ++p) {
    uint8_t* panel = out + size_t(p) * s.panel_bytes();
    int32_t sums[kI8Panel] = {};
    for (int64_t j = 0; j < kI8Panel; ++j) {
      const int64_t n = p * kI8Panel + j;
      if (n >= s.N) break;
      for (int64_t k = 0; k < s.K; ++k) {
        const size_t i = transposed ? size_t(n) * ldb + size_t(k) : size_t(k) * ldb + size_t(n);
        // uint8 B is stored shifted into int8 range; the zero point carries the shift.
        const int32_t v = s.b_signed ? int32_t(bs[i]) : int32_t(bu[i]) - 128;
        panel[size_t(k / 4) * 64 + size_t(j) * 4 + size_t(k % 4)] = uint8_t(int8_t(v));
        sums[j] += v;  // |sum| <= 128 K: no overflow for any K a model can hold
      }
    }
    std::memcpy(panel + groups * 64, sums, sizeof(sums));
  }
}

}  // namespace onnx_prepack::kernels
