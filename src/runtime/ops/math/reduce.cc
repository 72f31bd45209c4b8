// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (axes as
// an attribute, or as an input from opset 13 for ReduceSum and 18 for the
// others; keepdims; noop_with_empty_axes), ArgMax / ArgMin (select_last_index)
// and CumSum (exclusive, reverse). Floats accumulate in double.
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

enum class Red { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The input's dims split into kept and reduced, with their input strides.
struct ReducePlan {
  std::vector<int64_t> kept_dims, kept_strides;  // row-major order of the output
  std::vector<int64_t> red_dims, red_strides;    // innermost last
  int64_t out_count = 1, red_count = 1;
};

// Calls fn(offset) for every input offset of the reduced space below `base`.
template <typename Fn>
void for_each_reduced(const ReducePlan& p, int64_t base, Fn&& fn) {
  if (p.red_count == 0) return;
  if (p.red_dims.empty()) return fn(base);
  size_t nd = p.red_dims.size();
  int64_t last = p.red_dims[nd - 1], step = p.red_strides[nd - 1];
  std::vector<int64_t> idx(nd - 1, 0);
  int64_t off = base;
  for (;;) {
    for (int64_t j = 0; j < last; ++j) fn(off + j * step);
    size_t d = nd - 1;
    while (d-- > 0) {
      off += p.red_strides[d];
      if (++idx[d] < p.red_dims[d]) break;
      off -= p.red_strides[d] * p.red_dims[d];
      idx[d] = 0;
    }
    if (d == size_t(-1)) return;
  }
}

int64_t base_offset(const ReducePlan& p, int64_t o) {
  int64_t off = 0;
  for (size_t d = p.kept_dims.size(); d-- > 0;) {
    off += (o % p.kept_dims[d]) * p.kept_strides[d];
    o /= p.kept_dims[d];
  }
  return off;
}

// A result computed in double (LogSumExp, LogSum's log, L2's sqrt) in the accumulator's type:
// an integer one saturates to its range (an empty reduction's -inf to the lowest value; NaN,
// the log or sqrt of a negative wrapped sum, which no integer holds, to 0), as ONNX leaves
// out-of-range integers undefined and converting them would be undefined behaviour in C++.
template <class Acc>
Acc double_result(double v) {
  if constexpr (std::is_integral_v<Acc>) {
    if (std::isnan(v)) return Acc(0);
    if (v <= double(std::numeric_limits<Acc>::lowest())) return std::numeric_limits<Acc>::lowest();
    if (v >= double(std::numeric_limits<Acc>::max())) return std::numeric_limits<Acc>::max();
  }
  return Acc(v);
}

template <Red r, typename T>
std::unique_ptr<Kernel> reduce_kernel(const ReducePlan& plan) {
  // A mean of narrow integers sums in 64 bits, so a sum past T's range still
  // gives the exact (truncated) mean.
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::conditional_t<r == Red::kMean, Wide, T>>;
  return make_kernel([plan](const KernelIO& io) {
    const T* x = static_cast<const T*>(io.in[0]);
    T* y = static_cast<T*>(io.out[0]);
    int64_t min_rows = std::max<int64_t>(1, kMinChunk / std::max<int64_t>(1, plan.red_count));
    parallel_range(io.pool, plan.out_count, min_rows, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        int64_t base = base_offset(plan, o);
        Acc acc;
        if constexpr (r == Red::kMax) {
          acc = std::numeric_limits<T>::has_infinity ? -Acc(std::numeric_limits<T>::infinity())
                                                     : Acc(std::numeric_limits<T>::lowest());
          for_each_reduced(plan, base, [&](int64_t i) {
            Acc v = Acc(x[i]);
            if constexpr (std::is_floating_point_v<T>) {
              if (std::isnan(v)) acc = v;
            }
            if (v > acc) acc = v;
          });
        } else if constexpr (r == Red::kMin) {
          acc = std::numeric_limits<T>::has_infinity ? Acc(std::numeric_limits<T>::infinity())
                                                     : Acc(std::numeric_limits<T>::max());
          for_each_reduced(plan, base, [&](int64_t i) {
            Acc v = Acc(x[i]);
            if constexpr (std::is_floating_point_v<T>) {
              if (std::isnan(v)) acc = v;
            }
            if (v < acc) acc = v;
          });
        } else if constexpr (r == Red::kProd) {
          acc = Acc(1);
          for_each_reduced(plan, base, [&](int64_t i) { acc = wrap_mul(acc, Acc(x[i])); });
        } else if constexpr (r == Red::kLogSumExp) {
          double mx = -INFINITY;
          for_each_reduced(plan, base, [&](int64_t i) {
            const double v = double(x[i]);  // a NaN sticks (std::max(m, NaN) keeps m)
            mx = std::isnan(v) || std::isnan(mx) ? std::isnan(mx) ? mx : v : std::max(mx, v);
          });
          if (std::isinf(mx) || std::isnan(mx)) {
            acc = double_result<Acc>(mx);  // +inf, NaN, or -inf for all -inf or nothing
          } else {
            double s = 0;
            for_each_reduced(plan, base, [&](int64_t i) { s += std::exp(double(x[i]) - mx); });
            acc = double_result<Acc>(mx + std::log(s));
          }
        } else {
          acc = Acc(0);
          for_each_reduced(plan, base, [&](int64_t i) {
            Acc v = Acc(x[i]);
            if constexpr (std::is_integral_v<Acc>) {
              // Integers wrap in their own width (as numpy, ONNX's reference):
              // the arithmetic runs unsigned, where wrapping is defined.
              using U = std::make_unsigned_t<Acc>;
              U u = U(v);
              if constexpr (r == Red::kL1) {
                if constexpr (std::is_signed_v<Acc>) u = v < 0 ? U(uint64_t(0) - uint64_t(u)) : u;
              }
              // In uint64_t: a uint16 product would be promoted to int.
              if constexpr (r == Red::kL2 || r == Red::kSumSquare) u = U(uint64_t(u) * uint64_t(u));
              acc = Acc(U(uint64_t(U(acc)) + uint64_t(u)));
            } else {
              if constexpr (r == Red::kL1) v = v < 0 ? Acc(-v) : v;
              if constexpr (r == Red::kL2 || r == Red::kSumSquare) v = Acc(v * v);
              acc = Acc(acc + v);
            }
          });
          if constexpr (r == Red::kMean) {
            if (plan.red_count != 0)
              acc = Acc(acc / Acc(plan.red_count));
            else if constexpr (std::is_floating_point_v<Acc>)
              acc = Acc(NAN);  // the mean of nothing
          }
          if constexpr (r == Red::kL2) acc = double_result<Acc>(std::sqrt(double(acc)));
          if constexpr (r == Red::kLogSum) acc = double_result<Acc>(std::log(double(acc)));
        }
        y[o] = T(acc);
      }
    });
  });
}

