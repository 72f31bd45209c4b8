// Elementwise arithmetic with numpy broadcasting: Add, Sub, Mul, Div, Pow,
// Equal, Where, and the unary Sqrt, Erf, Tanh, Relu, Sigmoid, Gelu (the float
// forms on kernels/vec_math). The other comparisons are in binary.cc.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_math.h"
#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

enum class BinOp { kAdd, kSub, kMul, kDiv };

template <typename T, BinOp op>
inline T apply(T a, T b) {
  if constexpr (op == BinOp::kAdd) return wrap_add(a, b);
  if constexpr (op == BinOp::kSub) return wrap_sub(a, b);
  if constexpr (op == BinOp::kMul) return wrap_mul(a, b);
  if constexpr (op == BinOp::kDiv) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T(0);  // defined here instead of a trap
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return wrap_sub(T(0), a);
      }
    }
    return T(a / b);
  }
}

template <typename T, BinOp op>
void binary_inner(const T* a, int64_t sa, const T* b, int64_t sb, T* o, int64_t n) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = apply<T, op>(a[i], b[i]);
  } else if (sa == 1) {
    T bv = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = apply<T, op>(a[i], bv);
  } else if (sb == 1) {
    T av = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = apply<T, op>(av, b[i]);
  } else {
    o[0] = apply<T, op>(a[0], b[0]);
    for (int64_t i = 1; i < n; ++i) o[i] = o[0];
  }
}

template <BinOp op>
Result<std::unique_ptr<Kernel>> build_binary(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(Shape out, broadcast_inputs(ctx, 0, 2));
  int32_t dt = ctx.input(0).dtype;
  if (ctx.input(1).dtype != dt) {
    return ctx.error("inputs have different types (" + dtype_name(dt) + ", " +
                     dtype_name(ctx.input(1).dtype) + ")");
  }
  ctx.set_output(0, dt, out);
  auto plan = make_broadcast_plan({ctx.input(0).shape, ctx.input(1).shape}, out);
  std::unique_ptr<Kernel> k;
  if (dt == kFloat) {  // vectorised (vec_math.h): same bytes as the scalar loop
    const kernels::vec::BinaryFn fn = kernels::vec::host_vec_kernels().binary;
    constexpr int code = op == BinOp::kAdd   ? kernels::vec::kAdd
                         : op == BinOp::kSub ? kernels::vec::kSub
                         : op == BinOp::kMul ? kernels::vec::kMul
                                             : kernels::vec::kDiv;
    return std::unique_ptr<Kernel>(new FnKernel(
        [plan, fn](const KernelIO& io) {
          const float* a = static_cast<const float*>(io.in[0]);
          const float* b = static_cast<const float*>(io.in[1]);
          float* o = static_cast<float*>(io.out[0]);
          run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
            fn(code, a + off[0], size_t(plan.inner_stride[0]), b + off[1],
               size_t(plan.inner_stride[1]), o + base, size_t(n));
          });
        },
        PointwiseDesc{PointwiseDesc::kBinary, code}));
  }
  bool ok = dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([plan](const KernelIO& io) {
      const T* a = static_cast<const T*>(io.in[0]);
      const T* b = static_cast<const T*>(io.in[1]);
      T* o = static_cast<T*>(io.out[0]);
      run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
        binary_inner<T, op>(a + off[0], plan.inner_stride[0], b + off[1], plan.inner_stride[1],
                            o + base, n);
      });
    });
  });
  if (!ok) return ctx.error("type " + dtype_name(dt) + " is not supported");
  return k;
}

