// Exact 8-bit integer GEMM (MatMulInteger): C[m][n] (int32) =
//   sum_k (A[m][k] - za[m]) * (B[k][n] - zb[n])
// for A and B each int8 or uint8, in int32 with wrap-around (the products are
// exact integers, so every ISA, tile and thread count gives the same bits).
//
// Packed B ("i8 panel16"): columns are cut into ceil(N / 16) panels of 16; a
// panel is k_groups() = ceil(K / 4) groups of 64 bytes, then 16 int32 column
// sums. Byte 4 j + r of group g is column 16 p + j, k = 4 g + r, stored as
// int8 b' = B (int8 B) or B - 128 (uint8 B: the shift keeps it in int8 and
// is compensated through the zero point). The column sums are sum_k b'. Past
// K and past N the bytes are 0 (so are the sums). One layout for every ISA:
// it is what vpdpbusd reads (4 consecutive k of a column in one int32 lane).
//
// A is prepared per call as uint8 u = A (uint8 A) or A + 128 (int8 A), rows
// of lda_u bytes zero-padded to k_groups() * 4, with sum_k u per row; a uint8 A
// with K a multiple of 4 is already u and is read in place (only its sums are
// computed). With
// za' = za + (int8 A ? 128 : 0) and zb' = zb - (uint8 B ? 128 : 0):
//   C = sum_k (u - za') (b' - zb')
//     = dot(u, b') - za' * (colsum(b') - K zb') - zb' * rowsum(u)
// which the microkernels apply as their epilogue (mod 2^32, unsigned). The
// dot itself is uint8 x int8: vpdpbusd on AVX-512 VNNI and AVX-VNNI, vpmovzxbw / vpmovsxbw +
// vpmaddwd on AVX2 (exact; vpmaddubsw would saturate), plain loops in _ref.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "device/cpu_features.h"

