// Broadcasting binary and variadic operators: Mod, Max, Min, Mean, Sum,
// BitShift, the comparisons (Greater, Less, GreaterOrEqual, LessOrEqual), the
// logical And, Or, Xor and the BitwiseAnd, BitwiseOr, BitwiseXor.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

// out[i] = f(a[i], b[i]) with broadcasting, A and B inputs, O output.
template <typename A, typename O, typename F>
std::unique_ptr<Kernel> binary_kernel(const BroadcastPlan& plan, F f) {
  return make_kernel([plan, f](const KernelIO& io) {
    const A* a = static_cast<const A*>(io.in[0]);
    const A* b = static_cast<const A*>(io.in[1]);
    O* o = static_cast<O*>(io.out[0]);
    run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
      const A* x = a + off[0];
      const A* y = b + off[1];
      int64_t sx = plan.inner_stride[0], sy = plan.inner_stride[1];
      O* out = o + base;
      if (sx == 1 && sy == 1) {
        for (int64_t i = 0; i < n; ++i) out[i] = O(f(x[i], y[i]));
      } else if (sx == 1) {
        for (int64_t i = 0; i < n; ++i) out[i] = O(f(x[i], y[0]));
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = O(f(x[i * sx], y[i * sy]));
      }
    });
  });
}

struct BinarySetup {
  int32_t dtype;
  BroadcastPlan plan;
};

// Checks two same-typed inputs, sets output 0 (`out_type`, or the input type
// when kUndefined) and returns the broadcast plan.
Result<BinarySetup> setup_binary(BuildContext& ctx, int32_t out_type) {
  OP_ASSIGN_OR_RETURN(Shape out, broadcast_inputs(ctx, 0, 2));
  int32_t dt = ctx.input(0).dtype;
  if (ctx.input(1).dtype != dt) {
    return ctx.error("inputs have different types (" + dtype_name(dt) + ", " +
                     dtype_name(ctx.input(1).dtype) + ")");
  }
  ctx.set_output(0, out_type == kUndefined ? dt : out_type, out);
  return BinarySetup{dt, make_broadcast_plan({ctx.input(0).shape, ctx.input(1).shape}, out)};
}

enum class Cmp { kGreater, kLess, kGreaterOrEqual, kLessOrEqual };

template <Cmp c>
Result<std::unique_ptr<Kernel>> build_compare(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(BinarySetup s, setup_binary(ctx, kBool));
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = binary_kernel<T, bool>(s.plan, [](T a, T b) {
      if constexpr (c == Cmp::kGreater) return a > b;
      if constexpr (c == Cmp::kLess) return a < b;
      if constexpr (c == Cmp::kGreaterOrEqual) return a >= b;
      if constexpr (c == Cmp::kLessOrEqual) return a <= b;
    });
  };
  if (s.dtype == kBool)
    make(TypeTag<bool>{});
  else if (!dispatch_numeric(s.dtype, make))
    return unsupported_type(ctx, s.dtype);
  return k;
}

enum class Logic { kAnd, kOr, kXor };

template <Logic l>
Result<std::unique_ptr<Kernel>> build_logical(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(BinarySetup s, setup_binary(ctx, kBool));
  if (s.dtype != kBool) return ctx.error("inputs must be bool, got " + dtype_name(s.dtype));
  // Read as bytes (BOOL tensors are canonical 0/1 once inside the runtime,
  // tensor.h; bytes keep these kernels defined even if one were not).
  return binary_kernel<uint8_t, uint8_t>(s.plan, [](uint8_t a, uint8_t b) {
    const bool x = a != 0, y = b != 0;
    if constexpr (l == Logic::kAnd) return uint8_t(x && y);
    if constexpr (l == Logic::kOr) return uint8_t(x || y);
    if constexpr (l == Logic::kXor) return uint8_t(x != y);
  });
}

