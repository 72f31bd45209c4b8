// Activations: Clip (attribute form before opset 11, input form since), HardSigmoid,
// HardSwish, LeakyRelu (vectorised for float, vec_act.h), Elu, Selu, Celu,
// ThresholdedRelu, Shrink, Softplus, Softsign, Mish, Swish (opset 24) and PRelu
// (slope broadcast to the input).
#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/vec_math/vec_act.h"
#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

// y = f(x) over float and double, the vectorised `act` op for float when >= 0.
template <typename F>
Result<std::unique_ptr<Kernel>> activation(BuildContext& ctx, F f, int act = -1, float p0 = 0,
                                           float p1 = 0) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  ctx.set_output(0, x->dtype, x->shape);
  int64_t n = shape_numel(x->shape);
  if (x->dtype == kFloat && act >= 0) {
    kernels::vec::ActFn fn = kernels::vec::host_act_kernel();
    return std::unique_ptr<Kernel>(new FnKernel(
        [=](const KernelIO& io) {
          const float* in = static_cast<const float*>(io.in[0]);
          float* out = static_cast<float*>(io.out[0]);
          parallel_range(io.pool, n, kMinChunk, [&](int64_t b, int64_t e) {
            fn(act, in + b, out + b, size_t(e - b), p0, p1);
          });
        },
        PointwiseDesc{PointwiseDesc::kActivation, act, p0, p1}));
  }
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = map_kernel<T, T>(n, [f](T v) { return f(v); });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_hard_sigmoid(BuildContext& ctx) {
  float alpha = ctx.attr_float("alpha", 0.2f), beta = ctx.attr_float("beta", 0.5f);
  return activation(
      ctx,
      [alpha, beta](auto x) -> decltype(x) {
        using T = decltype(x);
        return std::max(T(0), std::min(T(1), T(alpha) * x + T(beta)));
      },
      kernels::vec::kActHardSigmoid, alpha, beta);
}

Result<std::unique_ptr<Kernel>> build_hard_swish(BuildContext& ctx) {
  return activation(
      ctx,
      [](auto x) -> decltype(x) {
        using T = decltype(x);
        return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
      },
      kernels::vec::kActHardSwish);
}

Result<std::unique_ptr<Kernel>> build_leaky_relu(BuildContext& ctx) {
  float alpha = ctx.attr_float("alpha", 0.01f);
  return activation(
      ctx, [alpha](auto x) -> decltype(x) { return x >= 0 ? x : x * decltype(x)(alpha); },
      kernels::vec::kActLeakyRelu, alpha);
}

Result<std::unique_ptr<Kernel>> build_elu(BuildContext& ctx) {
  float alpha = ctx.attr_float("alpha", 1.0f);
  return activation(ctx, [alpha](auto x) -> decltype(x) {
    return x >= 0 ? x : decltype(x)(alpha) * std::expm1(x);
  });
}

Result<std::unique_ptr<Kernel>> build_selu(BuildContext& ctx) {
  float alpha = ctx.attr_float("alpha", 1.67326319217681884765625f);
  float gamma = ctx.attr_float("gamma", 1.05070102214813232421875f);
  return activation(ctx, [alpha, gamma](auto x) -> decltype(x) {
    using T = decltype(x);
    return x > 0 ? T(gamma) * x : T(gamma) * (T(alpha) * std::exp(x) - T(alpha));
  });
}

Result<std::unique_ptr<Kernel>> build_celu(BuildContext& ctx) {
  float alpha = ctx.attr_float("alpha", 1.0f);
  return activation(ctx, [alpha](auto x) -> decltype(x) {
    using T = decltype(x);
    if (x != x) return x;  // NaN propagates (std::max(0, NaN) would give 0)
    return std::max(T(0), x) + std::min(T(0), T(alpha) * std::expm1(x / T(alpha)));
  });
}

