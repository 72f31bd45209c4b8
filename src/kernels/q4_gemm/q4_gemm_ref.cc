// Portable twins of the block-quantized microkernels (q4_gemm.h): the same
// per-block formulas in the same order, so every SIMD kernel (any row tile, any
// panel grouping) is bitwise equal to these loops:
//   level 0: per block two float chains, even k's and odd k's, each
//            fma(a_k, q_k, chain); then acc = fma(even + odd, s, acc) and
//            acc = fma(-corr, sum(a), acc);
//   level 4: the exact int32 dot; acc = fma(float(dot), s * sa, acc) and
//            acc = fma(-corr, sa * sum(qa), acc).
// The final bias is one float add. std::fma makes each fusion explicit, so the
// result does not depend on -ffp-contract.
#include <cmath>

#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// Code of lane j at index i of a record's codes.
int code_at(const QGemmShape& s, const uint8_t* rec, int64_t j, int64_t i) {
  if (s.bits == 8) return rec[(i / 4) * 64 + j * 4 + i % 4];
  const uint8_t byte = rec[(i / 8) * 64 + j * 4 + i % 4];
  return (i % 8) < 4 ? (byte & 0x0F) : (byte >> 4);
}

template <int kLevel>
void q_gemm_ref(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
                int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  const int64_t kblocks = s.k_blocks();
  for (int64_t p = p0; p < p1; ++p) {
    const uint8_t* panel = packed + size_t(p) * s.panel_bytes();
    for (size_t r = 0; r < row_count; ++r) {
      const QARow& a = rows[r];
      float acc[kQPanel] = {};
      for (int64_t kb = 0; kb < kblocks; ++kb) {
        const uint8_t* rec = panel + size_t(kb) * s.record_bytes();
        const float* scales = reinterpret_cast<const float*>(rec + s.code_bytes());
        const float* corr = scales + kQPanel;
        for (int64_t j = 0; j < kQPanel; ++j) {
          if (kLevel == 4) {
            int32_t dot = 0;
            for (int64_t i = 0; i < s.block; ++i) {
              dot += int32_t(a.qa[kb * s.block + i]) * code_at(s, rec, j, i);
            }
            const float scale = scales[j] * a.a_scale[kb];
            acc[j] = std::fma(float(dot), scale, acc[j]);
            acc[j] = std::fma(-corr[j], a.a_qsum[kb], acc[j]);
          } else {
            float chain[2] = {0.0f, 0.0f};
            for (int64_t i = 0; i < s.block; ++i) {
              chain[i & 1] =
                  std::fma(a.a[kb * s.block + i], float(code_at(s, rec, j, i)), chain[i & 1]);
            }
            acc[j] = std::fma(chain[0] + chain[1], scales[j], acc[j]);
            acc[j] = std::fma(-corr[j], a.a_sum[kb], acc[j]);
          }
        }
      }
      for (int64_t j = 0; j < kQPanel && p * kQPanel + j < s.N; ++j) {
        const int64_t n = p * kQPanel + j;
        c[r * ldc + size_t(n)] = acc[j] + (bias ? bias[n] : 0.0f);
      }
    }
  }
}

}  // namespace

void q_gemm_l0_ref(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
                   int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  q_gemm_ref<0>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
}

void q_gemm_l4_ref(const QGemmShape& s, const QARow* rows, size_t row_count, const uint8_t* packed,
                   int64_t p0, int64_t p1, float* c, size_t ldc, const float* bias) {
  q_gemm_ref<4>(s, rows, row_count, packed, p0, p1, c, ldc, bias);
}

}  // namespace onnx_prepack::kernels
