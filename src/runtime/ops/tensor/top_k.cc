// TopK: the k largest (or smallest) entries along an axis and their indices;
// ties keep the lower index first. k (an input since opset 10) must be known
// at plan time since it is the output's dimension.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_top_k(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  if (rank == 0) return ctx.error("input must have rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", -1), rank, ctx));
  int64_t k;
  if (ctx.opset() < 10) {
    k = ctx.attr_int("k", -1);
    // TopK-1's k attribute is required and positive (onnx's inference).
    if (k < 1) return ctx.error("attribute k must be >= 1, got " + std::to_string(k));
  } else {
    OP_ASSIGN_OR_RETURN(auto kv, ints_for_shape(ctx, 1, "k"));
    if (kv.size() != 1) return ctx.error("k must hold one element");
    k = kv[0];
  }
  int64_t dim = x->shape[size_t(axis)];
  if (k < 0 || k > dim)
    return ctx.error("k " + std::to_string(k) + " is out of range for dimension " +
                     std::to_string(dim));
  const int64_t largest_v = ctx.attr_int("largest", 1), sorted_v = ctx.attr_int("sorted", 1);
  if ((largest_v != 0 && largest_v != 1) || (sorted_v != 0 && sorted_v != 1))  // flags
    return ctx.error("largest and sorted must be 0 or 1, got " + std::to_string(largest_v) +
                     " and " + std::to_string(sorted_v));
  bool largest = largest_v == 1;
  Shape out = x->shape;
  out[size_t(axis)] = k;
  ctx.set_output(0, x->dtype, out);
  ctx.set_output(1, kInt64, out);
  int64_t outer = dims_product(x->shape, 0, size_t(axis));
  int64_t inner = dims_product(x->shape, size_t(axis) + 1, x->shape.size());
  std::unique_ptr<Kernel> kernel;
  bool ok = dispatch_numeric(x->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernel = std::make_unique<FnKernel>([=](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      T* vals = static_cast<T*>(io.out[0]);  // either output may be unused (null)
      auto* inds = io.out.size() > 1 ? static_cast<int64_t*>(io.out[1]) : nullptr;
      if (k == 0) return;
      parallel_range(io.pool, outer * inner, 16, [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> order(static_cast<size_t>(dim));
        for (int64_t r = r0; r < r1; ++r) {
          int64_t a = r / inner, j = r % inner;
          const T* base = in + a * dim * inner + j;
          std::iota(order.begin(), order.end(), 0);
          // NaN ranks above every number when largest, below when smallest.
          auto before = [&](int64_t p, int64_t q) {
            T u = base[p * inner], v = base[q * inner];
            if constexpr (std::is_floating_point_v<T>) {
              bool un = std::isnan(u), vn = std::isnan(v);
              if (un || vn) return un && !vn ? largest : (!un && vn ? !largest : p < q);
            }
            if (u != v) return largest ? u > v : u < v;
            return p < q;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t t = 0; t < k; ++t) {
            int64_t src = order[size_t(t)];
            if (vals) vals[(a * k + t) * inner + j] = base[src * inner];
            if (inds) inds[(a * k + t) * inner + j] = src;
          }
        }
      });
    });
  });
  if (!ok) return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return kernel;
}

}  // namespace onnx_prepack::runtime::tensor_family
