// Single-precision GEMM on a pre-packed B (docs/formats.md).
//
// Packed B ("panels"): B is the logical K x N right operand of C = A B. Its
// columns are cut into ceil(N / NR) panels of NR columns; panel p holds rows
// k = 0..K-1 of its NR columns, row-major, so the panel is one contiguous
// K x NR block and panel p starts at float offset p * K * NR. Columns past N in
// the last panel are zero. The driver cuts K into blocks that start at
// k0 * NR inside each panel, so the format does not depend on the K blocking.
//
// Microkernel contract (one per ISA, MR x NR registers):
//   c[i][j] for i < mr <= MR, j < nr <= NR over k < kc, with
//   a  packed A micro-panel, a[k * mr + i] (row stride = mr, tight),
//   b  panel slice, b[k * NR + j], all NR columns readable,
//   c  row-major with row stride ldc; only nr columns are read or written.
// Every element is one fused-multiply-add chain over k in increasing order,
// started from 0 (or continued from c when kAccumulate), so results do not
// depend on blocking, threading or ISA: ref, AVX2, AVX-512 and NEON agree bit
// for bit.
// `ep` is never null. With kFinal the epilogue runs after the chain:
// v = alpha * v (when alpha != 1), then v = fma(beta, bias[i * bias_rs +
// j * bias_cs], v) when bias is set.
//
// Per-ISA files (f32_gemm_6x16_avx2.cc, f32_gemm_14x32_avx512.cc,
// f32_gemm_8x12_neon.cc) include only this header; f32_gemm_ref.cc is the
// portable twin of every tile.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels {

inline constexpr uint32_t kGemmAccumulate = 1;  // continue the chain from c
inline constexpr uint32_t kGemmFinal = 2;       // apply alpha / bias after the chain

struct F32GemmEpilogue {
  float alpha = 1.0f;
  float beta = 1.0f;
  const float* bias = nullptr;  // already offset to this tile's (row 0, col 0)
  ptrdiff_t bias_rs = 0;        // row stride in elements (0 = broadcast)
  ptrdiff_t bias_cs = 0;        // column stride: 0 (broadcast) or 1
  // Cache hint, no effect on results: when set, a kernel may fetch the kc
  // 64-byte lines starting here into L2, one per k step (the driver points it
  // at B the next calls will read). Kernels that ignore it are correct too.
  const void* prefetch_l2 = nullptr;
};

using F32GemmUkernel = void (*)(size_t mr, size_t nr, size_t kc, const float* a, const float* b,
                                float* c, size_t ldc, uint32_t flags, const F32GemmEpilogue* ep);

// Microkernels. The _ref twins take the same arguments for their tile.
void f32_gemm_6x16_avx2(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                        size_t ldc, uint32_t flags, const F32GemmEpilogue* ep);
void f32_gemm_14x32_avx512(size_t mr, size_t nr, size_t kc, const float* a, const float* b,
                           float* c, size_t ldc, uint32_t flags, const F32GemmEpilogue* ep);
void f32_gemm_8x12_neon(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                        size_t ldc, uint32_t flags, const F32GemmEpilogue* ep);
void f32_gemm_6x16_ref(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                       size_t ldc, uint32_t flags, const F32GemmEpilogue* ep);
void f32_gemm_14x32_ref(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                        size_t ldc, uint32_t flags, const F32GemmEpilogue* ep);
void f32_gemm_8x12_ref(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                       size_t ldc, uint32_t flags, const F32GemmEpilogue* ep);

// One table for dispatch, tests and benchmarks.
struct F32GemmKernel {
  const char* name;
  device::IsaLevel isa;
  uint32_t mr;
  uint32_t nr;
  F32GemmUkernel fn;
};

// Native kernels first (each architecture builds its own: cmake/isa.cmake),
// then the _ref twins.
inline constexpr F32GemmKernel kF32GemmKernels[] = {
#if defined(__x86_64__)
    {"f32_gemm_14x32_avx512", device::IsaLevel::kAvx512, 14, 32, f32_gemm_14x32_avx512},
    {"f32_gemm_6x16_avx2", device::IsaLevel::kAvx2, 6, 16, f32_gemm_6x16_avx2},
#elif defined(__aarch64__)
    {"f32_gemm_8x12_neon", device::IsaLevel::kNeon, 8, 12, f32_gemm_8x12_neon},
#endif
    {"f32_gemm_14x32_ref", device::IsaLevel::kRef, 14, 32, f32_gemm_14x32_ref},
    {"f32_gemm_6x16_ref", device::IsaLevel::kRef, 6, 16, f32_gemm_6x16_ref},
    {"f32_gemm_8x12_ref", device::IsaLevel::kRef, 8, 12, f32_gemm_8x12_ref},
};

// The best kernel reading panels of `nr` columns on a host with `level`;
// nullptr when no kernel has that panel width.
const F32GemmKernel* f32_gemm_select(uint32_t nr, device::IsaLevel level);

// The one mapping from an ISA level to the GEMM the runtime uses there: the
// first native kernel of kF32GemmKernels at `level`, or the 16-column portable
// kernel at ref. Its nr is the panel width of B packed on the fly
// (runtime/ops/linalg/gemm) and of the format a weight is packed into on a miss
// (pack::gemm_b_runtime_format); the pack routine is f32_pack_b for that nr.
const F32GemmKernel& f32_gemm_native(device::IsaLevel level);

// ---- B packing ----

enum class PackSourceLayout : uint32_t {
  kKN = 0,  // B stored K x N row-major: MatMul B, Gemm B with transB = 0
  kNK = 1,  // B stored N x K row-major: Gemm B with transB = 1
};
enum class PackSourceType : uint32_t { kFloat = 0, kFloat16 = 1 };

struct F32PackBArgs {
  const void* src;  // FLOAT or FLOAT16 (IEEE binary16 bits), layout as given
  PackSourceLayout layout;
  PackSourceType type;
  size_t k;
  size_t n;
  size_t nr;   // panel width, a multiple of 4
  float* dst;  // ceil(n / nr) * k * nr floats
  // Elements between consecutive source rows; 0: dense (n for kKN, k for kNK). A head of
  // [B, T, N, D] keys read in place as [T, D] has ld = N * D.
  size_t ld = 0;
};

// Pack panels [panel_begin, panel_end). Every variant writes identical bytes;
// FLOAT16 is widened exactly. The _avx2 variant needs AVX2 + F16C and a panel
// width that is a multiple of 8 (f32_pack_b runs the _ref one for 12).
void f32_pack_b_ref(const F32PackBArgs* args, size_t panel_begin, size_t panel_end);
void f32_pack_b_avx2(const F32PackBArgs* args, size_t panel_begin, size_t panel_end);

// Exact binary16 -> binary32 (portable).
float f16_bits_to_f32(uint16_t h);

}  // namespace onnx_prepack::kernels
