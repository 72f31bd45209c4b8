// Packing of MatMulNBits weights into the panel16 records of q4_gemm.h.
// Portable code: it runs once per weight (at compile or on a cache miss).
#include <cstring>

#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// Code of column n at index i of block kb, straight from MatMulNBits' B.
uint8_t source_code(const QGemmShape& s, const uint8_t* b, int64_t n, int64_t kb, int64_t i) {
  const size_t blob = size_t(s.block) * size_t(s.bits) / 8;
  const uint8_t* p = b + (size_t(n) * size_t(s.k_blocks()) + size_t(kb)) * blob;
  if (s.bits == 8) return p[i];
  return uint8_t((p[i / 2] >> ((i & 1) * 4)) & 0x0F);
}

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
        for (int64_t g = 0; g < groups; ++g) {
          uint8_t* lane = rec + size_t(g) * 64 + size_t(j) * 4;
          for (int64_t r = 0; r < 4; ++r) {
            if (s.bits == 8) {
              lane[r] = source_code(s, src.b, n, kb, g * 4 + r);
            } else {
              lane[r] = uint8_t(source_code(s, src.b, n, kb, g * 8 + r) |
                                (source_code(s, src.b, n, kb, g * 8 + 4 + r) << 4));
            }
          }
        }
      }
    }
  }
}

}  // namespace onnx_prepack::kernels
