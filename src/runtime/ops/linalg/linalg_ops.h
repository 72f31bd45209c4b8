// The linalg family (registry.cc lists it): MatMul and Gemm (matmul.cc) on the
// kernels layer's GEMM (gemm.h). matmul.cc still exports its own two-entry list;
// it becomes two builders here when its weight-preparation calls are next edited.
#pragma once

#include <span>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> matmul_ops();  // matmul.cc: MatMul, Gemm

}  // namespace onnx_prepack::runtime
