// com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization: LayerNormalization
// (RMS normalization) over the last axis of input + skip (+ bias), as ONNX Runtime's CPU kernel:
// the sum is formed in T's precision for float, in float for FLOAT16, in the order
// (input + skip) + bias, and output 3 (input_skip_bias_sum) is that sum. Then the rows go
// through norm_rows.h, the vectorised LayerNormalization rows.
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

Result<std::unique_ptr<Kernel>> build_skip_norm(BuildContext& ctx, bool simplified) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* skip, ctx.require_input(1));
  OP_RETURN_IF_ERROR(ctx.require_input(2).status());
  // SkipLayerNormalization: input, skip, gamma, beta, bias; the simplified one has no beta.
  const int beta_i = simplified ? -1 : 3, bias_i = simplified ? 3 : 4;
  if (ctx.input_count() > bias_i + 1)
    return ctx.error(std::to_string(ctx.input_count()) + " inputs, at most " +
                     std::to_string(bias_i + 1));
  if (x->dtype != kFloat && x->dtype != kFloat16)
    return ctx.error("input must be float or float16, got " + dtype_name(x->dtype));
  const size_t rank = x->shape.size();
  if (rank != 2 && rank != 3)
    return ctx.error("input must have rank 2 or 3, got " + shape_string(x->shape));
  const int64_t hidden = x->shape[rank - 1];
  const auto same_type = [&](const ValueDesc& v, const char* what) -> Status {
    if (v.dtype != x->dtype)
      return ctx.error(std::string(what) + " has type " + dtype_name(v.dtype) + ", input " +
                       dtype_name(x->dtype));
    return ok_status();
  };
  OP_RETURN_IF_ERROR(same_type(*skip, "skip"));
  // skip: input's shape, or for a 3-D input [1, S, H] or [S, H] (one sequence for every batch).
  const Shape& ss = skip->shape;
  bool skip_ok = ss == x->shape;
  if (!skip_ok && rank == 3) {
    skip_ok = (ss.size() == 2 && ss[0] == x->shape[1] && ss[1] == hidden) ||
              (ss.size() == 3 && ss[0] == 1 && ss[1] == x->shape[1] && ss[2] == hidden);
  }
  if (!skip_ok) {
    return ctx.error("skip " + shape_string(ss) + " must have input's shape " +
                     shape_string(x->shape) + (rank == 3 ? " or [1, S, H] / [S, H]" : ""));
  }
  const auto vec_param = [&](int i, const char* what) -> Status {
    const ValueDesc& v = ctx.input(i);
    OP_RETURN_IF_ERROR(same_type(v, what));
    if (v.shape.size() != 1 || v.shape[0] != hidden)
      return ctx.error(std::string(what) + " " + shape_string(v.shape) + " must be [" +
                       std::to_string(hidden) + "] (the hidden size)");
    return ok_status();
  };
  OP_RETURN_IF_ERROR(vec_param(2, "gamma"));
  const bool has_beta = beta_i >= 0 && ctx.has_input(beta_i);
  const bool has_bias = ctx.has_input(bias_i);
  if (has_beta) OP_RETURN_IF_ERROR(vec_param(beta_i, "beta"));
  if (has_bias) OP_RETURN_IF_ERROR(vec_param(bias_i, "bias"));
  const float eps = ctx.attr_float("epsilon", 1e-12f);
  if (!(eps >= 0.0f)) return ctx.error("epsilon " + std::to_string(eps) + " must be >= 0");
  if (ctx.output_count() > 4)
    return ctx.error(std::to_string(ctx.output_count()) +
                     " outputs, at most 4 (output, mean, inv_std_var, input_skip_bias_sum)");

  ctx.set_output(0, x->dtype, x->shape);
  Shape stat = x->shape;
  stat[rank - 1] = 1;
  if (ctx.output_count() > 1) ctx.set_output(1, kFloat, stat);
  if (ctx.output_count() > 2) ctx.set_output(2, kFloat, stat);
  if (ctx.output_count() > 3) ctx.set_output(3, x->dtype, x->shape);

  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= x->shape[i];
  const int64_t skip_rows =
      std::max<int64_t>(1, shape_numel(skip->shape) / std::max<int64_t>(hidden, 1));
  const bool half = x->dtype == kFloat16;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const size_t h = size_t(hidden);
    std::vector<float> gb, bb, sb;
    const float* g = norm::as_floats(io.in[2], half, h, gb);
    const float* be = has_beta ? norm::as_floats(io.in[size_t(beta_i)], half, h, bb) : nullptr;
    const float* bi = has_bias ? norm::as_floats(io.in[size_t(bias_i)], half, h, sb) : nullptr;
    auto out_at = [&](size_t i) { return io.out.size() > i ? io.out[i] : nullptr; };
    float* mean = static_cast<float*>(out_at(1));
    float* inv = static_cast<float*>(out_at(2));
    void* sum_out = out_at(3);
    if (simplified && mean != nullptr) std::fill(mean, mean + rows, 0.0f);
    parallel_range(io.pool, rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(hidden, 1)),
                   [&](int64_t r0, int64_t r1) {
                     const size_t nr = size_t(r1 - r0), n = nr * h;
                     std::vector<float> buf;
                     float* s;  // the sums of rows [r0, r1)
                     if (!half) {
                       s = sum_out ? static_cast<float*>(sum_out) + r0 * hidden
                                   : static_cast<float*>(io.out[0]) + r0 * hidden;
                       const float* in = static_cast<const float*>(io.in[0]);
                       const float* sk = static_cast<const float*>(io.in[1]);
                       for (int64_t r = r0; r < r1; ++r) {
                         const float* xr = in + r * hidden;
                         const float* kr = sk + (r % skip_rows) * hidden;
                         float* sr = s + (r - r0) * hidden;
                         for (size_t j = 0; j < h; ++j) sr[j] = xr[j] + kr[j];
                         if (bi)
                           for (size_t j = 0; j < h; ++j) sr[j] += bi[j];
                       }
                     } else {
                       buf.resize(n);
                       s = buf.data();
                       norm::f16_to_f32(static_cast<const uint16_t*>(io.in[0]) + r0 * hidden, s, n);
                       std::vector<float> kr(h);
                       const uint16_t* sk = static_cast<const uint16_t*>(io.in[1]);
                       for (int64_t r = r0; r < r1; ++r) {
                         norm::f16_to_f32(sk + (r % skip_rows) * hidden, kr.data(), h);
                         float* sr = s + (r - r0) * hidden;
                         for (size_t j = 0; j < h; ++j) sr[j] += kr[j];
                         if (bi)
                           for (size_t j = 0; j < h; ++j) sr[j] += bi[j];
                       }
                       if (sum_out)
                         norm::f32_to_f16(s, static_cast<uint16_t*>(sum_out) + r0 * hidden, n);
                     }
                     float* y = half ? s : static_cast<float*>(io.out[0]) + r0 * hidden;
                     norm::normalize_rows(s, g, be, y, simplified || !mean ? nullptr : mean + r0,
                                          inv ? inv + r0 : nullptr, nr, h, eps, simplified);
                     if (half)
                       norm::f32_to_f16(s, static_cast<uint16_t*>(io.out[0]) + r0 * hidden, n);
                   });
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_skip_layer_norm(BuildContext& ctx) {
  return build_skip_norm(ctx, false);
}

Result<std::unique_ptr<Kernel>> build_skip_simplified_layer_norm(BuildContext& ctx) {
  return build_skip_norm(ctx, true);
}

}  // namespace onnx_prepack::runtime
