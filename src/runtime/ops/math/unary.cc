// Elementwise unary math: Abs, Neg, Sign, Exp, Log, Reciprocal, Floor, Ceil,
// Round, the trigonometric and hyperbolic functions and their inverses, IsNaN,
// IsInf, Not and BitwiseNot. Float ops take float and double (16-bit floats
// through the half adapter); Abs, Neg and Sign take integers too.
#include <cmath>
#include <type_traits>

#include "kernels/vec_math/vec_act.h"
#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

// A float/double op: y = f(x) with the input's type and shape.
template <typename F>
Result<std::unique_ptr<Kernel>> float_unary(BuildContext& ctx, F f) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  ctx.set_output(0, x->dtype, x->shape);
  int64_t n = shape_numel(x->shape);
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = map_kernel<T, T>(n, [f](T v) { return f(v); });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

// An op on every numeric type (signed only when `signed_only`).
template <typename F>
Result<std::unique_ptr<Kernel>> numeric_unary(BuildContext& ctx, F f, bool signed_only) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  ctx.set_output(0, x->dtype, x->shape);
  int64_t n = shape_numel(x->shape);
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = map_kernel<T, T>(n, [f](T v) { return f(v); });
  };
  bool ok = signed_only ? dispatch_signed(x->dtype, make) : dispatch_numeric(x->dtype, make);
  if (!ok) return unsupported_type(ctx, x->dtype);
  return k;
}

#define OP_FLOAT_UNARY(Name, expr)                                       \
  Result<std::unique_ptr<Kernel>> build_##Name(BuildContext& ctx) {      \
    return float_unary(ctx, [](auto x) -> decltype(x) { return expr; }); \
  }

OP_FLOAT_UNARY(log, std::log(x))
OP_FLOAT_UNARY(reciprocal, decltype(x)(1) / x)
OP_FLOAT_UNARY(floor, std::floor(x))
OP_FLOAT_UNARY(ceil, std::ceil(x))
OP_FLOAT_UNARY(round, std::nearbyint(x))  // half to even in the default rounding mode
OP_FLOAT_UNARY(sin, std::sin(x))
OP_FLOAT_UNARY(cos, std::cos(x))
OP_FLOAT_UNARY(tan, std::tan(x))
OP_FLOAT_UNARY(asin, std::asin(x))
OP_FLOAT_UNARY(acos, std::acos(x))
OP_FLOAT_UNARY(atan, std::atan(x))
OP_FLOAT_UNARY(sinh, std::sinh(x))
OP_FLOAT_UNARY(cosh, std::cosh(x))
OP_FLOAT_UNARY(asinh, std::asinh(x))
OP_FLOAT_UNARY(acosh, std::acosh(x))
OP_FLOAT_UNARY(atanh, std::atanh(x))
#undef OP_FLOAT_UNARY

Result<std::unique_ptr<Kernel>> build_exp(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->dtype == kFloat) {
    ctx.set_output(0, kFloat, x->shape);
    int64_t n = shape_numel(x->shape);
    kernels::vec::ActFn fn = kernels::vec::host_act_kernel();
    return make_kernel([n, fn](const KernelIO& io) {
      const float* in = static_cast<const float*>(io.in[0]);
      float* out = static_cast<float*>(io.out[0]);
      parallel_range(io.pool, n, kMinChunk, [&](int64_t b, int64_t e) {
        fn(kernels::vec::kActExp, in + b, out + b, size_t(e - b), 0.0f, 0.0f);
      });
    });
  }
  return float_unary(ctx, [](auto v) { return std::exp(v); });
}

Result<std::unique_ptr<Kernel>> build_abs(BuildContext& ctx) {
  return numeric_unary(
      ctx,
      [](auto v) -> decltype(v) {
        using T = decltype(v);
        if constexpr (std::is_unsigned_v<T>) return v;
        if constexpr (std::is_floating_point_v<T>) return std::fabs(v);
        if constexpr (std::is_signed_v<T> && std::is_integral_v<T>)
          return v < 0 ? T(0 - v) : v;  // wraps for the minimum, like the two's complement op
      },
      false);
}

Result<std::unique_ptr<Kernel>> build_neg(BuildContext& ctx) {
  return numeric_unary(
      ctx,
      [](auto v) -> decltype(v) {
        using T = decltype(v);
        if constexpr (std::is_integral_v<T>)
          return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(v));
        else
          return -v;
      },
      true);
}

Result<std::unique_ptr<Kernel>> build_sign(BuildContext& ctx) {
  return numeric_unary(
      ctx,
      [](auto v) -> decltype(v) {
        using T = decltype(v);
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(v)) return v;
        }
        return v > T(0) ? T(1) : (v < T(0) ? T(-1) : T(0));
      },
      false);
}

