// Operators whose output size is decided by values: NonZero (the input must be
// known at plan time; computed then) and Compress (the condition must be
// known; the data may be a run-time value).
#include <cstring>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// Element i of a tensor is non-zero (any fixed-width type; floats by value so
// -0.0 counts as zero).
bool nonzero_at(const Tensor& t, int64_t i) {
  bool nz = false;
  if (t.dtype == kFloat16 || t.dtype == kBfloat16) {
    return (static_cast<const uint16_t*>(t.data)[i] & 0x7fff) != 0;
  }
  if (t.dtype == kBool) return static_cast<const uint8_t*>(t.data)[i] != 0;
  dispatch_numeric(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    nz = static_cast<const T*>(t.data)[i] != T(0);
  });
  return nz;
}

bool countable(int32_t dtype) {
  return dtype == kBool || dtype == kFloat16 || dtype == kBfloat16 ||
         dispatch_numeric(dtype, [](auto) {});
}

}  // namespace

BuildResult build_non_zero(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const Tensor* x, value_for_shape(ctx, 0, "input"));
  if (!countable(x->dtype)) return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  int64_t rank = int64_t(x->shape.size());
  int64_t n = x->numel();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < n; ++i) {
    if (nonzero_at(*x, i)) hits.push_back(i);
  }
  int64_t nnz = int64_t(hits.size());
  // A scalar is treated as a 1-D tensor of one element (as ONNX Runtime does).
  int64_t rows = std::max<int64_t>(rank, 1);
  auto t = HostTensor::allocate(kInt64, {rows, nnz});
  auto* o = static_cast<int64_t*>(t.mutable_data());
  std::vector<int64_t> strides = strides_of(x->shape);
  for (int64_t j = 0; j < nnz; ++j) {
    int64_t rem = hits[size_t(j)];
    for (int64_t d = 0; d < rank; ++d) {
      o[d * nnz + j] = rem / strides[size_t(d)];
      rem %= strides[size_t(d)];
    }
    if (rank == 0) o[j] = 0;
  }
  ctx.set_output_value(0, std::move(t));
  return std::unique_ptr<Kernel>();
}

BuildResult build_compress(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  OP_ASSIGN_OR_RETURN(const Tensor* cond, value_for_shape(ctx, 1, "condition"));
  if (cond->shape.size() != 1 || !countable(cond->dtype))
    return ctx.error("condition must be a 1-D bool tensor");
  const auto* a = ctx.typed_attr("axis", onnx::AttributeProto::INT);
  // Without axis the input is flattened.
  Shape view = a ? x->shape : Shape{shape_numel(x->shape)};
  int64_t rank = int64_t(view.size());
  int64_t axis = 0;
  if (a) {
    OP_ASSIGN_OR_RETURN(axis, normalize_axis(a->i(), rank, ctx));
  }
  int64_t dim = view[size_t(axis)];
  if (cond->numel() > dim)
    return ctx.error("condition has " + std::to_string(cond->numel()) + " entries for dimension " +
                     std::to_string(dim));
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond->numel(); ++i) {
    if (nonzero_at(*cond, i)) keep.push_back(i);
  }
  Shape out = view;
  out[size_t(axis)] = int64_t(keep.size());
  ctx.set_output(0, x->dtype, out);
  int64_t outer = dims_product(view, 0, size_t(axis));
  int64_t inner = dims_product(view, size_t(axis) + 1, view.size());
  size_t w = dtype_size(x->dtype);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const auto* in = static_cast<const uint8_t*>(io.in[0]);
    auto* o = static_cast<uint8_t*>(io.out[0]);
    size_t slice = size_t(inner) * w;
    int64_t kn = int64_t(keep.size());
    for (int64_t b = 0; b < outer; ++b) {
      for (int64_t j = 0; j < kn; ++j) {
        if (slice)
          std::memcpy(o + size_t(b * kn + j) * slice,
                      in + size_t(b * dim + keep[size_t(j)]) * slice, slice);
      }
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