namespace onnx_prepack::kernels {

inline constexpr int64_t kI8Panel = 16;

struct I8GemmShape {
  int64_t K = 0, N = 0;
  bool b_signed = true;  // B is int8 (else uint8, stored shifted by -128)
  int64_t k_groups() const { return (K + 3) / 4; }
  int64_t panels() const { return (N + kI8Panel - 1) / kI8Panel; }
  size_t panel_bytes() const { return size_t(k_groups()) * 64 + kI8Panel * 4; }
  size_t packed_bytes() const { return size_t(panels()) * panel_bytes(); }
};

// Writes the packed form of B [K, N] (row stride ldb elements; int8 when
// shape.b_signed, else uint8) to `out` (packed_bytes(), 64-byte aligned).
// With `transposed`, the source is B's transpose [N, K] (row stride ldb): B[k][n]
// is read at n * ldb + k (a conv's W [M, C * kh * kw] as B); the packed layout is
// the same.
void i8_pack_b(const I8GemmShape& shape, const void* b, size_t ldb, uint8_t* out,
               bool transposed = false);

// One call of a microkernel: rows [0, rows) of prepared A against panels
// [p0, p1). row_za / row_sum are za' and rowsum(u) per row; col_zb is zb' per
// column, panels() * 16 entries (0 past N). Writes C[r][16 p + j] for the
// columns below N only.
struct I8Tile {
  const uint8_t* a = nullptr;  // rows of lda bytes, k_groups() * 4 readable
  size_t lda = 0;
  size_t rows = 0;
  const int32_t* row_za = nullptr;
  const int32_t* row_sum = nullptr;
  const int32_t* col_zb = nullptr;
  int32_t* c = nullptr;
  size_t ldc = 0;
  // The float epilogue (I8GemmArgs::scale): when col_scale is set, the kernel
  // writes cf (row stride ldc) instead of c. Per column, panels() * 16 entries.
  const float* col_scale = nullptr;
  const float* row_scale = nullptr;  // per row of the tile (I8GemmArgs::row_scale); null: none
  const float* col_bias = nullptr;   // null: no bias
  bool bias_first = false;
  bool relu = false;
  float* cf = nullptr;
};

using I8GemmUkernel = void (*)(const I8GemmShape& shape, const I8Tile& tile, const uint8_t* packed,
                               int64_t p0, int64_t p1);

void i8_gemm_ref(const I8GemmShape&, const I8Tile&, const uint8_t*, int64_t, int64_t);
void i8_gemm_avx2(const I8GemmShape&, const I8Tile&, const uint8_t*, int64_t, int64_t);
void i8_gemm_avx512vnni(const I8GemmShape&, const I8Tile&, const uint8_t*, int64_t, int64_t);
void i8_gemm_avxvnni(const I8GemmShape&, const I8Tile&, const uint8_t*, int64_t, int64_t);
// aarch64 only (Armv8.2-A dotprod, i8_gemm_dotprod.cc): SDOT by element on the same layout.
void i8_gemm_dotprod(const I8GemmShape&, const I8Tile&, const uint8_t*, int64_t, int64_t);
// aarch64 only (Armv8.2-A i8mm, i8_gemm_i8mm.cc): USMMLA 2 x 2 blocks on the same layout.
void i8_gemm_i8mm(const I8GemmShape&, const I8Tile&, const uint8_t*, int64_t, int64_t);

struct I8GemmKernels {
  const char* name;
  I8GemmUkernel fn;
};

// The best kernel for the features: on x86-64 AVX-512 VNNI, else AVX-VNNI,
// else AVX2 (also on AVX-512 without either VNNI); on aarch64 i8mm (USMMLA), else dotprod (SDOT);
// else ref.
I8GemmKernels i8_gemm_select(const device::CpuFeatures& features);
I8GemmKernels i8_gemm_ref_kernels();

// The operands of one product. Zero points are int32 values of the operands'
// types; null means 0. za_n is 1 (per tensor) or the period of a per-row zero
// point (row m uses za[m % za_n]: a batch folded into M repeats it); zb_n is 1
// or N.
struct I8GemmArgs {
  int64_t M = 0;
  const void* a = nullptr;  // [M, K], row stride lda elements
  size_t lda = 0;
  bool a_signed = false;  // int8 A (else uint8)
  const int32_t* za = nullptr;
  int64_t za_n = 1;
  const int32_t* zb = nullptr;
  int64_t zb_n = 1;
  int32_t* c = nullptr;  // [M, N], row stride ldc
  size_t ldc = 0;
  // Float epilogue, when `scale` is set: the product is written as float to cf
  // ([M, N], row stride ldc; c is not used), each element
  //   y = float(C) * scale[n]              (int32 -> float rounds to nearest)
  //     or float(C) * (row_scale[m] * scale[n]) with row_scale (the product
  //     of the two scales rounded first, as a per-tensor caller's multiplier)
  //   y = y + bias[n], or bias[n] + y when bias_first (bias optional)
  //   y = y < 0 ? 0 : y                    (relu)
  // in that order, one IEEE operation each: bitwise MatMulInteger -> Cast ->
  // Mul -> Add -> Relu run apart. scale_n / bias_n are 1 (one value) or N.
  const float* scale = nullptr;
  int64_t scale_n = 1;
  const float* row_scale = nullptr;  // M values (A quantized per row), or null
  const float* bias = nullptr;
  int64_t bias_n = 1;
  bool bias_first = false;
  bool relu = false;
  float* cf = nullptr;
};

// Bytes of scratch i8_gemm needs for M rows (prepared A, row and column terms,
// the epilogue's per-column scale and bias).
size_t i8_gemm_scratch_bytes(const I8GemmShape& shape, int64_t M);

// C = the product. `scratch` (64-byte aligned, i8_gemm_scratch_bytes) may be
// null: it is allocated here then. Splits panels (and rows when N is small)
// over the pool.
void i8_gemm(const I8GemmKernels& kernels, const I8GemmShape& shape, const uint8_t* packed,
             const I8GemmArgs& args, void* scratch, base::ThreadPool* pool);

}  // namespace onnx_prepack::kernels
