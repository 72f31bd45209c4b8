// NEON panel formats: 12-column panels read by f32_gemm_8x12_neon (three q
// registers of B per k). See docs/formats.md for the tile choice. Packed on any
// host (compile --target aarch64-neon on x86-64 writes the same bytes).
#include "pack/gemm_b_format.h"

namespace onnx_prepack::pack {

using kernels::PackSourceLayout;

const GemmBFormat kF32GemmBN12[4] = {
    {"f32_gemm_b_n12_kn_f32", "1", "aarch64-neon", device::IsaLevel::kNeon, 12,
     PackSourceLayout::kKN, onnx::TensorProto::FLOAT},
    {"f32_gemm_b_n12_nk_f32", "1", "aarch64-neon", device::IsaLevel::kNeon, 12,
     PackSourceLayout::kNK, onnx::TensorProto::FLOAT},
    {"f32_gemm_b_n12_kn_f16", "1", "aarch64-neon", device::IsaLevel::kNeon, 12,
     PackSourceLayout::kKN, onnx::TensorProto::FLOAT16},
    {"f32_gemm_b_n12_nk_f16", "1", "aarch64-neon", device::IsaLevel::kNeon, 12,
     PackSourceLayout::kNK, onnx::TensorProto::FLOAT16},
};

}  // namespace onnx_prepack::pack
