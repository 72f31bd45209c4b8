// Builders and shared helpers of the quantized operators (registry.cc lists them).
#pragma once

#include <memory>

#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/q4_gemm/q4_gemm.h"
#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

class MemoryReservation;

// MatMulNBits attributes, checked.
struct MatMulNBitsParams {
  kernels::QGemmShape shape;
  int level = 0;
};
Result<MatMulNBitsParams> matmul_nbits_params(const BuildContext& ctx);
// B, scales and zero points have the types and sizes the attributes imply.
Status check_matmul_nbits_sources(const BuildContext& ctx, const MatMulNBitsParams& p);
// The panel records (q4_gemm.h) of the node's constant B, scales, zero points.
Result<std::shared_ptr<const uint8_t>> pack_matmul_nbits(const BuildContext& ctx,
                                                         const MatMulNBitsParams& p);

Result<std::unique_ptr<Kernel>> build_matmul_nbits(BuildContext& ctx);
// gather_block_quantized.cc: com.microsoft GatherBlockQuantized
Result<std::unique_ptr<Kernel>> build_gather_block_quantized(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_dequantize_linear(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_quantize_linear(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_dynamic_quantize_linear(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_matmul_integer(BuildContext& ctx);

// MatMulInteger with a constant 2-D B [k, n] on the packed int8 GEMM
// (integer_matmul_packed.cc): A is `rows` x k (a batch folded into rows);
// za_n / zb_n are the zero points' element counts (0: absent), A's per row
// repeating every za_n rows.
struct PackedMatMulIntegerDesc {
  int64_t rows = 0, k = 0, n = 0;
  bool a_signed = false, b_signed = false;
  int64_t za_n = 0, zb_n = 0;
};
Result<std::unique_ptr<Kernel>> build_packed_matmul_integer(const BuildContext& ctx,
                                                            const PackedMatMulIntegerDesc& d);
// The packed panels (kernels/i8_gemm/i8_gemm.h) of input `index`, a constant
// 2-D int8/uint8 B of `shape`: through the session's preparer when B is an
// initializer (the i8_gemm_b pack family: a hit's mapped payload in place, a
// miss packed now), else packed here into memory reserved against the budget.
struct PackedI8B {
  std::shared_ptr<const uint8_t> bytes;         // 64-byte aligned, shape.packed_bytes()
  std::shared_ptr<MemoryReservation> reserved;  // set when packed here
};
Result<PackedI8B> packed_i8_b(const BuildContext& ctx, int index,
                              const kernels::I8GemmShape& shape);
Result<std::unique_ptr<Kernel>> build_qlinear_matmul(BuildContext& ctx);
// QLinearMatMul with a constant 2-D b on the packed int8 GEMM, requantized as the loops do
// (integer_matmul_float.cc); the inputs are checked, the counts are those of a_scale,
// a_zero_point, b_scale, b_zero_point (1, or M / N).
Result<std::unique_ptr<Kernel>> build_packed_qlinear_matmul(BuildContext& ctx, int64_t as_n,
                                                            int64_t za_n, int64_t bs_n,
                                                            int64_t zb_n);
// com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul, B a constant 2-D
// int8/uint8 (integer_matmul_float.cc).
Result<std::unique_ptr<Kernel>> build_matmul_integer_to_float(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_dynamic_quantize_matmul(BuildContext& ctx);
// DynamicQuantizeMatMul's inputs with A quantized per row (each row of the [rows, K] product
// its own range, scale and zero point): what the session builds for a weight-only QDQ unit
// under `--qdq integer` (session_qdq.cc); no registry entry, so a model's own
// DynamicQuantizeMatMul keeps its per-tensor semantics.
Result<std::unique_ptr<Kernel>> build_qdq_dynamic_quantize_matmul(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_conv_integer(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_qlinear_conv(BuildContext& ctx);

}  // namespace onnx_prepack::runtime