// Pow: base type T, exponent type E (may differ), output T.
template <typename T, typename E>
inline T power(T a, E b) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) {
    return std::pow(a, b);
  } else if constexpr (std::is_integral_v<T>) {
    // An integer result out of T's range (or NaN) would be undefined behaviour
    // to convert: it saturates, NaN gives 0, as Cast does (docs/runtime.md).
    const double r = std::pow(double(a), double(b));
    if (std::isnan(r)) return T(0);
    if (r <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (r >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(r);
  } else {
    return T(std::pow(double(a), double(b)));
  }
}

Result<std::unique_ptr<Kernel>> build_pow(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(Shape out, broadcast_inputs(ctx, 0, 2));
  int32_t dt = ctx.input(0).dtype, et = ctx.input(1).dtype;
  ctx.set_output(0, dt, out);
  auto plan = make_broadcast_plan({ctx.input(0).shape, ctx.input(1).shape}, out);
  // x^2 with a constant scalar exponent is the common case (decomposed LayerNorm).
  bool square = false;
  if (const Tensor* e = ctx.input_value(1); e && e->numel() == 1 && dt == kFloat) {
    if (et == kFloat) square = e->as<float>()[0] == 2.0f;
    if (et == kDouble) square = e->as<double>()[0] == 2.0;
  }
  std::unique_ptr<Kernel> k;
  bool ok = false;
  if (square) {
    ok = true;
    k = std::make_unique<FnKernel>([plan](const KernelIO& io) {
      const float* a = static_cast<const float*>(io.in[0]);
      float* o = static_cast<float*>(io.out[0]);
      run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
        const float* x = a + off[0];
        int64_t s = plan.inner_stride[0];
        for (int64_t i = 0; i < n; ++i) o[base + i] = x[i * s] * x[i * s];
      });
    });
  } else {
    dispatch_numeric(dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      ok = dispatch_numeric(et, [&](auto etag) {
        using E = typename decltype(etag)::type;
        k = std::make_unique<FnKernel>([plan](const KernelIO& io) {
          const T* a = static_cast<const T*>(io.in[0]);
          const E* b = static_cast<const E*>(io.in[1]);
          T* o = static_cast<T*>(io.out[0]);
          run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
            const T* x = a + off[0];
            const E* y = b + off[1];
            int64_t sx = plan.inner_stride[0], sy = plan.inner_stride[1];
            for (int64_t i = 0; i < n; ++i) o[base + i] = power<T, E>(x[i * sx], y[i * sy]);
          });
        });
      });
    });
  }
  if (!ok)
    return ctx.error("types " + dtype_name(dt) + " ^ " + dtype_name(et) + " are not supported");
  return k;
}

Result<std::unique_ptr<Kernel>> build_equal(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(Shape out, broadcast_inputs(ctx, 0, 2));
  int32_t dt = ctx.input(0).dtype;
  if (ctx.input(1).dtype != dt) return ctx.error("inputs have different types");
  ctx.set_output(0, kBool, out);
  auto plan = make_broadcast_plan({ctx.input(0).shape, ctx.input(1).shape}, out);
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([plan](const KernelIO& io) {
      const T* a = static_cast<const T*>(io.in[0]);
      const T* b = static_cast<const T*>(io.in[1]);
      bool* o = static_cast<bool*>(io.out[0]);
      run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
        int64_t sa = plan.inner_stride[0], sb = plan.inner_stride[1];
        for (int64_t i = 0; i < n; ++i) o[base + i] = a[off[0] + i * sa] == b[off[1] + i * sb];
      });
    });
  };
  bool ok = dt == kBool ? (make(TypeTag<bool>{}), true) : dispatch_numeric(dt, make);
  if (!ok) return ctx.error("type " + dtype_name(dt) + " is not supported");
  return k;
}

Result<std::unique_ptr<Kernel>> build_where(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(Shape out, broadcast_inputs(ctx, 0, 3));
  if (ctx.input(0).dtype != kBool) return ctx.error("condition must be bool");
  int32_t dt = ctx.input(1).dtype;
  if (ctx.input(2).dtype != dt) return ctx.error("X and Y have different types");
  ctx.set_output(0, dt, out);
  auto plan =
      make_broadcast_plan({ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape}, out);
  std::unique_ptr<Kernel> k;
  bool ok = dispatch_width(dtype_size(dt), [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([plan](const KernelIO& io) {
      const uint8_t* c = static_cast<const uint8_t*>(io.in[0]);  // any non-zero byte is true
      const T* x = static_cast<const T*>(io.in[1]);
      const T* y = static_cast<const T*>(io.in[2]);
      T* o = static_cast<T*>(io.out[0]);
      run_broadcast(plan, io.pool, [&](int64_t base, const int64_t* off, int64_t n) {
        int64_t sc = plan.inner_stride[0], sx = plan.inner_stride[1], sy = plan.inner_stride[2];
        for (int64_t i = 0; i < n; ++i) {
          o[base + i] = c[off[0] + i * sc] ? x[off[1] + i * sx] : y[off[2] + i * sy];
        }
      });
    });
  });
  if (!ok) return ctx.error("type " + dtype_name(dt) + " is not supported");
  return k;
}