template <Logic l>
Result<std::unique_ptr<Kernel>> build_bitwise(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(BinarySetup s, setup_binary(ctx, kUndefined));
  std::unique_ptr<Kernel> k;
  bool ok = !is_float_type(s.dtype) && dispatch_numeric(s.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      k = binary_kernel<T, T>(s.plan, [](T a, T b) {
        if constexpr (l == Logic::kAnd) return T(a & b);
        if constexpr (l == Logic::kOr) return T(a | b);
        if constexpr (l == Logic::kXor) return T(a ^ b);
      });
    }
  });
  if (!ok) return unsupported_type(ctx, s.dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_bit_shift(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(BinarySetup s, setup_binary(ctx, kUndefined));
  std::string dir = ctx.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return ctx.error("direction must be LEFT or RIGHT");
  bool left = dir == "LEFT";
  std::unique_ptr<Kernel> k;
  bool ok = is_unsigned_int(s.dtype) && dispatch_numeric(s.dtype, [&](auto tag) {
              using T = typename decltype(tag)::type;
              if constexpr (std::is_unsigned_v<T>) {
                k = binary_kernel<T, T>(s.plan, [left](T a, T b) {
                  if (b >= T(sizeof(T) * 8)) return T(0);  // shifted out entirely
                  return left ? T(a << b) : T(a >> b);
                });
              }
            });
  if (!ok) return unsupported_type(ctx, s.dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_mod(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(BinarySetup s, setup_binary(ctx, kUndefined));
  const int64_t fmod_v = ctx.attr_int("fmod", 0);
  if (fmod_v != 0 && fmod_v != 1)
    return ctx.error("fmod must be 0 or 1, got " + std::to_string(fmod_v));
  bool fmod = fmod_v == 1;
  if (!fmod && is_float_type(s.dtype)) return ctx.error("fmod must be 1 for floating point");
  std::unique_ptr<Kernel> k;
  if (!dispatch_numeric(s.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = binary_kernel<T, T>(s.plan, [fmod](T a, T b) -> T {
          (void)fmod;  // read only by the signed integer instantiations
          if constexpr (std::is_floating_point_v<T>) {
            return std::fmod(a, b);
          } else {
            if (b == 0) return T(0);  // defined here instead of a trap
            if constexpr (std::is_signed_v<T>) {
              if (b == T(-1)) return T(0);
            }
            T r = T(a % b);
            // Without fmod the result takes the divisor's sign (Python's %).
            if constexpr (std::is_signed_v<T>) {
              if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
            }
            return r;
          }
        });
      }))
    return unsupported_type(ctx, s.dtype);
  return k;
}

// ---- variadic: Max, Min, Sum, Mean ----

enum class Var { kMax, kMin, kSum, kMean };

template <Var v, typename T>
inline T combine(T acc, T x) {
  if constexpr (v == Var::kSum || v == Var::kMean) {
    return T(acc + x);
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(acc) || std::isnan(x)) return acc + x;  // NaN propagates
    }
    if constexpr (v == Var::kMax) return acc < x ? x : acc;
    if constexpr (v == Var::kMin) return x < acc ? x : acc;
  }
}

