// ReverseSequence: for each batch entry, the first sequence_lens[b] steps along
// the time axis are reversed; the rest are copied.
#include <cstring>

#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_reverse_sequence(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* lens, ctx.require_input(1));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  if (lens->dtype != kInt64) return ctx.error("sequence_lens must be int64");
  int64_t rank = int64_t(x->shape.size());
  if (rank < 2) return ctx.error("input must have rank >= 2");
  int64_t time_axis = ctx.attr_int("time_axis", 0), batch_axis = ctx.attr_int("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0)))
    return ctx.error("time_axis and batch_axis must be 0 and 1");
  int64_t steps = x->shape[size_t(time_axis)], batch = x->shape[size_t(batch_axis)];
  if (shape_numel(lens->shape) != batch)
    return ctx.error("sequence_lens must hold " + std::to_string(batch) + " entries");
  ctx.set_output(0, x->dtype, x->shape);
  int64_t inner = dims_product(x->shape, 2, x->shape.size());
  size_t slice = size_t(inner) * dtype_size(x->dtype);
  // Element offset (in slices) of (t, b).
  int64_t t_stride = time_axis == 0 ? batch : 1, b_stride = time_axis == 0 ? 1 : steps;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const auto* in = static_cast<const uint8_t*>(io.in[0]);
    const auto* len = static_cast<const int64_t*>(io.in[1]);
    auto* o = static_cast<uint8_t*>(io.out[0]);
    if (slice == 0) return;
    for (int64_t b = 0; b < batch; ++b) {
      int64_t n = std::clamp<int64_t>(len[b], 0, steps);
      for (int64_t t = 0; t < steps; ++t) {
        int64_t src = t < n ? n - 1 - t : t;
        std::memcpy(o + size_t(t * t_stride + b * b_stride) * slice,
                    in + size_t(src * t_stride + b * b_stride) * slice, slice);
      }
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
