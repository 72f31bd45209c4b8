// Dropout at inference: the output is the input and the mask all true. Training
// mode (an input since opset 12) with a ratio above zero drops at random, which
// an inference runtime refuses; with ratio 0 it is the identity too.
#include <cstring>

#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_dropout(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  if (ctx.opset() >= 12 && ctx.has_input(2)) {
    OP_ASSIGN_OR_RETURN(const Tensor* training, value_for_shape(ctx, 2, "training_mode"));
    bool on = training->numel() == 1 && *static_cast<const uint8_t*>(training->data) != 0;
    double ratio = 0.5;
    if (ctx.has_input(1)) {
      OP_ASSIGN_OR_RETURN(const Tensor* r, value_for_shape(ctx, 1, "ratio"));
      auto v = scalar_as_double(*r, "ratio");
      if (!v.ok()) return ctx.error(v.status().message());
      ratio = *v;
    }
    if (on && ratio != 0)
      return ctx.error("training_mode with ratio " + std::to_string(ratio) +
                       " drops at random: training is not supported");
  }
  ctx.set_output(0, x->dtype, x->shape);
  bool has_mask = ctx.output_count() > 1 && !ctx.node().output(1).empty();
  if (!has_mask) {
    ctx.set_alias(0, 0);
    return std::unique_ptr<Kernel>();
  }
  ctx.set_output(1, kBool, x->shape);
  size_t bytes = size_t(shape_numel(x->shape)) * dtype_size(x->dtype);
  int64_t n = shape_numel(x->shape);
  return std::unique_ptr<Kernel>(new FnKernel([bytes, n](const KernelIO& io) {
    if (io.out[0] && bytes) std::memcpy(io.out[0], io.in[0], bytes);
    if (io.out[1] && n) std::memset(io.out[1], 1, size_t(n));
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
