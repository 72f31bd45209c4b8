// The linalg family's operator list (see kernel.h); the builders live in
// matmul.cc (declared in linalg_ops.h).
#include "runtime/kernel.h"
#include "runtime/ops/linalg/linalg_ops.h"

namespace onnx_prepack::runtime {
namespace {

constexpr OpEntry kOps[] = {
    {"MatMul", build_matmul},
    {"Gemm", build_gemm},
};

}  // namespace

std::span<const OpEntry> linalg_ops() { return kOps; }

}  // namespace onnx_prepack::runtime