Result<std::unique_ptr<Kernel>> build_thresholded_relu(BuildContext& ctx) {
  float alpha = ctx.attr_float("alpha", 1.0f);
  return activation(ctx, [alpha](auto x) -> decltype(x) { return x > decltype(x)(alpha) ? x : 0; });
}

// log(1 + e^x) without overflow.
template <typename T>
T softplus(T x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

Result<std::unique_ptr<Kernel>> build_softplus(BuildContext& ctx) {
  return activation(ctx, [](auto x) { return softplus(x); });
}

Result<std::unique_ptr<Kernel>> build_softsign(BuildContext& ctx) {
  return activation(ctx, [](auto x) -> decltype(x) { return x / (1 + std::fabs(x)); });
}

Result<std::unique_ptr<Kernel>> build_mish(BuildContext& ctx) {
  return activation(ctx, [](auto x) -> decltype(x) { return x * std::tanh(softplus(x)); });
}

// x * sigmoid(alpha x), the sigmoid's exp taken of a non-positive argument only.
Result<std::unique_ptr<Kernel>> build_swish(BuildContext& ctx) {
  if (ctx.opset() < 24) return ctx.error("Swish is an operator of opset 24 and later");
  float alpha = ctx.attr_float("alpha", 1.0f);
  return activation(ctx, [alpha](auto x) -> decltype(x) {
    using T = decltype(x);
    const T z = T(alpha) * x;
    if (z >= 0) return x / (T(1) + std::exp(-z));
    const T e = std::exp(z);
    return x * e / (T(1) + e);
  });
}

Result<std::unique_ptr<Kernel>> build_shrink(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  double bias = ctx.attr_float("bias", 0.0f), lambd = ctx.attr_float("lambd", 0.5f);
  ctx.set_output(0, x->dtype, x->shape);
  int64_t n = shape_numel(x->shape);
  std::unique_ptr<Kernel> k;
  if (!dispatch_numeric(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = map_kernel<T, T>(n, [bias, lambd](T v) {
          double d = double(v);
          if (d < -lambd) return T(d + bias);
          if (d > lambd) return T(d - bias);
          return T(0);
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

// Clip bound `i` (1: min, 2: max) as T: the input when present, else the
// attribute (opset < 11), else the type's limit.
template <typename T>
T clip_bound(const KernelIO& io, int i, T fallback) {
  if (int(io.in.size()) > i && io.in[size_t(i)] != nullptr)
    return *static_cast<const T*>(io.in[size_t(i)]);
  return fallback;
}

Result<std::unique_ptr<Kernel>> build_clip(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int32_t dt = x->dtype;
  for (int i = 1; i <= 2; ++i) {
    if (ctx.has_input(i) && (ctx.input(i).dtype != dt || shape_numel(ctx.input(i).shape) != 1))
      return ctx.error("input " + std::to_string(i) + " must be a scalar of the input's type");
  }
  ctx.set_output(0, dt, x->shape);
  int64_t n = shape_numel(x->shape);
  bool attr_form = ctx.opset() < 11;
  float attr_lo = ctx.attr_float("min", -FLT_MAX), attr_hi = ctx.attr_float("max", FLT_MAX);
  if (dt == kFloat) {
    kernels::vec::ActFn fn = kernels::vec::host_act_kernel();
    return std::unique_ptr<Kernel>(new FnKernel(
        [=](const KernelIO& io) {
          float lo = attr_form ? attr_lo : clip_bound<float>(io, 1, -INFINITY);
          float hi = attr_form ? attr_hi : clip_bound<float>(io, 2, INFINITY);
          const float* in = static_cast<const float*>(io.in[0]);
          float* out = static_cast<float*>(io.out[0]);
          parallel_range(io.pool, n, kMinChunk, [&](int64_t b, int64_t e) {
            fn(kernels::vec::kActClip, in + b, out + b, size_t(e - b), lo, hi);
          });
        },
        PointwiseDesc{PointwiseDesc::kActivation, kernels::vec::kActClip, attr_lo, attr_hi,
                      !attr_form}));
  }
  if (attr_form && dt != kDouble) return unsupported_type(ctx, dt);
  std::unique_ptr<Kernel> k;
  if (!dispatch_numeric(dt, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([=](const KernelIO& io) {
          T lo = attr_form ? T(attr_lo) : clip_bound<T>(io, 1, std::numeric_limits<T>::lowest());
          T hi = attr_form ? T(attr_hi) : clip_bound<T>(io, 2, std::numeric_limits<T>::max());
          const T* in = static_cast<const T*>(io.in[0]);
          T* out = static_cast<T*>(io.out[0]);
          parallel_range(io.pool, n, kMinChunk, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) {
              T v = lo > in[i] ? lo : in[i];
              out[i] = hi < v ? hi : v;
            }
          });
        });
      }))
    return unsupported_type(ctx, dt);
  return k;
}

Result<std::unique_ptr<Kernel>> build_prelu(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* slope, ctx.require_input(1));
  if (slope->dtype != x->dtype) return ctx.error("slope and input have different types");
  OP_ASSIGN_OR_RETURN(Shape out, broadcast_inputs(ctx, 0, 2));
  if (out != x->shape)
    return ctx.error("slope " + shape_string(slope->shape) + " does not broadcast to the input " +
                     shape_string(x->shape));
  ctx.set_output(0, x->dtype, out);
  auto plan = make_broadcast_plan({x->shape, slope->shape}, out);
  std::unique_ptr<Kernel> k;
  if (!dispatch_signed(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([plan](const KernelIO& io) {
          const T* a = static_cast<const T*>(io.in[0]);
          const T* s = static_cast<const T*>(io.in[1]);
          T* o = static_cast<T*>(io.out[0]);
          run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t cnt) {
            int64_t sa = plan.inner_stride[0], ss = plan.inner_stride[1];
            for (int64_t i = 0; i < cnt; ++i) {
              T v = a[off[0] + i * sa];
              o[base + i] = v < T(0) ? T(v * s[off[1] + i * ss]) : v;
            }
          });
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_clip_op(BuildContext& ctx) { return build_clip(ctx); }
Result<std::unique_ptr<Kernel>> build_hard_sigmoid_op(BuildContext& ctx) {
  return build_hard_sigmoid(ctx);
}
Result<std::unique_ptr<Kernel>> build_hard_swish_op(BuildContext& ctx) {
  return build_hard_swish(ctx);
}
Result<std::unique_ptr<Kernel>> build_leaky_relu_op(BuildContext& ctx) {
  return build_leaky_relu(ctx);
}
Result<std::unique_ptr<Kernel>> build_elu_op(BuildContext& ctx) { return build_elu(ctx); }
Result<std::unique_ptr<Kernel>> build_selu_op(BuildContext& ctx) { return build_selu(ctx); }
Result<std::unique_ptr<Kernel>> build_celu_op(BuildContext& ctx) { return build_celu(ctx); }
Result<std::unique_ptr<Kernel>> build_thresholded_relu_op(BuildContext& ctx) {
  return build_thresholded_relu(ctx);
}
Result<std::unique_ptr<Kernel>> build_shrink_op(BuildContext& ctx) { return build_shrink(ctx); }
Result<std::unique_ptr<Kernel>> build_softplus_op(BuildContext& ctx) { return build_softplus(ctx); }
Result<std::unique_ptr<Kernel>> build_softsign_op(BuildContext& ctx) { return build_softsign(ctx); }
Result<std::unique_ptr<Kernel>> build_mish_op(BuildContext& ctx) { return build_mish(ctx); }
Result<std::unique_ptr<Kernel>> build_swish_op(BuildContext& ctx) { return build_swish(ctx); }
Result<std::unique_ptr<Kernel>> build_p_relu_op(BuildContext& ctx) { return build_prelu(ctx); }

}  // namespace onnx_prepack::runtime::math
