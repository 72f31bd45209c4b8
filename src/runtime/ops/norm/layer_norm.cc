// LayerNormalization: float rows on kernels/vec_math, the general case (and
// double) per row here (ReduceMean, with the other reductions, is in ops/math/reduce.cc).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/vec_math/vec_math.h"
#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/norm/norm_ops.h"

namespace onnx_prepack::runtime {
namespace {

struct LayerNormPlan {
  int64_t outer, len;
  float eps;
  bool has_bias, scale_full, bias_full;
  std::vector<int64_t> sidx, bidx;  // broadcast indices of scale and bias when not full
  kernels::vec::LayerNormFn fn;     // vectorised float rows, or null
};

// Statistics in double. For float the mean and 1 / stddev are rounded to float before use
// (as the vectorised rows do); for double everything stays double. Mean and InvStdDev are
// float either way (their type U is float by default, stash_type).
template <typename T>
std::unique_ptr<Kernel> layer_norm_kernel(LayerNormPlan p) {
  return std::unique_ptr<Kernel>(new FnKernel([p = std::move(p)](const KernelIO& io) {
    const int64_t len = p.len;
    const T* in = static_cast<const T*>(io.in[0]);
    const T* sc = static_cast<const T*>(io.in[1]);
    const T* bi = p.has_bias ? static_cast<const T*>(io.in[2]) : nullptr;
    T* out = static_cast<T*>(io.out[0]);
    float* mean_out = io.out.size() > 1 ? static_cast<float*>(io.out[1]) : nullptr;
    float* inv_out = io.out.size() > 2 ? static_cast<float*>(io.out[2]) : nullptr;
    parallel_range(io.pool, p.outer, std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)),
                   [&](int64_t r0, int64_t r1) {
                     if constexpr (std::is_same_v<T, float>) {
                       if (p.fn != nullptr) {
                         p.fn(in + r0 * len, sc, bi, out + r0 * len,
                              mean_out ? mean_out + r0 : nullptr, inv_out ? inv_out + r0 : nullptr,
                              size_t(r1 - r0), size_t(len), p.eps);
                         return;
                       }
                     }
                     for (int64_t r = r0; r < r1; ++r) {
                       const T* xr = in + r * len;
                       T* yr = out + r * len;
                       double sum = 0.0;
                       for (int64_t j = 0; j < len; ++j) sum += xr[j];
                       T mean = T(sum / double(len));
                       double var = 0.0;
                       for (int64_t j = 0; j < len; ++j) {
                         double d = double(xr[j] - mean);
                         var += d * d;
                       }
                       T inv = T(1.0 / std::sqrt(var / double(len) + double(p.eps)));
                       if (mean_out) mean_out[r] = float(mean);
                       if (inv_out) inv_out[r] = float(inv);
                       for (int64_t j = 0; j < len; ++j) {
                         T s = p.scale_full ? sc[j] : sc[p.sidx[size_t(j)]];
                         T v = (xr[j] - mean) * inv * s;
                         if (bi) v += p.bias_full ? bi[j] : bi[p.bidx[size_t(j)]];
                         yr[j] = v;
                       }
                     }
                   });
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_layer_norm(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* scale, ctx.require_input(1));
  if ((x->dtype != kFloat && x->dtype != kDouble) || scale->dtype != x->dtype)
    return ctx.error("only float and double are supported");
  int64_t rank = int64_t(x->shape.size());
  if (rank == 0) return ctx.error("input must have rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", -1), rank, ctx));
  float eps = ctx.attr_float("epsilon", 1e-5f);
  Shape norm_shape(x->shape.begin() + axis, x->shape.end());
  int64_t outer = 1, len = shape_numel(norm_shape);  // dims-lint: ok (X's trailing dims)
  for (int64_t i = 0; i < axis; ++i) outer *= x->shape[size_t(i)];
  auto check_param = [&](const ValueDesc& p, const char* what) -> Status {
    auto r = broadcast_shapes(p.shape, norm_shape);
    if (!r.ok() || *r != norm_shape || p.dtype != x->dtype) {
      return ctx.error(std::string(what) + " " + shape_string(p.shape) +
                       " does not broadcast to the normalized shape " + shape_string(norm_shape));
    }
    return ok_status();
  };
  OP_RETURN_IF_ERROR(check_param(*scale, "scale"));
  bool has_bias = ctx.has_input(2);
  if (has_bias) OP_RETURN_IF_ERROR(check_param(ctx.input(2), "bias"));
  // Expand scale and bias to the full normalized shape once, at plan time, if
  // they are constants; otherwise index with broadcast strides.
  auto ss = broadcast_strides(scale->shape, norm_shape);
  std::vector<int64_t> bstr =
      has_bias ? broadcast_strides(ctx.input(2).shape, norm_shape) : std::vector<int64_t>();
  auto index_of = [norm_shape](const std::vector<int64_t>& strides) {
    // dims-lint: ok (X's trailing dims)
    std::vector<int64_t> idx(size_t(shape_numel(norm_shape)));
    for (size_t e = 0; e < idx.size(); ++e) {
      int64_t rem = int64_t(e), off = 0;
      for (size_t d = norm_shape.size(); d-- > 0;) {
        off += (rem % norm_shape[d]) * strides[d];
        rem /= norm_shape[d];
      }
      idx[e] = off;
    }
    return idx;
  };
  bool scale_full = shape_numel(scale->shape) == len;
  bool bias_full = !has_bias || shape_numel(ctx.input(2).shape) == len;
  std::vector<int64_t> sidx = scale_full ? std::vector<int64_t>() : index_of(ss);
  std::vector<int64_t> bidx = bias_full ? std::vector<int64_t>() : index_of(bstr);

  ctx.set_output(0, x->dtype, x->shape);
  Shape stat_shape = x->shape;
  for (int64_t i = axis; i < rank; ++i) stat_shape[size_t(i)] = 1;
  if (ctx.output_count() > 1) ctx.set_output(1, kFloat, stat_shape);
  if (ctx.output_count() > 2) ctx.set_output(2, kFloat, stat_shape);
  LayerNormPlan p{outer,           len,    eps, has_bias, scale_full, bias_full, std::move(sidx),
                  std::move(bidx), nullptr};
  if (x->dtype == kDouble) return layer_norm_kernel<double>(std::move(p));
  // Full-length scale and bias: vectorised rows (vec_math.h); otherwise the
  // scalar loop with broadcast indices.
  if (scale_full && bias_full) p.fn = kernels::vec::host_vec_kernels().layer_norm_rows;
  return layer_norm_kernel<float>(std::move(p));
}

}  // namespace onnx_prepack::runtime
