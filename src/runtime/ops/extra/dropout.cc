// Dropout at inference: the output is the input and the mask is all true
// (ones before opset 10, where the mask has the input's type). Training mode
// (opset 12+: the training_mode input; before 7: is_test=0) draws random
// numbers that no seed here can reproduce, so it is accepted only when it
// drops nothing (ratio 0) and refused otherwise. A training_mode or ratio that
// is a graph input must be pinned at plan time (kNeedsValue).
#include <cstring>

#include "runtime/ops/extra/common.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime::extra {
namespace {

// The value of scalar input `i`, or an error asking to pin it.
Result<const Tensor*> known_scalar(BuildContext& ctx, int i, const char* what) {
  const Tensor* t = ctx.input_value(i);
  if (t == nullptr) {
    return ctx.error(std::string(what) + " (input " + std::to_string(i) + " '" + ctx.input(i).name +
                     "') decides whether Dropout drops, so it " + kNeedsValue +
                     ": a constant, computed from constants, or a pinned input");
  }
  if (checked_numel(t->shape) != 1) return ctx.error(std::string(what) + " must be a scalar");
  return t;
}

double scalar_as_double(const Tensor& t) {
  switch (t.dtype) {
    case kFloat:
      return double(*static_cast<const float*>(t.data));
    case kDouble:
      return *static_cast<const double*>(t.data);
    case kBool:
      return double(*static_cast<const uint8_t*>(t.data));
    default:
      return -1;  // a type the spec does not allow; refused by the caller
  }
}

Result<std::unique_ptr<Kernel>> build_dropout(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  bool training = false;
  double ratio = ctx.attr_float("ratio", 0.5f);
  if (ctx.opset() < 7) {
    training = ctx.attr_int("is_test", 0) == 0;
  } else if (ctx.opset() >= 12) {
    if (ctx.has_input(2)) {
      OP_ASSIGN_OR_RETURN(const Tensor* t, known_scalar(ctx, 2, "training_mode"));
      if (t->dtype != kBool) return ctx.error("training_mode must be bool");
      training = scalar_as_double(*t) != 0;
    }
    ratio = 0.5;
    if (training && ctx.has_input(1)) {
      OP_ASSIGN_OR_RETURN(const Tensor* r, known_scalar(ctx, 1, "ratio"));
      ratio = scalar_as_double(*r);
      if (r->dtype != kFloat && r->dtype != kDouble)
        return ctx.error("ratio must be float or double");
    }
  }
  if (training && ratio != 0) {
    return unimplemented(ctx.where() + ": training-mode Dropout with ratio " +
                         std::to_string(ratio) +
                         " draws random numbers no seed here reproduces; only inference "
                         "(or ratio 0) is supported");
  }
  size_t width = dtype_size(x->dtype);
  if (width == 0) return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  OP_ASSIGN_OR_RETURN(int64_t n, checked_elements(ctx, x->shape));
  ctx.set_output(0, x->dtype, x->shape);
  bool has_mask = ctx.output_count() > 1 && !ctx.node().output(1).empty();
  // The mask is bool since opset 10, the input's type before.
  int32_t mask_type = ctx.opset() >= 10 ? kBool : x->dtype;
  if (has_mask) {
    if (ctx.opset() < 10 && x->dtype != kFloat && x->dtype != kDouble)
      return ctx.error("a mask of type " + dtype_name(x->dtype) + " is not supported");
    ctx.set_output(1, mask_type, x->shape);
  }
  return make_kernel([n, width, has_mask, mask_type](const KernelIO& io) {
    if (n == 0) return;
    if (io.out[0] != io.in[0]) std::memcpy(io.out[0], io.in[0], size_t(n) * width);
    if (!has_mask) return;
    if (mask_type == kBool) {
      std::memset(io.out[1], 1, size_t(n));
    } else if (mask_type == kFloat) {
      float* m = static_cast<float*>(io.out[1]);
      for (int64_t i = 0; i < n; ++i) m[i] = 1.0f;
    } else {
      double* m = static_cast<double*>(io.out[1]);
      for (int64_t i = 0; i < n; ++i) m[i] = 1.0;
    }
  });
}

constexpr OpEntry kOps[] = {
    {"Dropout", build_dropout},
};

}  // namespace

std::span<const OpEntry> dropout_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
