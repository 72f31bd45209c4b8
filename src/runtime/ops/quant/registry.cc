// The quant family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder.
#include "runtime/kernel.h"
#include "runtime/ops/quant/quant_ops.h"

namespace onnx_prepack::runtime {
namespace {

constexpr OpEntry kOps[] = {
    {"MatMulNBits", build_matmul_nbits, "com.microsoft"},
};

}  // namespace

std::span<const OpEntry> quant_ops() { return kOps; }

}  // namespace onnx_prepack::runtime