// ---- unary ----

enum class UnOp { kSqrt, kErf, kTanh, kRelu, kSigmoid, kGelu, kGeluTanh };

template <typename T, UnOp op>
inline T unary(T x) {
  if constexpr (op == UnOp::kSqrt) return std::sqrt(x);
  if constexpr (op == UnOp::kErf) return std::erf(x);
  if constexpr (op == UnOp::kTanh) return std::tanh(x);
  if constexpr (op == UnOp::kRelu) return x < T(0) ? T(0) : x;  // NaN stays NaN (max(0, x))
  if constexpr (op == UnOp::kSigmoid) {
    // Stable for large |x|.
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    T e = std::exp(x);
    return e / (T(1) + e);
  }
  if constexpr (op == UnOp::kGelu)
    return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
  if constexpr (op == UnOp::kGeluTanh) {
    return T(0.5) * x *
           (T(1) + std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)));
  }
}

// The vectorised float form of `op` (vec_math.h), or null.
template <UnOp op>
kernels::vec::UnaryFn vector_unary() {
  const kernels::vec::VecKernels& vk = kernels::vec::host_vec_kernels();
  if constexpr (op == UnOp::kErf) return vk.erf;
  if constexpr (op == UnOp::kTanh) return vk.tanh;
  if constexpr (op == UnOp::kGelu) return vk.gelu;
  if constexpr (op == UnOp::kGeluTanh) return vk.gelu_tanh;
  return nullptr;
}

template <UnOp op>
Result<std::unique_ptr<Kernel>> make_unary(BuildContext& ctx, bool ints_ok) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* in, ctx.require_input(0));
  int32_t dt = in->dtype;
  ctx.set_output(0, dt, in->shape);
  int64_t n = shape_numel(in->shape);
  std::unique_ptr<Kernel> k;
  if (kernels::vec::UnaryFn fn = vector_unary<op>(); fn != nullptr && dt == kFloat) {
    // Elementwise, so neither the chunking nor the thread count changes a bit.
    return std::unique_ptr<Kernel>(new FnKernel([n, fn](const KernelIO& io) {
      const float* x = static_cast<const float*>(io.in[0]);
      float* o = static_cast<float*>(io.out[0]);
      parallel_range(io.pool, n, kMinChunk / 4,
                     [&](int64_t b, int64_t e) { fn(x + b, o + b, size_t(e - b)); });
    }));
  }
  if (op == UnOp::kRelu && dt == kFloat) {
    // Clip(0, +inf) of vec_act.h: maxps(0, x) is `0 > x ? 0 : x` and minps(inf, v)
    // keeps v, so every ISA gives the scalar `x < 0 ? 0 : x` (NaN and -0 kept);
    // declared pointwise, so a Relu joins fused chains and Conv epilogues.
    const kernels::vec::ActFn fn = kernels::vec::host_act_kernel();
    return std::unique_ptr<Kernel>(new FnKernel(
        [n, fn](const KernelIO& io) {
          const float* x = static_cast<const float*>(io.in[0]);
          float* o = static_cast<float*>(io.out[0]);
          parallel_range(io.pool, n, kMinChunk / 4, [&](int64_t b, int64_t e) {
            fn(kernels::vec::kActClip, x + b, o + b, size_t(e - b), 0.0f, INFINITY);
          });
        },
        PointwiseDesc{PointwiseDesc::kActivation, kernels::vec::kActClip, 0.0f, INFINITY}));
  }
  if (op == UnOp::kSigmoid && dt == kFloat) {  // vectorised too (vec_act.h)
    const kernels::vec::ActFn fn = kernels::vec::host_act_kernel();
    return std::unique_ptr<Kernel>(new FnKernel(
        [n, fn](const KernelIO& io) {
          const float* x = static_cast<const float*>(io.in[0]);
          float* o = static_cast<float*>(io.out[0]);
          parallel_range(io.pool, n, kMinChunk / 4, [&](int64_t b, int64_t e) {
            fn(kernels::vec::kActSigmoid, x + b, o + b, size_t(e - b), 0.0f, 0.0f);
          });
        },
        PointwiseDesc{PointwiseDesc::kActivation, kernels::vec::kActSigmoid}));
  }
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([n](const KernelIO& io) {
      const T* x = static_cast<const T*>(io.in[0]);
      T* o = static_cast<T*>(io.out[0]);
      parallel_range(io.pool, n, kMinChunk / 4, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = unary<T, op>(x[i]);
      });
    });
  };
  bool ok = false;
  if (dt == kFloat)
    ok = (make(TypeTag<float>{}), true);
  else if (dt == kDouble)
    ok = (make(TypeTag<double>{}), true);
  else if (ints_ok) {
    if constexpr (op == UnOp::kRelu) {
      ok = dispatch_numeric(dt,
                            [&](auto tag) {
                              using T = typename decltype(tag)::type;
                              if constexpr (std::is_signed_v<T>) make(tag);
                            }) &&
           (dt == kInt8 || dt == kInt16 || dt == kInt32 || dt == kInt64);
    }
  }
  if (!ok) return ctx.error("type " + dtype_name(dt) + " is not supported");
  return k;
}

