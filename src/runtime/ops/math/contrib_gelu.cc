// The com.microsoft GELU family, as ONNX Runtime's CPU kernels define it (float; FLOAT16
// through float by the half adapter):
//   Gelu(X)           = 0.5 X (1 + erf(X / sqrt 2))
//   BiasGelu(A, B)    = Gelu(A + B), B 1-D over A's last axis
//   FastGelu(X, bias) = 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3))), v = X (+ bias)
//   QuickGelu(X)      = X sigmoid(alpha X), alpha 1.702 by default
// on the vectorised erf / tanh / sigmoid of kernels/vec_math.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_math.h"
#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/math/math_ops.h"

namespace onnx_prepack::runtime::math {
namespace {

enum class GeluKind { kErf, kTanh, kQuick };

// X (+ bias over the last axis) through `kind`; `bias_input` is the index of the bias, or -1.
Result<std::unique_ptr<Kernel>> build_contrib_gelu(BuildContext& ctx, GeluKind kind, int bias_input,
                                                   bool bias_required) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  const int max_inputs = bias_input < 0 ? 1 : bias_input + 1;
  if (ctx.input_count() > max_inputs)
    return ctx.error(std::to_string(ctx.input_count()) + " inputs, at most " +
                     std::to_string(max_inputs));
  if (ctx.output_count() != 1) return ctx.error("one output expected");
  if (x->dtype != kFloat) return ctx.error("X must be float, got " + dtype_name(x->dtype));
  const bool has_bias = bias_input >= 0 && ctx.has_input(bias_input);
  if (bias_required && !has_bias) return ctx.error("the bias input is required");
  const int64_t n = shape_numel(x->shape);
  int64_t len = x->shape.empty() ? 1 : x->shape.back();
  if (has_bias) {
    const ValueDesc& b = ctx.input(bias_input);
    if (b.dtype != kFloat) return ctx.error("bias must be float, got " + dtype_name(b.dtype));
    if (x->shape.empty() || b.shape.size() != 1 || b.shape[0] != len)
      return ctx.error("bias " + shape_string(b.shape) + " must be 1-D of X's last dimension (X " +
                       shape_string(x->shape) + ")");
  }
  const float alpha = ctx.attr_float("alpha", 1.702f);
  ctx.set_output(0, kFloat, x->shape);
  len = std::max<int64_t>(len, 1);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const float* in = static_cast<const float*>(io.in[0]);
    const float* bias = has_bias ? static_cast<const float*>(io.in[size_t(bias_input)]) : nullptr;
    float* out = static_cast<float*>(io.out[0]);
    const auto& vk = kernels::vec::host_vec_kernels();
    const auto act = kernels::vec::host_act_kernel();
    // Whole rows per task when there is a bias, so that each row meets the bias from its start.
    const int64_t rows = n / len;
    parallel_range(io.pool, rows, std::max<int64_t>(1, kMinChunk / len),
                   [&](int64_t r0, int64_t r1) {
                     const size_t m = size_t((r1 - r0) * len);
                     const float* src = in + r0 * len;
                     float* dst = out + r0 * len;
                     if (bias) {
                       for (int64_t r = r0; r < r1; ++r) {
                         const float* xr = in + r * len;
                         float* yr = out + r * len;
                         for (int64_t j = 0; j < len; ++j) yr[j] = xr[j] + bias[j];
                       }
                       src = dst;
                     }
                     switch (kind) {
                       case GeluKind::kErf:
                         vk.gelu(src, dst, m);
                         break;
                       case GeluKind::kTanh:
                         vk.gelu_tanh(src, dst, m);
                         break;
                       case GeluKind::kQuick: {
                         std::vector<float> t(m);
                         for (size_t i = 0; i < m; ++i) t[i] = alpha * src[i];
                         act(kernels::vec::kActSigmoid, t.data(), t.data(), m, 0.0f, 0.0f);
                         for (size_t i = 0; i < m; ++i) dst[i] = src[i] * t[i];
                         break;
                       }
                     }
                   });
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_ms_gelu_op(BuildContext& ctx) {
  return build_contrib_gelu(ctx, GeluKind::kErf, -1, false);
}
Result<std::unique_ptr<Kernel>> build_bias_gelu_op(BuildContext& ctx) {
  return build_contrib_gelu(ctx, GeluKind::kErf, 1, true);
}
Result<std::unique_ptr<Kernel>> build_fast_gelu_op(BuildContext& ctx) {
  return build_contrib_gelu(ctx, GeluKind::kTanh, 1, false);
}
Result<std::unique_ptr<Kernel>> build_quick_gelu_op(BuildContext& ctx) {
  return build_contrib_gelu(ctx, GeluKind::kQuick, -1, false);
}

}  // namespace onnx_prepack::runtime::math
