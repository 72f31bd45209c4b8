// AVX-512 panel formats: 32-column panels read by f32_gemm_14x32_avx512
// (two zmm of B per k). See docs/formats.md for the tile choice.
#include "pack/gemm_b_format.h"

namespace onnx_prepack::pack {

using kernels::PackSourceLayout;

const GemmBFormat kF32GemmBN32[4] = {
    {"f32_gemm_b_n32_kn_f32", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 32,
     PackSourceLayout::kKN, onnx::TensorProto::FLOAT},
    {"f32_gemm_b_n32_nk_f32", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 32,
     PackSourceLayout::kNK, onnx::TensorProto::FLOAT},
    {"f32_gemm_b_n32_kn_f16", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 32,
     PackSourceLayout::kKN, onnx::TensorProto::FLOAT16},
    {"f32_gemm_b_n32_nk_f16", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 32,
     PackSourceLayout::kNK, onnx::TensorProto::FLOAT16},
};

}  // namespace onnx_prepack::pack