Result<std::unique_ptr<Kernel>> build_sqrt(BuildContext& c) {
  return make_unary<UnOp::kSqrt>(c, false);
}
Result<std::unique_ptr<Kernel>> build_erf(BuildContext& c) {
  return make_unary<UnOp::kErf>(c, false);
}
Result<std::unique_ptr<Kernel>> build_tanh(BuildContext& c) {
  return make_unary<UnOp::kTanh>(c, false);
}
Result<std::unique_ptr<Kernel>> build_relu(BuildContext& c) {
  return make_unary<UnOp::kRelu>(c, true);
}
Result<std::unique_ptr<Kernel>> build_sigmoid(BuildContext& c) {
  return make_unary<UnOp::kSigmoid>(c, false);
}
Result<std::unique_ptr<Kernel>> build_gelu(BuildContext& c) {
  std::string approx = c.attr_string("approximate", "none");
  if (approx == "none") return make_unary<UnOp::kGelu>(c, false);
  if (approx == "tanh") return make_unary<UnOp::kGeluTanh>(c, false);
  return c.error("approximate '" + approx + "' is not 'none' or 'tanh'");
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_add_op(BuildContext& ctx) {
  return build_binary<BinOp::kAdd>(ctx);
}
Result<std::unique_ptr<Kernel>> build_sub_op(BuildContext& ctx) {
  return build_binary<BinOp::kSub>(ctx);
}
Result<std::unique_ptr<Kernel>> build_mul_op(BuildContext& ctx) {
  return build_binary<BinOp::kMul>(ctx);
}
Result<std::unique_ptr<Kernel>> build_div_op(BuildContext& ctx) {
  return build_binary<BinOp::kDiv>(ctx);
}
Result<std::unique_ptr<Kernel>> build_pow_op(BuildContext& ctx) { return build_pow(ctx); }
Result<std::unique_ptr<Kernel>> build_equal_op(BuildContext& ctx) { return build_equal(ctx); }
Result<std::unique_ptr<Kernel>> build_where_op(BuildContext& ctx) { return build_where(ctx); }
Result<std::unique_ptr<Kernel>> build_sqrt_op(BuildContext& ctx) { return build_sqrt(ctx); }
Result<std::unique_ptr<Kernel>> build_erf_op(BuildContext& ctx) { return build_erf(ctx); }
Result<std::unique_ptr<Kernel>> build_tanh_op(BuildContext& ctx) { return build_tanh(ctx); }
Result<std::unique_ptr<Kernel>> build_relu_op(BuildContext& ctx) { return build_relu(ctx); }
Result<std::unique_ptr<Kernel>> build_sigmoid_op(BuildContext& ctx) { return build_sigmoid(ctx); }
Result<std::unique_ptr<Kernel>> build_gelu_op(BuildContext& ctx) { return build_gelu(ctx); }

}  // namespace onnx_prepack::runtime::math
