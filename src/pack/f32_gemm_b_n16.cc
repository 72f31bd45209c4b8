// AVX2 + FMA panel formats: 16-column panels read by f32_gemm_6x16_avx2 (two
// ymm of B per k). See docs/formats.md for the tile choice.
#include "pack/gemm_b_format.h"

namespace onnx_prepack::pack {

using kernels::PackSourceLayout;

const GemmBFormat kF32GemmBN16[4] = {
    {"f32_gemm_b_n16_kn_f32", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 16,
     PackSourceLayout::kKN, onnx::TensorProto::FLOAT},
    {"f32_gemm_b_n16_nk_f32", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 16,
     PackSourceLayout::kNK, onnx::TensorProto::FLOAT},
    {"f32_gemm_b_n16_kn_f16", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 16,
     PackSourceLayout::kKN, onnx::TensorProto::FLOAT16},
    {"f32_gemm_b_n16_nk_f16", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 16,
     PackSourceLayout::kNK, onnx::TensorProto::FLOAT16},
};

}  // namespace onnx_prepack::pack
