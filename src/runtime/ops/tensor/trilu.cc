// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the
// last two dims; k is read at run time.
#include <algorithm>
#include <cstring>

#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_trilu(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  size_t rank = x->shape.size();
  if (rank < 2) return ctx.error("input must have rank >= 2, got " + shape_string(x->shape));
  bool has_k = ctx.has_input(1);
  bool k64 = true;
  if (has_k) {
    const ValueDesc& k = ctx.input(1);
    OP_RETURN_IF_ERROR(require_index_type(ctx, k.dtype, "k"));
    if (shape_numel(k.shape) != 1) return ctx.error("k must hold one element");
    k64 = k.dtype == kInt64;
  }
  bool upper = ctx.attr_int("upper", 1) != 0;
  ctx.set_output(0, x->dtype, x->shape);
  int64_t rows = x->shape[rank - 2], cols = x->shape[rank - 1];
  int64_t mats = dims_product(x->shape, 0, rank - 2);
  size_t w = dtype_size(x->dtype);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    int64_t k = has_k && io.in[1] ? index_at(io.in[1], k64, 0) : 0;
    // k beyond [-rows, cols] keeps or zeroes every element, as k = -rows or
    // cols does; clamped so that i + k + 1 cannot overflow (k = INT64_MAX).
    k = std::clamp<int64_t>(k, -rows, cols);
    const auto* in = static_cast<const uint8_t*>(io.in[0]);
    auto* o = static_cast<uint8_t*>(io.out[0]);
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        size_t row = size_t((m * rows + i) * cols) * w;
        // Kept columns: [lo, hi).
        int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        if (hi < lo) hi = lo;
        std::memset(o + row, 0, size_t(cols) * w);
        if (hi > lo)
          std::memcpy(o + row + size_t(lo) * w, in + row + size_t(lo) * w, size_t(hi - lo) * w);
      }
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