Result<std::unique_ptr<Kernel>> build_isnan(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  ctx.set_output(0, kBool, x->shape);
  int64_t n = shape_numel(x->shape);
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = map_kernel<T, bool>(n, [](T v) { return std::isnan(v); });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_isinf(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  ctx.set_output(0, kBool, x->shape);
  int64_t n = shape_numel(x->shape);
  bool neg = ctx.attr_int("detect_negative", 1) != 0;
  bool pos = ctx.attr_int("detect_positive", 1) != 0;
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = map_kernel<T, bool>(n,
                                [neg, pos](T v) { return std::isinf(v) && (v > 0 ? pos : neg); });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_not(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->dtype != kBool) return ctx.error("input must be bool, got " + dtype_name(x->dtype));
  ctx.set_output(0, kBool, x->shape);
  // Bytes, not bool, like And/Or/Xor (binary.cc): defined for any byte.
  return map_kernel<uint8_t, uint8_t>(shape_numel(x->shape),
                                      [](uint8_t v) { return uint8_t(v == 0); });
}

Result<std::unique_ptr<Kernel>> build_bitwise_not(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  ctx.set_output(0, x->dtype, x->shape);
  int64_t n = shape_numel(x->shape);
  std::unique_ptr<Kernel> k;
  bool ok = !is_float_type(x->dtype) && dispatch_numeric(x->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) k = map_kernel<T, T>(n, [](T v) { return T(~v); });
  });
  if (!ok) return unsupported_type(ctx, x->dtype);
  return k;
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_abs_op(BuildContext& ctx) { return build_abs(ctx); }
Result<std::unique_ptr<Kernel>> build_neg_op(BuildContext& ctx) { return build_neg(ctx); }
Result<std::unique_ptr<Kernel>> build_sign_op(BuildContext& ctx) { return build_sign(ctx); }
Result<std::unique_ptr<Kernel>> build_exp_op(BuildContext& ctx) { return build_exp(ctx); }
Result<std::unique_ptr<Kernel>> build_log_op(BuildContext& ctx) { return build_log(ctx); }
Result<std::unique_ptr<Kernel>> build_reciprocal_op(BuildContext& ctx) {
  return build_reciprocal(ctx);
}
Result<std::unique_ptr<Kernel>> build_floor_op(BuildContext& ctx) { return build_floor(ctx); }
Result<std::unique_ptr<Kernel>> build_ceil_op(BuildContext& ctx) { return build_ceil(ctx); }
Result<std::unique_ptr<Kernel>> build_round_op(BuildContext& ctx) { return build_round(ctx); }
Result<std::unique_ptr<Kernel>> build_sin_op(BuildContext& ctx) { return build_sin(ctx); }
Result<std::unique_ptr<Kernel>> build_cos_op(BuildContext& ctx) { return build_cos(ctx); }
Result<std::unique_ptr<Kernel>> build_tan_op(BuildContext& ctx) { return build_tan(ctx); }
Result<std::unique_ptr<Kernel>> build_asin_op(BuildContext& ctx) { return build_asin(ctx); }
Result<std::unique_ptr<Kernel>> build_acos_op(BuildContext& ctx) { return build_acos(ctx); }
Result<std::unique_ptr<Kernel>> build_atan_op(BuildContext& ctx) { return build_atan(ctx); }
Result<std::unique_ptr<Kernel>> build_sinh_op(BuildContext& ctx) { return build_sinh(ctx); }
Result<std::unique_ptr<Kernel>> build_cosh_op(BuildContext& ctx) { return build_cosh(ctx); }
Result<std::unique_ptr<Kernel>> build_asinh_op(BuildContext& ctx) { return build_asinh(ctx); }
Result<std::unique_ptr<Kernel>> build_acosh_op(BuildContext& ctx) { return build_acosh(ctx); }
Result<std::unique_ptr<Kernel>> build_atanh_op(BuildContext& ctx) { return build_atanh(ctx); }
Result<std::unique_ptr<Kernel>> build_is_na_n_op(BuildContext& ctx) { return build_isnan(ctx); }
Result<std::unique_ptr<Kernel>> build_is_inf_op(BuildContext& ctx) { return build_isinf(ctx); }
Result<std::unique_ptr<Kernel>> build_not_op(BuildContext& ctx) { return build_not(ctx); }
Result<std::unique_ptr<Kernel>> build_bitwise_not_op(BuildContext& ctx) {
  return build_bitwise_not(ctx);
}

}  // namespace onnx_prepack::runtime::math
