// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13):
// inference forms of the two losses over input [N, C, d1..dk] and integer
// targets [N, d1..dk], with optional class weights, ignore_index and reduction
// none/sum/mean. "mean" divides by the sum of the weights of the targets that
// are not ignored, as the operator spec defines it.
#include <cmath>

#include "runtime/ops/extra/common.h"

namespace onnx_prepack::runtime::extra {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossShape {
  int64_t n = 0, c = 0, inner = 1;  // input viewed as [n, c, inner]
  Reduction reduction = Reduction::kMean;
  bool has_weight = false;
  bool has_ignore = false;
  int64_t ignore_index = 0;
};

// Checks input, target and the optional weight (input 2); sets output 0.
Result<LossShape> plan_loss(BuildContext& ctx, const ValueDesc& x, const ValueDesc& t) {
  LossShape s;
  const Shape& xs = x.shape;
  if (xs.size() < 2) return ctx.error("input must have rank >= 2 ([N, C, ...])");
  if (t.dtype != kInt32 && t.dtype != kInt64) return ctx.error("target must be int32 or int64");
  if (t.shape.size() + 1 != xs.size() || t.shape[0] != xs[0])
    return ctx.error("target shape must be the input's shape without dimension 1");
  for (size_t i = 2; i < xs.size(); ++i) {
    if (t.shape[i - 1] != xs[i]) return ctx.error("target shape must match the input's d1..dk");
    s.inner *= xs[i];
  }
  s.n = xs[0];
  s.c = xs[1];
  std::string red = ctx.attr_string("reduction", "mean");
  if (red == "none")
    s.reduction = Reduction::kNone;
  else if (red == "sum")
    s.reduction = Reduction::kSum;
  else if (red == "mean")
    s.reduction = Reduction::kMean;
  else
    return ctx.error("reduction '" + red + "' is not none, sum or mean");
  if (ctx.has_input(2)) {
    const ValueDesc& w = ctx.input(2);
    if (w.dtype != x.dtype || w.shape.size() != 1 || w.shape[0] != s.c)
      return ctx.error("weight must be a 1-D tensor of C elements of the input's type");
    s.has_weight = true;
  }
  if (const auto* a = ctx.attr("ignore_index")) {
    s.has_ignore = true;
    s.ignore_index = a->i();
  }
  if (s.reduction == Reduction::kNone)
    ctx.set_output(0, x.dtype, t.shape);
  else
    ctx.set_output(0, x.dtype, Shape{});
  return s;
}

// loss from log-probabilities `lp` ([n, c, inner]); writes out[0] or out[n*inner].
template <typename T, typename I>
void nll(const LossShape& s, const T* lp, const I* target, const T* weight, T* out) {
  double total = 0, wsum = 0;
  for (int64_t b = 0; b < s.n; ++b) {
    for (int64_t j = 0; j < s.inner; ++j) {
      int64_t idx = b * s.inner + j;
      int64_t cls = int64_t(target[idx]);
      double loss = 0, w = 0;
      // A class outside [0, C) that is not ignore_index is undefined by the
      // spec; it contributes nothing here rather than reading out of bounds.
      if (!(s.has_ignore && cls == s.ignore_index) && cls >= 0 && cls < s.c) {
        w = weight ? double(weight[cls]) : 1.0;
        loss = -double(lp[(b * s.c + cls) * s.inner + j]) * w;
      }
      if (s.reduction == Reduction::kNone)
        out[idx] = T(loss);
      else {
        total += loss;
        wsum += w;
      }
    }
  }
  if (s.reduction == Reduction::kSum) out[0] = T(total);
  if (s.reduction == Reduction::kMean) out[0] = T(total / wsum);
}

template <typename T>
void log_softmax(const LossShape& s, const T* x, T* y) {
  for (int64_t b = 0; b < s.n; ++b) {
    for (int64_t j = 0; j < s.inner; ++j) {
      const T* xr = x + b * s.c * s.inner + j;
      T* yr = y + b * s.c * s.inner + j;
      if (s.c == 0) continue;
      double mx = double(xr[0]);
      for (int64_t k = 1; k < s.c; ++k) mx = std::max(mx, double(xr[k * s.inner]));
      double sum = 0;
      for (int64_t k = 0; k < s.c; ++k) sum += std::exp(double(xr[k * s.inner]) - mx);
      double lse = mx + std::log(sum);
      for (int64_t k = 0; k < s.c; ++k) yr[k * s.inner] = T(double(xr[k * s.inner]) - lse);
    }
  }
}

template <bool softmax>
Result<std::unique_ptr<Kernel>> build_loss(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* t, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(LossShape s, plan_loss(ctx, *x, *t));
  bool want_log_prob = softmax && ctx.output_count() > 1;
  if (want_log_prob) ctx.set_output(1, x->dtype, x->shape);
  OP_ASSIGN_OR_RETURN(int64_t elems, checked_elements(ctx, x->shape));
  std::unique_ptr<Kernel> k;
  bool typed = dispatch_float(x->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    bool i64 = t->dtype == kInt64;
    k = make_kernel([s, i64, elems, want_log_prob](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      const T* w = io.in.size() > 2 ? static_cast<const T*>(io.in[2]) : nullptr;
      T* out = static_cast<T*>(io.out[0]);
      std::vector<T> scratch;
      const T* lp = in;
      if constexpr (softmax) {
        T* dst = want_log_prob ? static_cast<T*>(io.out[1]) : nullptr;
        if (!dst) {
          scratch.resize(size_t(elems));
          dst = scratch.data();
        }
        log_softmax(s, in, dst);
        lp = dst;
      }
      if (i64)
        nll(s, lp, static_cast<const int64_t*>(io.in[1]), w, out);
      else
        nll(s, lp, static_cast<const int32_t*>(io.in[1]), w, out);
    });
  });
  if (!typed) return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return k;
}

constexpr OpEntry kOps[] = {
    {"NegativeLogLikelihoodLoss", build_loss<false>},
    {"SoftmaxCrossEntropyLoss", build_loss<true>},
};

}  // namespace

std::span<const OpEntry> loss_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
