// DepthToSpace (DCR and CRD) and SpaceToDepth: 6-D transposes of a 4-D input.
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

Result<int64_t> block_size(BuildContext& ctx, const ValueDesc& x) {
  if (x.shape.size() != 4) return ctx.error("input must be 4-D, got " + shape_string(x.shape));
  int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0) return ctx.error("blocksize must be positive, got " + std::to_string(b));
  // blocksize^2 and the output dims (x * blocksize, x * blocksize^2) must not
  // overflow.
  const std::optional<int64_t> b2 = checked_square(b);
  if (!b2 || !checked_product({x.shape[1], *b2}) || !checked_product({x.shape[2], b}) ||
      !checked_product({x.shape[3], b}))
    return ctx.error("blocksize " + std::to_string(b) + " overflows with input " +
                     shape_string(x.shape));
  return b;
}

}  // namespace

BuildResult build_depth_to_space(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  OP_ASSIGN_OR_RETURN(int64_t b, block_size(ctx, *x));
  const int64_t bb = b * b;  // dims-lint: ok (block_size checked the square)
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (c % bb != 0)
    return ctx.error("channels " + std::to_string(c) + " are not a multiple of blocksize^2");
  std::string mode = ctx.attr_string("mode", "DCR");
  Shape view;
  std::vector<int64_t> perm;
  if (mode == "DCR") {
    view = {n, b, b, c / bb, h, w};
    perm = {0, 3, 4, 1, 5, 2};
  } else if (mode == "CRD") {
    view = {n, c / bb, b, b, h, w};
    perm = {0, 1, 4, 2, 5, 3};
  } else {
    return ctx.error("mode '" + mode + "' is not DCR or CRD");
  }
  ctx.set_output(0, x->dtype, {n, c / bb, h * b, w * b});
  size_t width = dtype_size(x->dtype);
  return std::unique_ptr<Kernel>(new FnKernel(
      [=](const KernelIO& io) { permute_copy(io.in[0], io.out[0], view, perm, width, io.pool); }));
}

BuildResult build_space_to_depth(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  OP_ASSIGN_OR_RETURN(int64_t b, block_size(ctx, *x));
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (h % b != 0 || w % b != 0)
    return ctx.error("spatial dims " + shape_string(x->shape) + " are not multiples of blocksize");
  Shape view = {n, c, h / b, b, w / b, b};
  std::vector<int64_t> perm = {0, 3, 5, 1, 2, 4};
  // dims-lint: ok (block_size checked channels * blocksize^2)
  ctx.set_output(0, x->dtype, {n, c * b * b, h / b, w / b});
  size_t width = dtype_size(x->dtype);
  return std::unique_ptr<Kernel>(new FnKernel(
      [=](const KernelIO& io) { permute_copy(io.in[0], io.out[0], view, perm, width, io.pool); }));
}

}  // namespace onnx_prepack::runtime::tensor_family
