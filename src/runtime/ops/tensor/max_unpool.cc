// MaxUnpool: scatters X into zeros at the flat indices MaxPool produced. The
// indices address the default unpooled shape ((in - 1) * stride - pads +
// kernel); with output_shape (known at plan time) each index keeps its
// coordinates in the larger output, as onnx's definition places them.
#include <cstring>

#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_max_unpool(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  if (idx->dtype != kInt64 || idx->shape != x->shape)
    return ctx.error("indices must be int64 of X's shape");
  size_t rank = x->shape.size();
  if (rank < 3) return ctx.error("X must be [N, C, spatial...]");
  size_t sp = rank - 2;
  auto kernel = ctx.attr_ints("kernel_shape");
  if (!kernel || kernel->size() != sp)
    return ctx.error("kernel_shape must have one entry per spatial dim");
  std::vector<int64_t> strides = ctx.attr_ints("strides").value_or(std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads").value_or(std::vector<int64_t>(2 * sp, 0));
  if (strides.size() != sp || pads.size() != 2 * sp)
    return ctx.error("strides or pads do not match the rank");
  Shape def = {x->shape[0], x->shape[1]};
  for (size_t i = 0; i < sp; ++i) {
    const int64_t k = (*kernel)[i], s = strides[i], pb = pads[i], pe = pads[i + sp];
    // As ONNX Runtime: a positive kernel and stride, pads in [0, kernel).
    if (k <= 0 || s <= 0 || pb < 0 || pe < 0 || pb >= k || pe >= k)
      return ctx.error("kernel_shape[" + std::to_string(i) + "] = " + std::to_string(k) +
                       ", strides = " + std::to_string(s) + ", pads " + std::to_string(pb) + " / " +
                       std::to_string(pe) +
                       ": kernel and stride must be positive, pads in [0, kernel)");
    // (in - 1) * stride + kernel - pads, as ONNX; in is a dim, the rest attributes.
    const std::optional<int64_t> scaled = checked_mul(x->shape[2 + i] - 1, s);
    const std::optional<int64_t> d = scaled ? checked_add(*scaled, k - pb - pe) : std::nullopt;
    if (!d)
      return ctx.error("spatial dim " + std::to_string(i) + " of X " + shape_string(x->shape) +
                       " does not unpool to a valid size");
    def.push_back(*d);
  }
  Shape out = def;
  if (ctx.has_input(2)) {
    OP_ASSIGN_OR_RETURN(auto os, ints_for_shape(ctx, 2, "output_shape"));
    if (os.size() != rank)
      return ctx.error("output_shape must have " + std::to_string(rank) + " entries");
    out = Shape(os.begin(), os.end());
  }
  for (size_t i = 0; i < rank; ++i) {
    if (def[i] < 0 || out[i] < def[i] || (i < 2 && out[i] != def[i]))
      return ctx.error("output shape " + shape_string(out) + " is smaller than " +
                       shape_string(def));
  }
  if (checked_numel(out) < 0) return ctx.error("output overflows");
  ctx.set_output(0, x->dtype, out);
  size_t w = dtype_size(x->dtype);
  std::vector<int64_t> def_strides = strides_of(def), out_strides = strides_of(out);
  // out passed checked_numel above, and def is at most out in every dim.
  // dims-lint: ok
  int64_t n = shape_numel(x->shape), total = shape_numel(out), def_total = shape_numel(def);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    auto* o = static_cast<uint8_t*>(io.out[0]);
    if (total) std::memset(o, 0, size_t(total) * w);
    const auto* in = static_cast<const uint8_t*>(io.in[0]);
    const auto* ind = static_cast<const int64_t*>(io.in[1]);
    for (int64_t e = 0; e < n; ++e) {
      int64_t i = ind[e];
      if (i < 0 || i >= def_total) continue;  // out of range: skipped
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        off += (i / def_strides[d]) * out_strides[d];
        i %= def_strides[d];
      }
      std::memcpy(o + size_t(off) * w, in + size_t(e) * w, w);
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
