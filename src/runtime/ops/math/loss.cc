// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13): scores
// [N, C, d1..dk], integer targets [N, d1..dk], optional per-class weights [C],
// ignore_index, reduction none / sum / mean (mean divides by the summed weights
// of the targets not ignored). A target outside [0, C) that is not ignored
// contributes 0 (checked at plan time when the targets are known).
#include <cmath>
#include <optional>

#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossPlan {
  int64_t n = 0, c = 0, d = 1;  // [N, C, D]
  Reduction reduction = Reduction::kMean;
  std::optional<int64_t> ignore;
  bool has_weight = false;
};

// loss[i] (per target) into `per` when non-null; returns {sum of losses, sum of weights}.
template <typename T, typename I>
std::pair<double, double> nll(const LossPlan& p, const T* logp, const I* target, const T* weight,
                              T* per) {
  double sum = 0, wsum = 0;
  for (int64_t a = 0; a < p.n; ++a) {
    for (int64_t j = 0; j < p.d; ++j) {
      int64_t t = int64_t(target[a * p.d + j]);
      double loss = 0, w = 0;
      if (!(p.ignore && t == *p.ignore) && t >= 0 && t < p.c) {
        w = p.has_weight ? double(weight[t]) : 1.0;
        loss = -double(logp[(a * p.c + t) * p.d + j]) * w;
      }
      if (per) per[a * p.d + j] = T(loss);
      sum += loss;
      wsum += w;
    }
  }
  return {sum, wsum};
}

template <typename T>
void finish(const LossPlan& p, std::pair<double, double> s, T* out) {
  if (p.reduction == Reduction::kSum) out[0] = T(s.first);
  if (p.reduction == Reduction::kMean) out[0] = T(s.first / s.second);
}

Result<LossPlan> plan_loss(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* t, ctx.require_input(1));
  LossPlan p;
  if (x->shape.size() < 2) return ctx.error("input must be [N, C, d1, ...]");
  if (t->dtype != kInt32 && t->dtype != kInt64) return ctx.error("target must be int32 or int64");
  Shape want(x->shape);
  want.erase(want.begin() + 1);
  if (t->shape != want)
    return ctx.error("target " + shape_string(t->shape) + " does not match the input " +
                     shape_string(x->shape) + " without its class dimension");
  p.n = x->shape[0];
  p.c = x->shape[1];
  for (size_t i = 2; i < x->shape.size(); ++i) p.d *= x->shape[i];
  std::string r = ctx.attr_string("reduction", "mean");
  if (r == "none")
    p.reduction = Reduction::kNone;
  else if (r == "sum")
    p.reduction = Reduction::kSum;
  else if (r != "mean")
    return ctx.error("reduction '" + r + "' is not none, sum or mean");
  if (ctx.attr("ignore_index")) p.ignore = ctx.attr_int("ignore_index", 0);
  if (ctx.has_input(2)) {
    const ValueDesc& w = ctx.input(2);
    if (w.dtype != x->dtype || w.shape != Shape{p.c})
      return ctx.error("weight must be [C] of the input's type");
    p.has_weight = true;
  }
  ctx.set_output(0, x->dtype, p.reduction == Reduction::kNone ? want : Shape{});
  return p;
}

Result<std::unique_ptr<Kernel>> build_nll(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(LossPlan p, plan_loss(ctx));
  int32_t tt = ctx.input(1).dtype;
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(ctx.input(0).dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([p, tt](const KernelIO& io) {
          const T* x = static_cast<const T*>(io.in[0]);
          const T* w = io.in.size() > 2 ? static_cast<const T*>(io.in[2]) : nullptr;
          T* out = static_cast<T*>(io.out[0]);
          T* per = p.reduction == Reduction::kNone ? out : nullptr;
          auto s = tt == kInt64 ? nll(p, x, static_cast<const int64_t*>(io.in[1]), w, per)
                                : nll(p, x, static_cast<const int32_t*>(io.in[1]), w, per);
          finish(p, s, out);
        });
      }))
    return unsupported_type(ctx, ctx.input(0).dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_sce(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(LossPlan p, plan_loss(ctx));
  const ValueDesc& x = ctx.input(0);
  if (ctx.output_count() > 1) ctx.set_output(1, x.dtype, x.shape);
  int32_t tt = ctx.input(1).dtype;
  int64_t total = shape_numel(x.shape);
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([p, tt, total](const KernelIO& io) {
          const T* x = static_cast<const T*>(io.in[0]);
          const T* w = io.in.size() > 2 ? static_cast<const T*>(io.in[2]) : nullptr;
          T* out = static_cast<T*>(io.out[0]);
          // log_softmax over the class axis, into output 1 or scratch.
          std::vector<T> own;
          T* logp = io.out.size() > 1 ? static_cast<T*>(io.out[1]) : nullptr;
          if (logp == nullptr) {
            own.resize(size_t(total));
            logp = own.data();
          }
          for (int64_t a = 0; a < p.n; ++a) {
            for (int64_t j = 0; j < p.d; ++j) {
              const T* xr = x + a * p.c * p.d + j;
              T* yr = logp + a * p.c * p.d + j;
              double mx = -INFINITY;
              for (int64_t c = 0; c < p.c; ++c) mx = std::max(mx, double(xr[c * p.d]));
              double s = 0;
              for (int64_t c = 0; c < p.c; ++c) s += std::exp(double(xr[c * p.d]) - mx);
              double lse = mx + std::log(s);
              for (int64_t c = 0; c < p.c; ++c) yr[c * p.d] = T(double(xr[c * p.d]) - lse);
            }
          }
          T* per = p.reduction == Reduction::kNone ? out : nullptr;
          auto s = tt == kInt64 ? nll(p, logp, static_cast<const int64_t*>(io.in[1]), w, per)
                                : nll(p, logp, static_cast<const int32_t*>(io.in[1]), w, per);
          finish(p, s, out);
        });
      }))
    return unsupported_type(ctx, x.dtype);
  return k;
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_negative_log_likelihood_loss_op(BuildContext& ctx) {
  return build_nll(ctx);
}
Result<std::unique_ptr<Kernel>> build_softmax_cross_entropy_loss_op(BuildContext& ctx) {
  return build_sce(ctx);
}

}  // namespace onnx_prepack::runtime::math
