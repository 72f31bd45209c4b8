// The quant family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder.
#include "runtime/kernel.h"
#include "runtime/ops/quant/quant_ops.h"

namespace onnx_prepack::runtime {
namespace {

constexpr OpEntry kOps[] = {
    {"DequantizeLinear", build_dequantize_linear},
    {"QuantizeLinear", build_quantize_linear},
    {"DynamicQuantizeLinear", build_dynamic_quantize_linear},
    {"MatMulInteger", build_matmul_integer},
    {"QLinearMatMul", build_qlinear_matmul},
    {"ConvInteger", build_conv_integer},
    {"QLinearConv", build_qlinear_conv},
    {"MatMulNBits", build_matmul_nbits, "com.microsoft", true},
    {"MatMulIntegerToFloat", build_matmul_integer_to_float, "com.microsoft", true},
    {"DynamicQuantizeMatMul", build_dynamic_quantize_matmul, "com.microsoft", true},
    {"GatherBlockQuantized", build_gather_block_quantized, "com.microsoft", true},
};

}  // namespace

std::span<const OpEntry> quant_ops() { return kOps; }

}  // namespace onnx_prepack::runtime