// keepdims is 0 or 1 (ONNX gives no meaning to other values; ORT reads them as 0, a
// "!= 0" test as 1): anything else is refused.
Result<bool> keepdims_of(const BuildContext& ctx) {
  const int64_t k = ctx.attr_int("keepdims", 1);
  if (k != 0 && k != 1) return ctx.error("keepdims must be 0 or 1, got " + std::to_string(k));
  return k == 1;
}

// The normalised, de-duplicated reduced axes, or nullopt for a no-op.
Result<std::optional<std::vector<bool>>> reduced_axes(BuildContext& ctx, int64_t rank,
                                                      int input_opset) {
  std::vector<int64_t> axes;
  if (ctx.opset() >= input_opset) {
    if (ctx.has_input(1)) {
      OP_ASSIGN_OR_RETURN(axes, ctx.const_ints(1, "axes"));
    }
  } else if (auto a = ctx.attr_ints("axes")) {
    axes = *a;
  }
  if (axes.empty() && ctx.opset() >= input_opset && ctx.attr_int("noop_with_empty_axes", 0) != 0)
    return std::optional<std::vector<bool>>();
  std::vector<bool> reduce(size_t(rank), axes.empty());
  for (int64_t a : axes) {
    OP_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, ctx));
    reduce[size_t(n)] = true;
  }
  return std::optional<std::vector<bool>>(std::move(reduce));
}

