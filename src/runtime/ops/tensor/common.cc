// Helpers shared by the tensor family's builders (see tensor_ops.h).
#include <algorithm>
#include <string>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime::tensor_family {

Result<const Tensor*> value_for_shape(const BuildContext& ctx, int input, std::string_view what) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* d, ctx.require_input(input));
  if (d->value == nullptr) {
    return ctx.needs_value(std::string(what) + " (input " + std::to_string(input) + " '" + d->name +
                           "') is needed to plan the output, so it must be known before running"
                           ": a constant, computed from constants, or a pinned input");
  }
  return d->value;
}

Result<std::vector<int64_t>> ints_for_shape(const BuildContext& ctx, int input,
                                            std::string_view what, bool any_numeric) {
  OP_ASSIGN_OR_RETURN(const Tensor* t, value_for_shape(ctx, input, what));
  if (!any_numeric) OP_RETURN_IF_ERROR(require_index_type(ctx, t->dtype, what));
  std::vector<int64_t> v(size_t(t->numel()));
  bool ok = dispatch_numeric(t->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(static_cast<const T*>(t->data)[i]);
  });
  if (!ok)
    return ctx.error(std::string(what) + ": type " + dtype_name(t->dtype) + " is not supported");
  return v;
}

Status require_fixed_width(const BuildContext& ctx, int32_t dtype) {
  if (dtype_size(dtype) == 0) return ctx.error("type " + dtype_name(dtype) + " is not supported");
  return ok_status();
}

Status require_index_type(const BuildContext& ctx, int32_t dtype, std::string_view what) {
  if (dtype != kInt32 && dtype != kInt64)
    return ctx.error(std::string(what) + " must be int32 or int64, got " + dtype_name(dtype));
  return ok_status();
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t dims_product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

void permute_copy(const void* in, void* out, const Shape& in_shape,
                  const std::vector<int64_t>& perm, size_t width, base::ThreadPool* pool) {
  size_t rank = in_shape.size();
  std::vector<int64_t> in_strides = strides_of(in_shape);
  Shape out_shape(rank);
  std::vector<int64_t> src_stride(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = in_shape[size_t(perm[i])];
    src_stride[i] = in_strides[size_t(perm[i])];
  }
  int64_t total = shape_numel(out_shape);  // dims-lint: ok (a permutation of in_shape)
  if (total == 0) return;
  int64_t inner = rank ? out_shape[rank - 1] : 1;
  int64_t inner_stride = rank ? src_stride[rank - 1] : 1;
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  int64_t rows = total / inner;
  dispatch_width(width, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = reinterpret_cast<const T*>(src);
    T* o = reinterpret_cast<T*>(dst);
    parallel_range(pool, rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t rem = r, off = 0;
        for (size_t d = rank > 0 ? rank - 1 : 0; d-- > 0;) {
          off += (rem % out_shape[d]) * src_stride[d];
          rem /= out_shape[d];
        }
        T* row = o + r * inner;
        for (int64_t j = 0; j < inner; ++j) row[j] = s[off + j * inner_stride];
      }
    });
  });
}

Result<std::vector<double>> float_values(const Tensor& t, std::string_view what) {
  std::vector<double> v(size_t(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype) {
      case kFloat:
        v[i] = static_cast<const float*>(t.data)[i];
        break;
      case kDouble:
        v[i] = static_cast<const double*>(t.data)[i];
        break;
      case kFloat16:
        v[i] = half_to_float(static_cast<const uint16_t*>(t.data)[i]);
        break;
      case kBfloat16:
        v[i] = bfloat16_to_float(static_cast<const uint16_t*>(t.data)[i]);
        break;
      default:
        return invalid_argument(std::string(what) + ": expected a float tensor, got " +
                                dtype_name(t.dtype));
    }
  }
  return v;
}

Result<double> scalar_as_double(const Tensor& t, std::string_view what) {
  if (t.numel() != 1) return invalid_argument(std::string(what) + " must hold one element");
  double v = 0;
  bool ok = dispatch_numeric(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = double(*static_cast<const T*>(t.data));
  });
  if (!ok && t.dtype == kFloat16) {
    v = half_to_float(*static_cast<const uint16_t*>(t.data));
    ok = true;
  }
  if (!ok)
    return invalid_argument(std::string(what) + ": type " + dtype_name(t.dtype) +
                            " is not supported");
  return v;
}

}  // namespace onnx_prepack::runtime::tensor_family
