// Tensors generated from a shape or a size: EyeLike (ones on a diagonal, the
// input's shape) and the window functions HannWindow, HammingWindow and
// BlackmanWindow (opset 17; the length is a value, so it must be known at plan
// time and the window is computed then).
#include <cmath>
#include <cstring>
#include <numbers>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// Writes double `v` as element i of a tensor of `dtype` (numeric or float16).
bool store_as(int32_t dtype, void* data, int64_t i, double v) {
  if (dtype == kFloat16) {
    static_cast<uint16_t*>(data)[i] = float_to_half(float(v));
    return true;
  }
  if (dtype == kBool) {
    static_cast<uint8_t*>(data)[i] = v != 0;
    return true;
  }
  return dispatch_numeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    static_cast<T*>(data)[i] = T(v);
  });
}

// w[n] = sum_j a_j cos(2 pi j n / N) with alternating signs, N = size (periodic) or size - 1.
BuildResult build_window(BuildContext& ctx, std::vector<double> coefficients) {
  OP_ASSIGN_OR_RETURN(auto size_v, ints_for_shape(ctx, 0, "size"));
  if (size_v.size() != 1 || size_v[0] < 0) return ctx.error("size must be one non-negative value");
  int64_t size = size_v[0];
  if (size > (int64_t(1) << 30)) return ctx.error("size is too large");
  int32_t dtype = int32_t(ctx.attr_int("output_datatype", kFloat));
  bool periodic = ctx.attr_int("periodic", 1) != 0;
  auto t = HostTensor::allocate(dtype, {size});
  if (dtype_size(dtype) == 0)
    return ctx.error("output_datatype " + dtype_name(dtype) + " is not supported");
  double n_den = periodic ? double(size) : double(size - 1);
  for (int64_t n = 0; n < size; ++n) {
    double v = 0;
    for (size_t j = 0; j < coefficients.size(); ++j) {
      double c = n_den > 0 ? std::cos(2 * std::numbers::pi * double(j) * double(n) / n_den) : 1.0;
      v += (j % 2 == 0 ? 1 : -1) * coefficients[j] * c;
    }
    if (!store_as(dtype, t.mutable_data(), n, v))
      return ctx.error("output_datatype " + dtype_name(dtype) + " is not supported");
  }
  ctx.set_output_value(0, std::move(t));
  return std::unique_ptr<Kernel>();
}

}  // namespace

BuildResult build_hann_window(BuildContext& ctx) { return build_window(ctx, {0.5, 0.5}); }
BuildResult build_hamming_window(BuildContext& ctx) {
  return build_window(ctx, {25.0 / 46.0, 21.0 / 46.0});
}
BuildResult build_blackman_window(BuildContext& ctx) {
  return build_window(ctx, {0.42, 0.5, 0.08});
}

BuildResult build_eye_like(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->shape.size() != 2) return ctx.error("input must be 2-D, got " + shape_string(x->shape));
  int32_t dtype = int32_t(ctx.attr_int("dtype", x->dtype));
  if (dtype_size(dtype) == 0 ||
      !(dtype == kBool || dtype == kFloat16 || dispatch_numeric(dtype, [](auto) {})))
    return ctx.error("dtype " + dtype_name(dtype) + " is not supported");
  int64_t k = ctx.attr_int("k", 0);
  int64_t rows = x->shape[0], cols = x->shape[1];
  ctx.set_output(0, dtype, x->shape);
  size_t w = dtype_size(dtype);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::memset(io.out[0], 0, size_t(rows * cols) * w);
    for (int64_t i = 0; i < rows; ++i) {
      int64_t j = i + k;
      if (j >= 0 && j < cols) store_as(dtype, io.out[0], i * cols + j, 1.0);
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