// The plan reducing the dims of `shape` set in `mask`; `out` gets the result shape.
ReducePlan plan_reduction(const Shape& shape, const std::vector<bool>& mask, bool keepdims,
                          Shape* out) {
  int64_t rank = int64_t(shape.size());
  ReducePlan plan;
  int64_t stride = 1;
  std::vector<int64_t> strides(static_cast<size_t>(rank), 0);
  for (int64_t d = rank; d-- > 0;) {
    strides[size_t(d)] = stride;
    stride *= shape[size_t(d)];
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = shape[size_t(d)];
    if (mask[size_t(d)]) {
      if (keepdims) out->push_back(1);
      if (n != 1) {
        plan.red_dims.push_back(n);
        plan.red_strides.push_back(strides[size_t(d)]);
      }
      plan.red_count *= n;
    } else {
      out->push_back(n);
      plan.kept_dims.push_back(n);
      plan.kept_strides.push_back(strides[size_t(d)]);
      plan.out_count *= n;
    }
  }
  return plan;
}

template <Red r>
Result<std::unique_ptr<Kernel>> build_reduce(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  OP_ASSIGN_OR_RETURN(auto reduce, reduced_axes(ctx, rank, r == Red::kSum ? 13 : 18));
  OP_ASSIGN_OR_RETURN(bool keepdims, keepdims_of(ctx));
  std::vector<bool> mask = reduce ? *reduce : std::vector<bool>(size_t(rank), false);
  Shape out;
  ReducePlan plan = plan_reduction(x->shape, mask, keepdims, &out);
  ctx.set_output(0, x->dtype, out);
  std::unique_ptr<Kernel> k;
  bool ok = dispatch_numeric(x->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = reduce_kernel<r, T>(plan);
  });
  bool needs_float = r == Red::kMean || r == Red::kL2 || r == Red::kLogSum || r == Red::kLogSumExp;
  if (!ok || (needs_float && !is_float_type(x->dtype) && x->dtype != kInt32 && x->dtype != kInt64 &&
              x->dtype != kUint32 && x->dtype != kUint64))
    return unsupported_type(ctx, x->dtype);
  return k;
}

// [outer, len, inner] around `axis`.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisSplit split_at(const Shape& s, int64_t axis) {
  AxisSplit a;
  for (int64_t i = 0; i < int64_t(s.size()); ++i) {
    if (i < axis)
      a.outer *= s[size_t(i)];
    else if (i == axis)
      a.len = s[size_t(i)];
    else
      a.inner *= s[size_t(i)];
  }
  return a;
}

