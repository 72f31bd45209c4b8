// Cast and CastLike between every numeric type: bool, the integers, float,
// double, float16, bfloat16 (round to nearest even) and the four float8 types
// (`saturate`, opset 19). 16- and 8-bit floats convert through float; float to
// integer saturates and maps NaN to 0. Strings are refused.
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/ops/math/common.h"
#include "runtime/ops/math/float8.h"

namespace onnx_prepack::runtime::math {
namespace {

struct Half {
  uint16_t v;
};
struct BF16 {
  uint16_t v;
};
template <int32_t kType>
struct F8 {
  uint8_t v;
};

template <typename T>
struct IsF8 : std::false_type {};
template <int32_t kType>
struct IsF8<F8<kType>> : std::true_type {
  static constexpr int32_t type = kType;
};

template <typename T>
constexpr bool is_narrow_float() {
  return std::is_same_v<T, Half> || std::is_same_v<T, BF16> || IsF8<T>::value;
}

template <typename T>
float narrow_to_float(T x) {
  if constexpr (std::is_same_v<T, Half>)
    return half_to_float(x.v);
  else if constexpr (std::is_same_v<T, BF16>)
    return bfloat16_to_float(x.v);
  else
    return float8_to_float(x.v, IsF8<T>::type);
}

template <typename D>
D float_to_narrow(float f, bool saturate) {
  if constexpr (std::is_same_v<D, Half>)
    return Half{float_to_half(f)};
  else if constexpr (std::is_same_v<D, BF16>)
    return BF16{float_to_bfloat16(f)};
  else
    return D{float_to_float8(f, IsF8<D>::type, saturate)};
}

template <typename S, typename D>
inline D convert(S s, bool saturate) {
  if constexpr (is_narrow_float<S>()) {
    return convert<float, D>(narrow_to_float(s), saturate);
  } else if constexpr (is_narrow_float<D>()) {
    return float_to_narrow<D>(float(s), saturate);
  } else if constexpr (std::is_same_v<D, bool>) {
    return s != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    if (std::isnan(s)) return D(0);
    if (s <= S(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    if (s >= S(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(s);
  } else {
    return static_cast<D>(s);
  }
}

template <typename Fn>
bool dispatch_castable(int32_t dt, Fn&& fn) {
  switch (dt) {
    case kBool:
      return fn(TypeTag<bool>{}), true;
    case kFloat16:
      return fn(TypeTag<Half>{}), true;
    case kBfloat16:
      return fn(TypeTag<BF16>{}), true;
    case kFloat8E4M3FN:
      return fn(TypeTag<F8<kFloat8E4M3FN>>{}), true;
    case kFloat8E4M3FNUZ:
      return fn(TypeTag<F8<kFloat8E4M3FNUZ>>{}), true;
    case kFloat8E5M2:
      return fn(TypeTag<F8<kFloat8E5M2>>{}), true;
    case kFloat8E5M2FNUZ:
      return fn(TypeTag<F8<kFloat8E5M2FNUZ>>{}), true;
    default:
      return dispatch_numeric(dt, fn);
  }
}

Result<std::unique_ptr<Kernel>> cast_to(BuildContext& ctx, int32_t to) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  bool saturate = ctx.attr_int("saturate", 1) != 0;
  ctx.set_output(0, to, x->shape);
  int64_t n = shape_numel(x->shape);
  std::unique_ptr<Kernel> k;
  bool inner_ok = false;
  bool ok = dispatch_castable(x->dtype, [&](auto stag) {
    using S = typename decltype(stag)::type;
    inner_ok = dispatch_castable(to, [&](auto dtag) {
      using D = typename decltype(dtag)::type;
      k = map_kernel<S, D>(n, [saturate](S v) { return convert<S, D>(v, saturate); });
    });
  });
  if (!ok || !inner_ok || !k) {
    return ctx.error("cast from " + dtype_name(x->dtype) + " to " + dtype_name(to) +
                     " is not supported (strings are refused)");
  }
  return k;
}

Result<std::unique_ptr<Kernel>> build_cast(BuildContext& ctx) {
  return cast_to(ctx, int32_t(ctx.attr_int("to", 0)));
}

Result<std::unique_ptr<Kernel>> build_cast_like(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* like, ctx.require_input(1));
  return cast_to(ctx, like->dtype);
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_cast_op(BuildContext& ctx) { return build_cast(ctx); }
Result<std::unique_ptr<Kernel>> build_cast_like_op(BuildContext& ctx) {
  return build_cast_like(ctx);
}

}  // namespace onnx_prepack::runtime::math
