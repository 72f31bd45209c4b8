// OneHot: a new axis of `depth` entries, `on` at each index and `off` elsewhere
// (negative indices count from the end; indices out of range give a row of `off`).
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_one_hot(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* values, ctx.require_input(2));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, values->dtype));
  if (shape_numel(values->shape) != 2) return ctx.error("values must hold [off, on]");
  OP_ASSIGN_OR_RETURN(auto depth_v, ints_for_shape(ctx, 1, "depth", /*any_numeric=*/true));
  if (depth_v.size() != 1) return ctx.error("depth must hold one element");
  int64_t depth = depth_v[0];
  if (depth < 0) return ctx.error("depth must be non-negative");
  // onnx's inference (and ORT) refuse scalar indices: the new axis needs an index tensor.
  if (idx->shape.empty()) return ctx.error("indices must have rank >= 1, got a scalar");
  int64_t rank = int64_t(idx->shape.size()) + 1;
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", -1), rank, ctx));
  Shape out = idx->shape;
  out.insert(out.begin() + axis, depth);
  if (checked_numel(out) < 0) return ctx.error("output " + shape_string(out) + " overflows");
  ctx.set_output(0, values->dtype, out);
  int64_t outer = dims_product(idx->shape, 0, size_t(axis));
  int64_t inner = dims_product(idx->shape, size_t(axis), idx->shape.size());
  int32_t idx_type = idx->dtype;
  size_t w = dtype_size(values->dtype);
  // Reads index i as int64 (float indices truncate, as the reference casts).
  auto read = [idx_type](const void* p, int64_t i) {
    int64_t v = 0;
    dispatch_numeric(idx_type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T x = static_cast<const T*>(p)[i];
      if constexpr (std::is_floating_point_v<T>) {
        // A float past int64 (or NaN) is out of range, not an undefined cast.
        if (!(x > T(-9.2e18) && x < T(9.2e18))) {
          v = std::numeric_limits<int64_t>::min();
          return;
        }
      }
      v = int64_t(x);
    });
    return v;
  };
  if (!dispatch_numeric(idx_type, [](auto) {}))
    return ctx.error("indices type " + dtype_name(idx_type) + " is not supported");
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const auto* vals = static_cast<const uint8_t*>(io.in[2]);
    auto* o = static_cast<uint8_t*>(io.out[0]);
    int64_t total = outer * depth * inner;
    for (int64_t e = 0; e < total; ++e) std::memcpy(o + size_t(e) * w, vals, w);
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t i = read(io.in[0], a * inner + j);
        if (i < 0) i += depth;
        if (i < 0 || i >= depth) continue;
        std::memcpy(o + size_t((a * depth + i) * inner + j) * w, vals + w, w);
      }
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