template <bool is_max>
Result<std::unique_ptr<Kernel>> build_arg(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  // `axis` lies in [-r, r-1]: a scalar has none (onnx's inference and ORT refuse it).
  if (rank == 0) return ctx.error("input must have rank >= 1, got a scalar");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", 0), rank, ctx));
  OP_ASSIGN_OR_RETURN(bool keepdims, keepdims_of(ctx));
  bool last = ctx.attr_int("select_last_index", 0) != 0;
  Shape out = x->shape;
  if (rank > 0) {
    if (x->shape[size_t(axis)] == 0) return ctx.error("cannot take the arg of an empty axis");
    if (keepdims)
      out[size_t(axis)] = 1;
    else
      out.erase(out.begin() + axis);
  }
  ctx.set_output(0, kInt64, out);
  AxisSplit s = rank > 0 ? split_at(x->shape, axis) : AxisSplit{};
  std::unique_ptr<Kernel> k;
  if (!dispatch_numeric(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([s, last](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          int64_t* o = static_cast<int64_t*>(io.out[0]);
          parallel_range(io.pool, s.outer * s.inner, 256, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
              int64_t a = r / s.inner, b = r % s.inner;
              const T* p = in + a * s.len * s.inner + b;
              int64_t best = 0;
              T bv = p[0];
              for (int64_t j = 1; j < s.len; ++j) {
                T v = p[j * s.inner];
                // NaN is the extreme, as numpy's argmax/argmin (onnx's reference) read it:
                // the first NaN, or the last one with select_last_index.
                const bool v_nan = v != v, b_nan = bv != bv;
                bool better = b_nan    ? v_nan && last
                              : v_nan  ? true
                              : is_max ? (last ? v >= bv : v > bv)
                                       : (last ? v <= bv : v < bv);
                if (better) {
                  bv = v;
                  best = j;
                }
              }
              o[r] = best;
            }
          });
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_cumsum(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(auto axis_v, ctx.const_ints(1, "axis"));
  if (axis_v.size() != 1) return ctx.error("axis must be a scalar");
  int64_t rank = int64_t(x->shape.size());
  if (rank == 0) return ctx.error("input must have rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_v[0], rank, ctx));
  const int64_t exclusive_v = ctx.attr_int("exclusive", 0), reverse_v = ctx.attr_int("reverse", 0);
  if ((exclusive_v != 0 && exclusive_v != 1) || (reverse_v != 0 && reverse_v != 1))
    return ctx.error("exclusive and reverse must be 0 or 1, got " + std::to_string(exclusive_v) +
                     " and " + std::to_string(reverse_v));
  const bool exclusive = exclusive_v == 1, reverse = reverse_v == 1;
  ctx.set_output(0, x->dtype, x->shape);
  AxisSplit s = split_at(x->shape, axis);
  std::unique_ptr<Kernel> k;
  if (!dispatch_numeric(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([s, exclusive, reverse](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          T* o = static_cast<T*>(io.out[0]);
          parallel_range(io.pool, s.outer * s.inner, 256, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
              int64_t a = r / s.inner, b = r % s.inner;
              const T* p = in + a * s.len * s.inner + b;
              T* q = o + a * s.len * s.inner + b;
              T acc = T(0);
              for (int64_t t = 0; t < s.len; ++t) {
                int64_t j = reverse ? s.len - 1 - t : t;
                T v = p[j * s.inner];
                if (exclusive) {
                  q[j * s.inner] = acc;
                  acc = wrap_add(acc, v);
                } else {
                  acc = wrap_add(acc, v);
                  q[j * s.inner] = acc;
                }
              }
            }
          });
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

// MeanVarianceNormalization: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over
// `axes` (default [0, 2, 3]), the onnx reference's form.
Result<std::unique_ptr<Kernel>> build_mvn(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> axes = ctx.attr_ints("axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<bool> mask(size_t(rank), false);
  for (int64_t a : axes) {
    OP_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, ctx));
    mask[size_t(n)] = true;
  }
  Shape reduced;
  ReducePlan plan = plan_reduction(x->shape, mask, true, &reduced);
  ctx.set_output(0, x->dtype, x->shape);
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([plan](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          T* out = static_cast<T*>(io.out[0]);
          parallel_range(io.pool, plan.out_count, 1, [&](int64_t o0, int64_t o1) {
            for (int64_t o = o0; o < o1; ++o) {
              int64_t base = base_offset(plan, o);
              double s = 0, s2 = 0;
              for_each_reduced(plan, base, [&](int64_t i) {
                s += double(in[i]);
                s2 += double(in[i]) * double(in[i]);
              });
              double mean = s / double(plan.red_count);
              double sd = std::sqrt(std::max(0.0, s2 / double(plan.red_count) - mean * mean));
              double inv = 1.0 / (sd + 1e-9);
              for_each_reduced(plan, base,
                               [&](int64_t i) { out[i] = T((double(in[i]) - mean) * inv); });
            }
          });
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_mean_variance_normalization_op(BuildContext& ctx) {
  return build_mvn(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_sum_op(BuildContext& ctx) {
  return build_reduce<Red::kSum>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_mean_op(BuildContext& ctx) {
  return build_reduce<Red::kMean>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_max_op(BuildContext& ctx) {
  return build_reduce<Red::kMax>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_min_op(BuildContext& ctx) {
  return build_reduce<Red::kMin>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_prod_op(BuildContext& ctx) {
  return build_reduce<Red::kProd>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_l1_op(BuildContext& ctx) {
  return build_reduce<Red::kL1>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_l2_op(BuildContext& ctx) {
  return build_reduce<Red::kL2>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_log_sum_op(BuildContext& ctx) {
  return build_reduce<Red::kLogSum>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_log_sum_exp_op(BuildContext& ctx) {
  return build_reduce<Red::kLogSumExp>(ctx);
}
Result<std::unique_ptr<Kernel>> build_reduce_sum_square_op(BuildContext& ctx) {
  return build_reduce<Red::kSumSquare>(ctx);
}
Result<std::unique_ptr<Kernel>> build_arg_max_op(BuildContext& ctx) { return build_arg<true>(ctx); }
Result<std::unique_ptr<Kernel>> build_arg_min_op(BuildContext& ctx) {
  return build_arg<false>(ctx);
}
Result<std::unique_ptr<Kernel>> build_cum_sum_op(BuildContext& ctx) { return build_cumsum(ctx); }

}  // namespace onnx_prepack::runtime::math
