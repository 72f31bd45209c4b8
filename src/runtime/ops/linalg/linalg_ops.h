// Builders of the linalg family (registry.cc lists them): MatMul and Gemm
// (matmul.cc) on the kernels layer's GEMM (gemm.h).
#pragma once

#include <memory>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

Result<std::unique_ptr<Kernel>> build_matmul(BuildContext& ctx);  // matmul.cc
Result<std::unique_ptr<Kernel>> build_gemm(BuildContext& ctx);    // matmul.cc

}  // namespace onnx_prepack::runtime
