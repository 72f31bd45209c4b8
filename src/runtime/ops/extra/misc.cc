// Small generators and normalisations: EyeLike, MeanVarianceNormalization and
// the window functions HannWindow, HammingWindow, BlackmanWindow (opset 17).
#include <cmath>
#include <numbers>

#include "runtime/ops/extra/common.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime::extra {
namespace {

// Calls fn(TypeTag<T>{}) for the numeric types and bool (as uint8_t).
template <typename Fn>
bool dispatch_numeric_or_bool(int32_t dtype, Fn&& fn) {
  if (dtype == kBool) return fn(TypeTag<uint8_t>{}), true;
  return dispatch_numeric(dtype, fn);
}

// EyeLike: a 2-D tensor of the input's shape, ones on the k-th diagonal.
Result<std::unique_ptr<Kernel>> build_eye_like(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->shape.size() != 2) return ctx.error("input must be 2-D");
  int32_t dtype = int32_t(ctx.attr_int("dtype", x->dtype));
  int64_t k = ctx.attr_int("k", 0);
  int64_t rows = x->shape[0], cols = x->shape[1];
  OP_ASSIGN_OR_RETURN(int64_t n, checked_elements(ctx, x->shape));
  ctx.set_output(0, dtype, x->shape);
  std::unique_ptr<Kernel> kernel;
  if (!dispatch_numeric_or_bool(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        kernel = make_kernel([n, rows, cols, k](const KernelIO& io) {
          T* y = static_cast<T*>(io.out[0]);
          for (int64_t i = 0; i < n; ++i) y[i] = T(0);
          for (int64_t r = 0; r < rows; ++r) {
            int64_t c = r + k;
            if (c >= 0 && c < cols) y[r * cols + c] = T(1);
          }
        });
      }))
    return ctx.error("dtype " + dtype_name(dtype) + " is not supported");
  return kernel;
}

// MeanVarianceNormalization: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over `axes`.
Result<std::unique_ptr<Kernel>> build_mvn(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> axes = ctx.attr_ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t a : axes) {
    OP_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, ctx));
    reduced[size_t(ax)] = true;
  }
  OP_ASSIGN_OR_RETURN(int64_t n, checked_elements(ctx, x->shape));
  ctx.set_output(0, x->dtype, x->shape);
  // Each element's group: its index with the reduced dims dropped.
  Shape shape = x->shape;
  std::unique_ptr<Kernel> kernel;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        kernel = make_kernel([n, shape, reduced](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          T* out = static_cast<T*>(io.out[0]);
          std::vector<int64_t> group(static_cast<size_t>(n));
          int64_t groups = 1;
          std::vector<int64_t> gstride(shape.size(), 0);
          for (size_t d = shape.size(); d-- > 0;) {
            if (reduced[d]) continue;
            gstride[d] = groups;
            groups *= shape[d];
          }
          std::vector<int64_t> idx(shape.size(), 0);
          for (int64_t i = 0; i < n; ++i) {
            int64_t g = 0;
            for (size_t d = 0; d < shape.size(); ++d) g += idx[d] * gstride[d];
            group[size_t(i)] = g;
            for (size_t d = shape.size(); d-- > 0;) {
              if (++idx[d] < shape[d]) break;
              idx[d] = 0;
            }
          }
          std::vector<double> sum(size_t(groups), 0), sq(size_t(groups), 0), cnt(size_t(groups), 0);
          for (int64_t i = 0; i < n; ++i) {
            double v = double(in[i]);
            size_t g = size_t(group[size_t(i)]);
            sum[g] += v;
            sq[g] += v * v;
            cnt[g] += 1;
          }
          for (int64_t i = 0; i < n; ++i) {
            size_t g = size_t(group[size_t(i)]);
            double mean = sum[g] / cnt[g];
            double var = sq[g] / cnt[g] - mean * mean;
            out[i] = T((double(in[i]) - mean) / (std::sqrt(std::max(var, 0.0)) + 1e-9));
          }
        });
      }))
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return kernel;
}

enum class Window { kHann, kHamming, kBlackman };

template <Window w>
Result<std::unique_ptr<Kernel>> build_window(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* size_desc, ctx.require_input(0));
  if (size_desc->value == nullptr) {
    return ctx.error("size (input 0 '" + size_desc->name + "') is the output's length, so it " +
                     kNeedsValue + ": a constant, computed from constants, or a pinned input");
  }
  OP_ASSIGN_OR_RETURN(std::vector<int64_t> sv, to_int64_vector(*size_desc->value, "size"));
  if (sv.size() != 1 || sv[0] < 0 || sv[0] > (int64_t(1) << 40))
    return ctx.error("size must be a non-negative scalar");
  int64_t n = sv[0];
  int32_t dtype = int32_t(ctx.attr_int("output_datatype", kFloat));
  bool periodic = ctx.attr_int("periodic", 1) != 0;
  ctx.set_output(0, dtype, Shape{n});
  double denom = periodic ? double(n) : double(n - 1);
  std::unique_ptr<Kernel> kernel;
  if (!dispatch_numeric(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        kernel = make_kernel([n, denom](const KernelIO& io) {
          T* y = static_cast<T*>(io.out[0]);
          constexpr double kTwoPi = 2 * std::numbers::pi;
          for (int64_t i = 0; i < n; ++i) {
            double t = denom > 0 ? kTwoPi * double(i) / denom : 0.0;
            double v = 0;
            if constexpr (w == Window::kHann) v = 0.5 - 0.5 * std::cos(t);
            if constexpr (w == Window::kHamming) v = 25.0 / 46 - (21.0 / 46) * std::cos(t);
            if constexpr (w == Window::kBlackman)
              v = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t);
            y[i] = T(v);
          }
        });
      }))
    return ctx.error("output_datatype " + dtype_name(dtype) + " is not supported");
  return kernel;
}

constexpr OpEntry kOps[] = {
    {"EyeLike", build_eye_like},
    {"MeanVarianceNormalization", build_mvn},
    {"HannWindow", build_window<Window::kHann>},
    {"HammingWindow", build_window<Window::kHamming>},
    {"BlackmanWindow", build_window<Window::kBlackman>},
};

}  // namespace

std::span<const OpEntry> misc_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
