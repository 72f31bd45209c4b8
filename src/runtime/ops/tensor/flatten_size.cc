// Flatten (an alias with a 2-D shape) and Size (the element count, known at
// plan time).
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_flatten(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  int64_t axis = ctx.attr_int("axis", 1);
  const int64_t lowest = ctx.opset() < 11 ? 0 : -rank;  // negative axes came with Flatten-11
  if (axis < lowest || axis > rank)
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  if (axis < 0) axis += rank;
  ctx.set_output(0, x->dtype,
                 {dims_product(x->shape, 0, size_t(axis)),
                  dims_product(x->shape, size_t(axis), size_t(rank))});
  ctx.set_alias(0, 0);
  return std::unique_ptr<Kernel>();
}

BuildResult build_size(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  auto t = HostTensor::allocate(kInt64, {});
  *static_cast<int64_t*>(t.mutable_data()) = shape_numel(x->shape);
  ctx.set_output_value(0, std::move(t));
  return std::unique_ptr<Kernel>();
}

}  // namespace onnx_prepack::runtime::tensor_family
