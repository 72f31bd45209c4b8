// MatMul and Gemm for double, int32, int64, uint32 and uint64 (build_matmul and
// build_gemm in matmul.cc keep float and hand these types here): plain loops,
// i-k-j with the output row as the accumulator, rows split over the pool (a
// row's result does not depend on the split). Shapes, broadcasting and errors
// are build_matmul's and build_gemm's.
//
// double accumulates in double in k order. Integers compute in the unsigned
// type of the same width, so a product or a sum that overflows wraps around
// (two's complement) instead of being undefined; the result converts back.
// Integer Gemm (docs/runtime.md): P = A * B wraps like MatMul; with alpha 1
// and beta 0 or 1 (the defaults) Y = P (+ C) wraps too, exact; otherwise
// Y = alpha * P + beta * C in double (ONNX's reference, numpy's
// `alpha * np.dot(A, B) + beta * C`), converted to the type like Cast does:
// truncated toward zero, saturated to the type's range, NaN to 0.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/linalg/linalg_ops.h"
#include "runtime/ops/linalg/matmul_geometry.h"

namespace onnx_prepack::runtime {
namespace {

// The type the arithmetic runs in: double, or the unsigned type of T's width.
template <typename T>
struct AccOf {
  using type = std::make_unsigned_t<T>;
};
template <>
struct AccOf<double> {
  using type = double;
};
template <typename T>
using Acc = typename AccOf<T>::type;

// Calls fn(TypeTag<T>{}) for the types of this file; false for others.
template <typename Fn>
bool dispatch_typed(int32_t dtype, Fn&& fn) {
  switch (dtype) {
    case kDouble:
      fn(TypeTag<double>{});
      return true;
    case kInt32:
      fn(TypeTag<int32_t>{});
      return true;
    case kInt64:
      fn(TypeTag<int64_t>{});
      return true;
    case kUint32:
      fn(TypeTag<uint32_t>{});
      return true;
    case kUint64:
      fn(TypeTag<uint64_t>{});
      return true;
    default:
      return false;
  }
}

// Rows per pool task: about 64K multiply-adds each (k * n saturates: the
// product of two inputs' dims is not bounded).
int64_t rows_per_task(int64_t k, int64_t n) {
  const uint64_t work = std::max<uint64_t>(1, saturating_mul(uint64_t(k), uint64_t(n)));
  return work >= (uint64_t(1) << 16) ? 1 : int64_t((uint64_t(1) << 16) / work);
}

// y[0, n) = a[0, k) (stride sa) times b [k, n] (row stride n); y is the accumulator.
template <typename T>
void row_times_kn(const T* a, int64_t sa, const T* b, int64_t k, int64_t n, T* y) {
  using U = Acc<T>;
  std::fill(y, y + n, T(0));
  for (int64_t p = 0; p < k; ++p) {
    const U av = U(a[p * sa]);
    const T* br = b + p * n;
    for (int64_t j = 0; j < n; ++j) y[j] = T(U(y[j]) + av * U(br[j]));
  }
}

// y[j] = sum over p of a[p * sa] * b[j * k + p] (b is [n, k]), p ascending.
template <typename T>
void row_times_nk(const T* a, int64_t sa, const T* b, int64_t k, int64_t n, T* y) {
  using U = Acc<T>;
  for (int64_t j = 0; j < n; ++j) {
    const T* br = b + j * k;
    U s = U(0);
    for (int64_t p = 0; p < k; ++p) s += U(a[p * sa]) * U(br[p]);
    y[j] = T(s);
  }
}

// v truncated toward zero and saturated to T's range, NaN to 0 (Cast's float
// to integer conversion).
template <typename T>
T saturate_to(double v) {
  if (std::isnan(v)) return T(0);
  const double t = std::trunc(v);
  const double lo = double(std::numeric_limits<T>::min());            // exact: 0 or -2^(w-1)
  const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^31, 2^32, 2^63, 2^64
  if (t < lo) return std::numeric_limits<T>::min();
  if (t >= hi) return std::numeric_limits<T>::max();
  return T(t);
}

template <typename T>
std::unique_ptr<Kernel> matmul_kernel(int64_t m, int64_t k, int64_t n, int64_t batches,
                                      std::vector<int64_t> a_off, std::vector<int64_t> b_off) {
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const T* ap = static_cast<const T*>(io.in[0]);
    const T* bp = static_cast<const T*>(io.in[1]);
    T* yp = static_cast<T*>(io.out[0]);
    if (m == 0 || n == 0) return;
    // Output row r of batch r / m; the output's rows are batches * m, checked by the session.
    parallel_range(io.pool, batches * m, rows_per_task(k, n), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const size_t bi = size_t(r / m);
        const int64_t i = r % m;
        row_times_kn(ap + a_off[bi] + i * k, 1, bp + b_off[bi], k, n, yp + r * n);
      }
    });
  }));
}

