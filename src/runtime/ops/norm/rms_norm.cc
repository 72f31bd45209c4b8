// SimplifiedLayerNormalization (ONNX Runtime's, default domain and com.microsoft) and ONNX
// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2) + epsilon) * scale over the axes from
// `axis` on; float and FLOAT16 (computed in float, as ONNX Runtime's CPU kernels do).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/norm/norm_ops.h"
#include "runtime/ops/norm/norm_rows.h"

namespace onnx_prepack::runtime {
namespace {

Result<std::unique_ptr<Kernel>> build_rms(BuildContext& ctx, bool has_inv_output) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* scale, ctx.require_input(1));
  if (x->dtype != kFloat && x->dtype != kFloat16)
    return ctx.error("X must be float or float16, got " + dtype_name(x->dtype));
  if (scale->dtype != x->dtype)
    return ctx.error("scale has type " + dtype_name(scale->dtype) + ", X " + dtype_name(x->dtype));
  const int64_t rank = int64_t(x->shape.size());
  if (rank == 0) return ctx.error("X must have rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", -1), rank, ctx));
  const float eps = ctx.attr_float("epsilon", 1e-5f);
  if (!(eps >= 0.0f)) return ctx.error("epsilon " + std::to_string(eps) + " must be >= 0");
  const int64_t stash = ctx.attr_int("stash_type", 1);
  if (stash != 1 && stash != 0)
    return ctx.error("stash_type " + std::to_string(stash) + " is not supported (1: float)");
  Shape norm_shape(x->shape.begin() + axis, x->shape.end());
  int64_t outer = 1, len = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x->shape[size_t(i)];
  for (int64_t d : norm_shape) len *= d;
  // scale holds one value per normalized element: the normalized shape, leading 1s aside
  // (ONNX Runtime requires scale's size to be the normalized size).
  auto strip = [](const Shape& s) {
    size_t i = 0;
    while (i < s.size() && s[i] == 1) ++i;
    return Shape(s.begin() + int64_t(i), s.end());
  };
  if (strip(scale->shape) != strip(norm_shape)) {
    return ctx.error("scale " + shape_string(scale->shape) +
                     " does not match the normalized shape " + shape_string(norm_shape) +
                     " (axis " + std::to_string(axis) + ")");
  }
  ctx.set_output(0, x->dtype, x->shape);
  if (ctx.output_count() > 1) {
    if (!has_inv_output) return ctx.error("RMSNormalization has one output");
    Shape stat = x->shape;
    for (int64_t i = axis; i < rank; ++i) stat[size_t(i)] = 1;
    ctx.set_output(1, kFloat, stat);
  }
  if (ctx.output_count() > 2) return ctx.error("at most 2 outputs (Y, inv_std_var)");
  const bool half = x->dtype == kFloat16;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<float> sbuf;
    const float* sc = norm::as_floats(io.in[1], half, size_t(len), sbuf);
    float* inv = io.out.size() > 1 ? static_cast<float*>(io.out[1]) : nullptr;
    parallel_range(
        io.pool, outer, std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)),
        [&](int64_t r0, int64_t r1) {
          const size_t rows = size_t(r1 - r0), n = rows * size_t(len);
          float* iv = inv ? inv + r0 : nullptr;
          if (!half) {
            const float* in = static_cast<const float*>(io.in[0]) + r0 * len;
            float* out = static_cast<float*>(io.out[0]) + r0 * len;
            norm::normalize_rows(in, sc, nullptr, out, nullptr, iv, rows, size_t(len), eps, true);
            return;
          }
          std::vector<float> buf(n);
          norm::f16_to_f32(static_cast<const uint16_t*>(io.in[0]) + r0 * len, buf.data(), n);
          norm::normalize_rows(buf.data(), sc, nullptr, buf.data(), nullptr, iv, rows, size_t(len),
                               eps, true);
          norm::f32_to_f16(buf.data(), static_cast<uint16_t*>(io.out[0]) + r0 * len, n);
        });
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_simplified_layer_norm(BuildContext& ctx) {
  return build_rms(ctx, true);
}

Result<std::unique_ptr<Kernel>> build_rms_norm(BuildContext& ctx) { return build_rms(ctx, false); }

}  // namespace onnx_prepack::runtime
