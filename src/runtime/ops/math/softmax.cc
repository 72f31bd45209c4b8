// Softmax, LogSoftmax and Hardmax, float and double (float16/bfloat16 through
// float, half_adapter.cc): before opset 13 over the input coerced to
// 2-D at `axis` (default 1), since then along `axis` (default -1). Softmax over
// contiguous float rows runs on kernels/vec_math.
#include <algorithm>
#include <cmath>

#include "kernels/vec_math/vec_math.h"
#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

// Softmax along rows of `len` elements `inner` apart, in T (max, exp, sum, scale).
template <typename T>
std::unique_ptr<Kernel> softmax_strided(int64_t outer, int64_t len, int64_t inner) {
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const T* in = static_cast<const T*>(io.in[0]);
    T* out = static_cast<T*>(io.out[0]);
    int64_t rows = outer * inner;
    parallel_range(io.pool, rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)),
                   [&](int64_t r0, int64_t r1) {
                     for (int64_t r = r0; r < r1; ++r) {
                       int64_t o = r / inner, i = r % inner;
                       const T* xr = in + o * len * inner + i;
                       T* yr = out + o * len * inner + i;
                       T mx = -T(INFINITY);
                       for (int64_t j = 0; j < len; ++j) mx = std::max(mx, xr[j * inner]);
                       T sum = T(0);
                       for (int64_t j = 0; j < len; ++j) {
                         T e = std::exp(xr[j * inner] - mx);
                         yr[j * inner] = e;
                         sum += e;
                       }
                       T inv = T(1) / sum;
                       for (int64_t j = 0; j < len; ++j) yr[j * inner] *= inv;
                     }
                   });
  }));
}

Result<std::unique_ptr<Kernel>> build_softmax(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->dtype != kFloat && x->dtype != kDouble)
    return ctx.error("only float and double are supported, got " + dtype_name(x->dtype));
  int64_t rank = int64_t(x->shape.size());
  // ONNX: `axis` lies in [-r, r-1], so a scalar has none (ORT and onnx's inference refuse it).
  if (rank == 0) return ctx.error("input must have rank >= 1, got a scalar");
  ctx.set_output(0, x->dtype, x->shape);
  int64_t outer = 1, len = 1, inner = 1;
  if (ctx.opset() < 13) {  // coerced to 2-D at `axis`
    OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", 1), rank, ctx));
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : len) *= x->shape[size_t(i)];
  } else {
    OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", -1), rank, ctx));
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis)
        outer *= x->shape[size_t(i)];
      else if (i == axis)
        len = x->shape[size_t(i)];
      else
        inner *= x->shape[size_t(i)];
    }
  }
  if (x->dtype == kDouble) return softmax_strided<double>(outer, len, inner);
  if (inner == 1) {  // softmax over contiguous rows: vectorised, one call per row block
    const kernels::vec::SoftmaxFn fn = kernels::vec::host_vec_kernels().softmax_rows;
    return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
      const float* in = static_cast<const float*>(io.in[0]);
      float* out = static_cast<float*>(io.out[0]);
      parallel_range(io.pool, outer, std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)),
                     [&](int64_t r0, int64_t r1) {
                       fn(in + r0 * len, out + r0 * len, size_t(r1 - r0), size_t(len));
                     });
    }));
  }
  return softmax_strided<float>(outer, len, inner);
}

struct Rows {
  int64_t outer = 1, len = 1, inner = 1;
};

Result<Rows> rows_of(BuildContext& ctx, const Shape& s) {
  int64_t rank = int64_t(s.size());
  Rows r;
  if (rank == 0) return ctx.error("input must have rank >= 1, got a scalar");  // no axis
  bool coerced = ctx.opset() < 13;
  OP_ASSIGN_OR_RETURN(int64_t axis,
                      normalize_axis(ctx.attr_int("axis", coerced ? 1 : -1), rank, ctx));
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = s[size_t(i)];
    if (i < axis)
      r.outer *= d;
    else if (i == axis || coerced)
      r.len *= d;
    else
      r.inner *= d;
  }
  return r;
}

template <bool hard>
Result<std::unique_ptr<Kernel>> build(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(Rows r, rows_of(ctx, x->shape));
  ctx.set_output(0, x->dtype, x->shape);
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([r](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          T* out = static_cast<T*>(io.out[0]);
          int64_t min_rows = std::max<int64_t>(1, 8192 / std::max<int64_t>(r.len, 1));
          parallel_range(io.pool, r.outer * r.inner, min_rows, [&](int64_t r0, int64_t r1) {
            for (int64_t row = r0; row < r1; ++row) {
              int64_t o = row / r.inner, i = row % r.inner;
              const T* xr = in + o * r.len * r.inner + i;
              T* yr = out + o * r.len * r.inner + i;
              if (r.len == 0) continue;
              int64_t arg = 0;
              T mx = xr[0];
              for (int64_t j = 1; j < r.len; ++j) {
                if (xr[j * r.inner] > mx) {
                  mx = xr[j * r.inner];
                  arg = j;
                }
              }
              if constexpr (hard) {
                for (int64_t j = 0; j < r.len; ++j) yr[j * r.inner] = T(j == arg ? 1 : 0);
              } else {
                double sum = 0;
                for (int64_t j = 0; j < r.len; ++j) sum += std::exp(double(xr[j * r.inner] - mx));
                T lse = T(std::log(sum));
                for (int64_t j = 0; j < r.len; ++j) yr[j * r.inner] = xr[j * r.inner] - mx - lse;
              }
            }
          });
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_softmax_op(BuildContext& ctx) { return build_softmax(ctx); }
Result<std::unique_ptr<Kernel>> build_log_softmax_op(BuildContext& ctx) {
  return build<false>(ctx);
}
Result<std::unique_ptr<Kernel>> build_hardmax_op(BuildContext& ctx) { return build<true>(ctx); }

}  // namespace onnx_prepack::runtime::math