template <typename T>
std::unique_ptr<Kernel> gemm_kernel(int64_t m, int64_t k, int64_t n, bool ta, bool tb, float alpha,
                                    float beta, bool has_c, BroadcastPlan cplan) {
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    using U = Acc<T>;
    const T* ap = static_cast<const T*>(io.in[0]);
    const T* bp = static_cast<const T*>(io.in[1]);
    const T* cp = has_c ? static_cast<const T*>(io.in[2]) : nullptr;
    T* yp = static_cast<T*>(io.out[0]);
    if (m == 0 || n == 0) return;
    // A(i, p): a[i * k + p], or a[p * m + i] when transposed.
    const int64_t sa = ta ? m : 1;
    parallel_range(io.pool, m, rows_per_task(k, n), [&](int64_t r0, int64_t r1) {
      for (int64_t i = r0; i < r1; ++i) {
        const T* ar = ta ? ap + i : ap + i * k;
        if (tb) {
          row_times_nk(ar, sa, bp, k, n, yp + i * n);
        } else {
          row_times_kn(ar, sa, bp, k, n, yp + i * n);
        }
      }
    });
    const bool use_c = has_c && beta != 0.0f;
    // C's offset for output row r: its plan collapses [M, N] to rows of plan.inner.
    auto for_c = [&](auto&& fn) {  // fn(y element, c element) over Y
      const int64_t rows = cplan.outer_count();
      int64_t off[1];
      for (int64_t r = 0; r < rows; ++r) {
        cplan.offsets(r, off);
        T* yr = yp + r * cplan.inner;
        const T* cr = cp + off[0];
        const int64_t cs = cplan.inner_stride[0];
        for (int64_t j = 0; j < cplan.inner; ++j) fn(yr[j], cr[j * cs]);
      }
    };
    if constexpr (std::is_floating_point_v<T>) {
      // As the float path: the product scaled, then beta * C added.
      if (alpha != 1.0f) {
        const T al = T(alpha);
        for (int64_t i = 0; i < m * n; ++i) yp[i] *= al;
      }
      if (use_c) {
        const T be = T(beta);
        for_c([be](T& y, T c) { y += be * c; });
      }
    } else if (alpha == 1.0f && (!use_c || beta == 1.0f)) {
      if (use_c) for_c([](T& y, T c) { y = T(U(y) + U(c)); });
    } else {
      const double al = double(alpha), be = double(beta);
      if (use_c) {
        for_c([al, be](T& y, T c) { y = saturate_to<T>(al * double(y) + be * double(c)); });
      } else {
        for (int64_t i = 0; i < m * n; ++i) yp[i] = saturate_to<T>(al * double(yp[i]));
      }
    }
  }));
}

}  // namespace

bool matmul_typed_dtype(int32_t dtype) {
  return dispatch_typed(dtype, [](auto) {});
}

std::string linalg_type_error(const ValueDesc& a, const ValueDesc& b) {
  return "A and B must have one type of float, float16, bfloat16, double, int32, int64, uint32, "
         "uint64, got " +
         dtype_name(a.dtype) + " and " + dtype_name(b.dtype);
}

Result<std::unique_ptr<Kernel>> build_matmul_typed(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* a, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* b, ctx.require_input(1));
  if (a->dtype != b->dtype) return ctx.error(linalg_type_error(*a, *b));
  OP_ASSIGN_OR_RETURN(const MatMulGeometry g, matmul_geometry(ctx, a->shape, b->shape));
  // float16/bfloat16 come here for the checks above (their errors name the shapes); the type
  // error then has half_adapter.cc build them for float.
  if (!matmul_typed_dtype(a->dtype)) return ctx.error(linalg_type_error(*a, *b));
  ctx.set_output(0, a->dtype, g.out);
  std::vector<int64_t> a_off, b_off;
  g.batch_offsets(a_off, b_off);
  std::unique_ptr<Kernel> kernel;
  dispatch_typed(a->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernel = matmul_kernel<T>(g.m, g.k, g.n, g.batches, std::move(a_off), std::move(b_off));
  });
  return kernel;
}

Result<std::unique_ptr<Kernel>> build_gemm_typed(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* a, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* b, ctx.require_input(1));
  if (a->dtype != b->dtype) return ctx.error(linalg_type_error(*a, *b));
  const int32_t dt = a->dtype;
  if (a->shape.size() != 2 || b->shape.size() != 2) return ctx.error("A and B must be 2-D");
  bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  float alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
  int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
  int64_t kb = tb ? b->shape[1] : b->shape[0], n = tb ? b->shape[0] : b->shape[1];
  if (k != kb) {
    return ctx.error("inner dimensions differ: A " + shape_string(a->shape) + ", B " +
                     shape_string(b->shape) + " (transA " + std::to_string(ta) + ", transB " +
                     std::to_string(tb) + ")");
  }
  Shape out{m, n};
  bool has_c = ctx.has_input(2);
  BroadcastPlan cplan;
  if (has_c) {
    const ValueDesc& c = ctx.input(2);
    if (c.dtype != dt) return ctx.error("C must be " + dtype_name(dt) + " like A and B");
    auto r = broadcast_shapes(c.shape, out);
    if (!r.ok() || *r != out) {
      return ctx.error("C " + shape_string(c.shape) + " does not broadcast to " +
                       shape_string(out));
    }
    cplan = make_broadcast_plan({c.shape}, out);
  }
  if (!matmul_typed_dtype(dt)) return ctx.error(linalg_type_error(*a, *b));  // as in MatMul
  ctx.set_output(0, dt, out);
  std::unique_ptr<Kernel> kernel;
  dispatch_typed(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernel = gemm_kernel<T>(m, k, n, ta, tb, alpha, beta, has_c, cplan);
  });
  return kernel;
}

}  // namespace onnx_prepack::runtime
