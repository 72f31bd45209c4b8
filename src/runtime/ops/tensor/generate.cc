// EyeLike: ones on a diagonal, in the input's shape. (The window functions are
// in ops/math/signal.cc.)
#include <cmath>
#include <cstring>

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

}  // namespace

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
