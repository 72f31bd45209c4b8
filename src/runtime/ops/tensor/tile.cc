// Tile: the input repeated along each axis (repeats known at plan time).
#include <cstring>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_tile(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  OP_ASSIGN_OR_RETURN(auto repeats, ints_for_shape(ctx, 1, "repeats"));
  size_t rank = x->shape.size();
  if (repeats.size() != rank)
    return ctx.error("repeats has " + std::to_string(repeats.size()) + " entries for rank " +
                     std::to_string(rank));
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (repeats[i] < 0) return ctx.error("repeats must be non-negative");
    const std::optional<int64_t> d = checked_mul(x->shape[i], repeats[i]);
    if (!d)
      return ctx.error("output dimension " + std::to_string(i) + " (" +
                       std::to_string(x->shape[i]) + " * repeats " + std::to_string(repeats[i]) +
                       ") overflows");
    out[i] = *d;
  }
  if (checked_numel(out) < 0) return ctx.error("output " + shape_string(out) + " overflows");
  ctx.set_output(0, x->dtype, out);
  size_t w = dtype_size(x->dtype);
  Shape in_shape = x->shape;
  std::vector<int64_t> in_strides = strides_of(in_shape);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    int64_t total = shape_numel(out);  // dims-lint: ok (checked_numel above)
    if (total == 0) return;
    if (rank == 0) {
      std::memcpy(io.out[0], io.in[0], w);
      return;
    }
    const auto* in = static_cast<const uint8_t*>(io.in[0]);
    auto* o = static_cast<uint8_t*>(io.out[0]);
    int64_t in_inner = in_shape[rank - 1], out_inner = out[rank - 1];
    int64_t rows = total / out_inner;
    size_t row_bytes = size_t(in_inner) * w;
    parallel_range(io.pool, rows, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t rem = r, src = 0;
        for (size_t d = rank - 1; d-- > 0;) {
          src += ((rem % out[d]) % in_shape[d]) * in_strides[d];
          rem /= out[d];
        }
        uint8_t* dst = o + size_t(r * out_inner) * w;
        for (int64_t k = 0; k * in_inner < out_inner; ++k)
          std::memcpy(dst + size_t(k) * row_bytes, in + size_t(src) * w, row_bytes);
      }
    });
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
