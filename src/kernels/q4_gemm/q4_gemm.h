// Block-quantized GEMM (MatMulNBits): C = A W^T (+ bias), W the N x K weight
// of 4- or 8-bit codes q with a float scale s and zero point z per (column n,
// block of `block` k's): W[n][k] = (q - z) * s.
//
// Packed weight ("q4 panel16", docs/formats.md): columns are cut into
// ceil(N / 16) panels of 16; a panel is k_blocks consecutive records, one per
// block of K, each
//   codes  block / 8 groups of 64 bytes (4-bit) or block / 4 groups (8-bit):
//          int32 lane j of a group is column 16 p + j; for 4-bit its byte r
//          holds k = 8 g + r in the low nibble and k = 8 g + 4 + r in the high
//          one; for 8-bit byte r is k = 4 g + r;
//   scales 16 floats s;
//   corr   16 floats s * z (the zero point's share, precomputed);
// so a record is block * bits * 2 + 128 bytes and every record is 64-byte
// aligned. Columns past N have codes 0 and s = corr = 0. Codes past K in the
// last block are whatever the source holds: A is zero there.
//
// Per block b and column n, with a the block of A, both accuracy levels compute
//   level 0: s * sum_k a_k q_k - corr * sum_k a_k                     (float)
//   level 4: sa * (s * sum_k qa_k q_k - corr * sum_k qa_k)             (int dots)
// where level 4 quantizes each block of A symmetrically to int8 (sa = max|a| /
// 127, qa = round-to-nearest-even(a / sa)). Unsigned codes times signed qa is
// exactly what vpdpbusd multiplies.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "device/cpu_features.h"

namespace onnx_prepack::kernels {

inline constexpr int64_t kQPanel = 16;

struct QGemmShape {
  int64_t K = 0, N = 0;
  int bits = 4;
  int block = 32;
  int64_t k_blocks() const { return (K + block - 1) / block; }
  int64_t k_padded() const { return k_blocks() * block; }
  int64_t panels() const { return (N + kQPanel - 1) / kQPanel; }
  size_t code_bytes() const { return size_t(block) * size_t(bits) * 2; }  // per record
  size_t record_bytes() const { return code_bytes() + 128; }
  size_t panel_bytes() const { return size_t(k_blocks()) * record_bytes(); }
  size_t packed_bytes() const { return size_t(panels()) * panel_bytes(); }
};

// The source operands as MatMulNBits holds them. Scales are widened to float by
// the caller. Exactly one of zp_packed / zp_float may be set; neither means the
// default 2^(bits-1).
struct QWeightSource {
  const uint8_t* b = nullptr;          // [N, k_blocks, block * bits / 8]
  const float* scales = nullptr;       // [N * k_blocks]
  const uint8_t* zp_packed = nullptr;  // [N, ceil(k_blocks * bits / 8)]
  const float* zp_float = nullptr;     // [N * k_blocks]
};

// Writes the packed form (shape.packed_bytes() bytes, 64-byte aligned `out`).
void q_pack_weights(const QGemmShape& shape, const QWeightSource& src, uint8_t* out);

// One row of A prepared for a level: A copied to k_padded() floats (zeros past
// K) and per block the float sum (level 0), or int8 codes with per block sa and
// sa * sum(qa) (level 4).
struct QARow {
  const float* a = nullptr;        // level 0: [k_padded]
  const float* a_sum = nullptr;    // level 0: [k_blocks]
  const int8_t* qa = nullptr;      // level 4: [k_padded]
  const float* a_scale = nullptr;  // level 4: [k_blocks] sa
  const float* a_qsum = nullptr;   // level 4: [k_blocks] sa * sum(qa)
};

// Microkernel: rows `rows` (any count) of prepared A against panels [p0, p1);
// writes C[r][16 p + j] for the columns below N, adding bias[16 p + j] when set.
// Every kernel computes each output element bitwise as q_gemm_*_ref does,
// whatever the row count or tiling: a row's result does not depend on M
// (docs/decisions.md, "MatMulNBits batch invariance"). The AVX-512 kernels tile
// level 4 as 4 rows x 2 panels (32 columns), level 0 as 4 rows x 1 panel; the
// aarch64 ones level 4 as 4 rows x 1 panel (SDOT), level 0 as 2 rows x 1 panel.
using QGemmUkernel = void (*)(const QGemmShape& shape, const QARow* rows, size_t row_count,
                              const uint8_t* packed, int64_t p0, int64_t p1, float* c, size_t ldc,
                              const float* bias);

void q_gemm_l0_ref(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                   float*, size_t, const float*);
void q_gemm_l4_ref(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                   float*, size_t, const float*);
void q_gemm_l0_avx2(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                    float*, size_t, const float*);
void q_gemm_l4_avx2(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                    float*, size_t, const float*);
void q_gemm_l0_avx512(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                      float*, size_t, const float*);
void q_gemm_l4_avx512(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                      float*, size_t, const float*);
void q_gemm_l4_avx512vnni(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                          float*, size_t, const float*);
// aarch64 (built there only): level 0 in NEON FMAs (2 rows x 1 panel), level 4
// in SDOT (4 rows x 1 panel, needs dotprod) or SMMLA (4 rows x 1 panel, needs
// i8mm; the same panels).
void q_gemm_l0_neon(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                    float*, size_t, const float*);
void q_gemm_l4_dotprod(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                       float*, size_t, const float*);
void q_gemm_l4_i8mm(const QGemmShape&, const QARow*, size_t, const uint8_t*, int64_t, int64_t,
                    float*, size_t, const float*);

struct QGemmKernels {
  const char* name;
  QGemmUkernel l0;
  QGemmUkernel l4;
};

// The best kernels for the features: x86-64 AVX-512 VNNI, AVX-512, AVX2;
// aarch64 dotprod (NEON level 0, SDOT level 4), NEON (level 0; level 4 on the
// ref); else ref. Pass capped features (device::host_cpu_features()).
QGemmKernels q_gemm_select(const device::CpuFeatures& features);
QGemmKernels q_gemm_ref_kernels();

// C[M, N] = A[M, K] W^T (+ bias) with `level` 0 or 4 (other levels compute as
// 0). Splits panels (and row tiles) over the pool; scratch is allocated here.
void q_gemm(const QGemmKernels& kernels, const QGemmShape& shape, int level, const uint8_t* packed,
            int64_t M, const float* a, size_t lda, float* c, size_t ldc, const float* bias,
            base::ThreadPool* pool);

}  // namespace onnx_prepack::kernels
