// The linalg family's operator list (see kernel.h): MatMul and Gemm, whose
// builders live in matmul.cc (linalg_ops.h).
#include "runtime/kernel.h"
#include "runtime/ops/linalg/linalg_ops.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> linalg_ops() { return matmul_ops(); }

}  // namespace onnx_prepack::runtime
