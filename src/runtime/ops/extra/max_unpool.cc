// MaxUnpool: scatters X into zeros at the flat positions I (as MaxPool's
// Indices output gives them: over the whole output tensor, batch and channel
// included). The output shape is output_shape when given (known at plan
// time), else (in - 1) * stride + kernel - pad_begin - pad_end per spatial dim.
#include <cstring>

#include "runtime/ops/extra/common.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime::extra {
namespace {

Result<std::unique_ptr<Kernel>> build_max_unpool(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  size_t rank = x->shape.size();
  if (rank < 3) return ctx.error("X must be [N, C, spatial...]");
  if (idx->dtype != kInt64 || idx->shape != x->shape)
    return ctx.error("I must be int64 of X's shape");
  size_t spatial = rank - 2;
  auto kernel = ctx.attr_ints("kernel_shape");
  if (!kernel || kernel->size() != spatial)
    return ctx.error("kernel_shape must have a value per spatial dimension");
  std::vector<int64_t> strides =
      ctx.attr_ints("strides").value_or(std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  if (strides.size() != spatial || pads.size() != 2 * spatial)
    return ctx.error("strides and pads must match the spatial rank");
  // The indices are positions in the default output (what MaxPool's input was);
  // an output_shape only enlarges the frame they are placed in.
  Shape natural = x->shape;
  for (size_t d = 0; d < spatial; ++d)
    natural[2 + d] =
        (x->shape[2 + d] - 1) * strides[d] + (*kernel)[d] - pads[d] - pads[spatial + d];
  Shape out = natural;
  if (ctx.has_input(2)) {
    const Tensor* os = ctx.input_value(2);
    if (os == nullptr) {
      return ctx.error("output_shape (input 2 '" + ctx.input(2).name +
                       "') is the output's shape, so it " + kNeedsValue +
                       ": a constant, computed from constants, or a pinned input");
    }
    OP_ASSIGN_OR_RETURN(std::vector<int64_t> v, to_int64_vector(*os, "output_shape"));
    if (v.size() != rank) return ctx.error("output_shape must have X's rank");
    out = Shape(v.begin(), v.end());
  }
  OP_ASSIGN_OR_RETURN(int64_t total, checked_elements(ctx, out));
  OP_ASSIGN_OR_RETURN(int64_t natural_total, checked_elements(ctx, natural));
  OP_ASSIGN_OR_RETURN(int64_t n, checked_elements(ctx, x->shape));
  ctx.set_output(0, x->dtype, out);
  size_t width = dtype_size(x->dtype);
  if (width == 0) return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  bool same = natural == out;
  std::unique_ptr<Kernel> k;
  dispatch_width(width, [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = make_kernel([n, total, natural_total, natural, out, same](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      const int64_t* where = static_cast<const int64_t*>(io.in[1]);
      T* y = static_cast<T*>(io.out[0]);
      if (total > 0) std::memset(y, 0, size_t(total) * sizeof(T));
      // An index outside the output is undefined by the spec; it is skipped.
      for (int64_t i = 0; i < n; ++i) {
        int64_t at = where[i];
        if (at < 0 || at >= natural_total) continue;
        if (!same) {  // the same coordinates in the larger frame
          int64_t rest = at, pos = 0, scale = 1;
          bool inside = true;
          for (size_t d = natural.size(); d-- > 0;) {
            int64_t c = rest % natural[d];
            rest /= natural[d];
            if (c >= out[d]) inside = false;
            pos += c * scale;
            scale *= out[d];
          }
          if (!inside) continue;
          at = pos;
        }
        if (at < total) y[at] = in[i];
      }
    });
  });
  return k;
}

constexpr OpEntry kOps[] = {
    {"MaxUnpool", build_max_unpool},
};

}  // namespace

std::span<const OpEntry> unpool_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
