// Packing of MatMulNBits weights into the panel16 records of q4_gemm.h.
// Portable code: it runs once per weight (at compile or on a cache miss).
#include <cstring>

#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels {
namespace {

float zero_point(const QGemmShape& s, const QWeightSource& src, int64_t n, int64_t kb) {
  if (src.zp_float) return src.zp_float[n * s.k_blocks() + kb];
  if (src.zp_packed == nullptr) return float(1 << (s.bits - 1));
  if (s.bits == 8) return float(src.zp_packed[n * s.k_blocks() + kb]);
  const int64_t row = (s.k_blocks() + 1) / 2;
  return float((src.zp_packed[n * row + kb / 2] >> ((kb & 1) * 4)) & 0x0F);
}

}  // namespace

void q_pack_weights(const QGemmShape& s, const QWeightSource& src, uint8_t* out) {
  std::memset(out, 0, s.packed_bytes());
  const int64_t kblocks = s.k_blocks();
  const size_t blob = size_t(s.block) * size_t(s.bits) / 8;
  const int64_t per_group = s.bits == 4 ? 8 : 4;  // k's per 64-byte group
  const int64_t groups = s.block / per_group;
  for (int64_t p = 0; p < s.panels(); ++p) {
    for (int64_t kb = 0; kb < kblocks; ++kb) {
      uint8_t* rec = out + size_t(p) * s.panel_bytes() + size_t(kb) * s.record_bytes();
      float* scales = reinterpret_cast<float*>(rec + s.code_bytes());
      float* corr = scales + kQPanel;
      for (int64_t j = 0; j < kQPanel; ++j) {
        const int64_t n = p * kQPanel + j;
        if (n >= s.N) break;
        const float sc = src.scales[n * kblocks + kb];
        scales[j] = sc;
        corr[j] = sc * zero_point(s, src, n, kb);
        const uint8_t* q = src.b + (size_t(n) * size_t(kblocks) + size_t(kb)) * blob;
        uint8_t* lane = rec + size_t(j) * 4;
        for (int64_t g = 0; g < groups; ++g, lane += 64) {
          if (s.bits == 8) {
            std::memcpy(lane, q + g * 4, 4);
            continue;
          }
          // Source bytes 4g..4g+3 hold k = 8g..8g+7 (even k low nibble).
          const uint8_t* b = q + g * 4;
          const uint8_t c[8] = {uint8_t(b[0] & 15), uint8_t(b[0] >> 4), uint8_t(b[1] & 15),
                                uint8_t(b[1] >> 4), uint8_t(b[2] & 15), uint8_t(b[2] >> 4),
                                uint8_t(b[3] & 15), uint8_t(b[3] >> 4)};
          for (int r = 0; r < 4; ++r) lane[r] = uint8_t(c[r] | (c[4 + r] << 4));
        }
      }
    }
  }
}

}  // namespace onnx_prepack::kernels
