// The kernel that runs an Einsum plan (einsum_plan.h): scratch buffers are
// reserved against the memory budget as each step creates them and released
// after their last reader; float products run on gemm_f32 (ops/linalg/gemm.h),
// sums, copies and the other types' products as loops.
#pragma once

#include <memory>
#include <string>

#include "runtime/kernel.h"
#include "runtime/ops/tensor/einsum_plan.h"

namespace onnx_prepack::runtime::tensor_family {

// A kernel for `dtype` (float, double, int32, int64, uint32, uint64; integers
// wrap as in their own width). Run-time failures name `where`.
std::unique_ptr<Kernel> make_einsum_kernel(int32_t dtype, std::shared_ptr<const EinsumPlan> plan,
                                           std::string where);

}  // namespace onnx_prepack::runtime::tensor_family
