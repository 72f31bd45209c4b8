// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12/13): the
// loss of each [N, C, d...] position is -logp[n, target, d] times the target's
// weight (0 for ignore_index); reduction none keeps them, sum adds them, mean
// divides the sum by the summed weights (or the count when there are neither
// weights nor ignore_index), as onnx's definition does. SoftmaxCrossEntropyLoss
// first takes log_softmax over C (its optional second output). Computed in double.
#include <cmath>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossGeometry {
  int64_t n = 0, c = 0, d = 1;  // input viewed as [N, C, D]
  bool has_weight = false, has_ignore = false;
  int64_t ignore = 0;
  Reduction reduction = Reduction::kMean;
  bool target64 = true;
};

template <typename T>
void nll(const LossGeometry& g, const T* logp, const void* target, const T* weight, T* out) {
  double sum = 0, weight_sum = 0;
  int64_t positions = g.n * g.d;
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t j = 0; j < g.d; ++j) {
      int64_t t = index_at(target, g.target64, i * g.d + j);
      double loss = 0, w = 1;
      if (g.has_ignore && t == g.ignore) {
        w = 0;
      } else if (t >= 0 && t < g.c) {
        w = g.has_weight ? double(weight[t]) : 1.0;
        loss = -double(logp[(i * g.c + t) * g.d + j]) * w;
      } else {
        w = 0;  // out of range: no loss (the reference would fail)
      }
      weight_sum += w;
      if (g.reduction == Reduction::kNone)
        out[i * g.d + j] = T(loss);
      else
        sum += loss;
    }
  }
  if (g.reduction == Reduction::kSum) *out = T(sum);
  if (g.reduction == Reduction::kMean) {
    bool by_weight = g.has_weight || g.has_ignore;
    *out = T(by_weight ? sum / weight_sum : sum / double(positions));
  }
}

// log_softmax over C of x [N, C, D] into logp.
template <typename T>
void log_softmax_c(const LossGeometry& g, const T* x, T* logp) {
  for (int64_t i = 0; i < g.n; ++i) {
    for (int64_t j = 0; j < g.d; ++j) {
      const T* base = x + i * g.c * g.d + j;
      double mx = -INFINITY;
      for (int64_t k = 0; k < g.c; ++k) mx = std::max(mx, double(base[k * g.d]));
      double s = 0;
      for (int64_t k = 0; k < g.c; ++k) s += std::exp(double(base[k * g.d]) - mx);
      double ls = std::log(s);
      for (int64_t k = 0; k < g.c; ++k)
        logp[i * g.c * g.d + k * g.d + j] = T(double(base[k * g.d]) - mx - ls);
    }
  }
}

BuildResult build_loss(BuildContext& ctx, bool softmax) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* target, ctx.require_input(1));
  if (x->dtype != kFloat && x->dtype != kDouble)
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  OP_RETURN_IF_ERROR(require_index_type(ctx, target->dtype, "target"));
  size_t rank = x->shape.size();
  if (rank < 2 || target->shape.size() != rank - 1 || target->shape[0] != x->shape[0])
    return ctx.error("input " + shape_string(x->shape) + " and target " +
                     shape_string(target->shape) + " must be [N, C, d...] and [N, d...]");
  for (size_t i = 2; i < rank; ++i) {
    if (target->shape[i - 1] != x->shape[i]) return ctx.error("target dims differ from input's");
  }
  LossGeometry g;
  g.n = x->shape[0];
  g.c = x->shape[1];
  g.d = dims_product(x->shape, 2, rank);
  g.target64 = target->dtype == kInt64;
  if (ctx.has_input(2)) {
    const ValueDesc& w = ctx.input(2);
    if (w.dtype != x->dtype || w.shape != Shape{g.c})
      return ctx.error("weight must be [C] of the input's type");
    g.has_weight = true;
  }
  if (const auto* a = ctx.attr("ignore_index")) {
    g.has_ignore = true;
    g.ignore = a->i();
  }
  std::string r = ctx.attr_string("reduction", "mean");
  if (r == "none")
    g.reduction = Reduction::kNone;
  else if (r == "sum")
    g.reduction = Reduction::kSum;
  else if (r == "mean")
    g.reduction = Reduction::kMean;
  else
    return ctx.error("reduction '" + r + "' is not none, sum or mean");
  ctx.set_output(0, x->dtype, g.reduction == Reduction::kNone ? target->shape : Shape{});
  if (softmax) ctx.set_output(1, x->dtype, x->shape);
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([g, softmax](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      const T* weight = io.in.size() > 2 ? static_cast<const T*>(io.in[2]) : nullptr;
      T* out = static_cast<T*>(io.out[0]);
      if (!softmax) {
        nll<T>(g, in, io.in[1], weight, out);
        return;
      }
      // log_prob goes to the second output when it is used, else to scratch.
      std::vector<T> scratch;
      T* logp = io.out.size() > 1 ? static_cast<T*>(io.out[1]) : nullptr;
      if (logp == nullptr) {
        scratch.resize(size_t(g.n * g.c * g.d));
        logp = scratch.data();
      }
      log_softmax_c<T>(g, in, logp);
      if (out) nll<T>(g, logp, io.in[1], weight, out);
    });
  };
  if (x->dtype == kFloat)
    make(TypeTag<float>{});
  else
    make(TypeTag<double>{});
  return k;
}

}  // namespace

BuildResult build_nll_loss(BuildContext& ctx) { return build_loss(ctx, false); }
BuildResult build_softmax_cross_entropy_loss(BuildContext& ctx) { return build_loss(ctx, true); }

}  // namespace onnx_prepack::runtime::tensor_family