template <Var v>
Result<std::unique_ptr<Kernel>> build_variadic(BuildContext& ctx) {
  int count = ctx.input_count();
  if (count < 1) return ctx.error("needs at least one input");
  if (ctx.opset() < 8) {  // broadcasting came with opset 8 (Max-8, Min-8, Sum-8, Mean-8)
    for (int i = 1; i < count; ++i) {
      if (ctx.has_input(i) && ctx.has_input(0) && ctx.input(i).shape != ctx.input(0).shape)
        return ctx.error("before opset 8 every input has the shape of input 0, got " +
                         shape_string(ctx.input(i).shape) + " vs " +
                         shape_string(ctx.input(0).shape));
    }
  }
  OP_ASSIGN_OR_RETURN(Shape out, broadcast_inputs(ctx, 0, count));
  int32_t dt = ctx.input(0).dtype;
  for (int i = 1; i < count; ++i) {
    if (ctx.input(i).dtype != dt) return ctx.error("inputs have different types");
  }
  if ((v == Var::kMean) && !is_float_type(dt)) return unsupported_type(ctx, dt);
  ctx.set_output(0, dt, out);
  // Input 0 is broadcast into the output, then each other input folded in.
  std::vector<BroadcastPlan> plans;
  for (int i = 0; i < count; ++i)
    plans.push_back(make_broadcast_plan({out, ctx.input(i).shape}, out));
  int64_t total = shape_numel(out);  // dims-lint: ok (broadcast_inputs checked it)
  std::unique_ptr<Kernel> k;
  if (!dispatch_numeric(dt, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([plans, total, count](const KernelIO& io) {
          (void)total;  // read only by Mean
          T* o = static_cast<T*>(io.out[0]);
          for (int in = 0; in < count; ++in) {
            const BroadcastPlan& plan = plans[size_t(in)];
            const T* x = static_cast<const T*>(io.in[size_t(in)]);
            run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
              const T* xi = x + off[1];
              int64_t sx = plan.inner_stride[1];
              T* oi = o + base;
              if (in == 0) {
                for (int64_t i = 0; i < n; ++i) oi[i] = xi[i * sx];
              } else {
                for (int64_t i = 0; i < n; ++i) oi[i] = combine<v, T>(oi[i], xi[i * sx]);
              }
            });
          }
          if constexpr (v == Var::kMean) {
            if constexpr (std::is_floating_point_v<T>) {
              T inv = T(count);
              parallel_range(io.pool, total, kMinChunk, [&](int64_t b, int64_t e) {
                for (int64_t i = b; i < e; ++i) o[i] /= inv;
              });
            }
          }
        });
      }))
    return unsupported_type(ctx, dt);
  return k;
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_greater_op(BuildContext& ctx) {
  return build_compare<Cmp::kGreater>(ctx);
}
Result<std::unique_ptr<Kernel>> build_less_op(BuildContext& ctx) {
  return build_compare<Cmp::kLess>(ctx);
}
Result<std::unique_ptr<Kernel>> build_greater_or_equal_op(BuildContext& ctx) {
  return build_compare<Cmp::kGreaterOrEqual>(ctx);
}
Result<std::unique_ptr<Kernel>> build_less_or_equal_op(BuildContext& ctx) {
  return build_compare<Cmp::kLessOrEqual>(ctx);
}
Result<std::unique_ptr<Kernel>> build_and_op(BuildContext& ctx) {
  return build_logical<Logic::kAnd>(ctx);
}
Result<std::unique_ptr<Kernel>> build_or_op(BuildContext& ctx) {
  return build_logical<Logic::kOr>(ctx);
}
Result<std::unique_ptr<Kernel>> build_xor_op(BuildContext& ctx) {
  return build_logical<Logic::kXor>(ctx);
}
Result<std::unique_ptr<Kernel>> build_bitwise_and_op(BuildContext& ctx) {
  return build_bitwise<Logic::kAnd>(ctx);
}
Result<std::unique_ptr<Kernel>> build_bitwise_or_op(BuildContext& ctx) {
  return build_bitwise<Logic::kOr>(ctx);
}
Result<std::unique_ptr<Kernel>> build_bitwise_xor_op(BuildContext& ctx) {
  return build_bitwise<Logic::kXor>(ctx);
}
Result<std::unique_ptr<Kernel>> build_bit_shift_op(BuildContext& ctx) {
  return build_bit_shift(ctx);
}
Result<std::unique_ptr<Kernel>> build_mod_op(BuildContext& ctx) { return build_mod(ctx); }
Result<std::unique_ptr<Kernel>> build_max_op(BuildContext& ctx) {
  return build_variadic<Var::kMax>(ctx);
}
Result<std::unique_ptr<Kernel>> build_min_op(BuildContext& ctx) {
  return build_variadic<Var::kMin>(ctx);
}
Result<std::unique_ptr<Kernel>> build_sum_op(BuildContext& ctx) {
  return build_variadic<Var::kSum>(ctx);
}
Result<std::unique_ptr<Kernel>> build_mean_op(BuildContext& ctx) {
  return build_variadic<Var::kMean>(ctx);
}

}  // namespace onnx_prepack::runtime::math
