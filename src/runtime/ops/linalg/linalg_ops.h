// Builders of the linalg family (registry.cc lists them): MatMul and Gemm
// (matmul.cc) on the kernels layer's GEMM (gemm.h) for float; double, int32,
// int64, uint32 and uint64 on plain loops (matmul_typed.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

Result<std::unique_ptr<Kernel>> build_matmul(BuildContext& ctx);  // matmul.cc
Result<std::unique_ptr<Kernel>> build_gemm(BuildContext& ctx);    // matmul.cc

// The types of matmul_typed.cc (double, int32, int64, uint32, uint64), and
// its builders, which build_matmul/build_gemm call when A is one of them (or
// float16/bfloat16: they check the shapes, then refuse the type so that
// half_adapter.cc builds the node for float).
bool matmul_typed_dtype(int32_t dtype);
Result<std::unique_ptr<Kernel>> build_matmul_typed(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_gemm_typed(BuildContext& ctx);
// "A and B must have one type of float, ..., got <A's> and <B's>".
std::string linalg_type_error(const ValueDesc& a, const ValueDesc& b);

}  // namespace onnx_prepack::runtime
