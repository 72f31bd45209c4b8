// Range: start, start + delta, ... up to limit (exclusive). The element count
// depends on the values, so they must be known at plan time.
#include <cmath>
#include <type_traits>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// The one element of an int16 / int32 / int64 tensor.
int64_t integer_scalar(const Tensor& t) {
  if (t.dtype == kInt16) return *static_cast<const int16_t*>(t.data);
  if (t.dtype == kInt32) return *static_cast<const int32_t*>(t.data);
  return *static_cast<const int64_t*>(t.data);
}

}  // namespace

BuildResult build_range(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const Tensor* start_t, value_for_shape(ctx, 0, "start"));
  OP_ASSIGN_OR_RETURN(const Tensor* limit_t, value_for_shape(ctx, 1, "limit"));
  OP_ASSIGN_OR_RETURN(const Tensor* delta_t, value_for_shape(ctx, 2, "delta"));
  int32_t dt = start_t->dtype;
  if (limit_t->dtype != dt || delta_t->dtype != dt)
    return ctx.error("start, limit and delta must have one type");
  if (dt != kFloat && dt != kDouble && dt != kInt16 && dt != kInt32 && dt != kInt64)
    return ctx.error("type " + dtype_name(dt) + " is not supported");
  const bool integral = dt != kFloat && dt != kDouble;
  int64_t n = 0;
  if (integral) {
    // Exact integer arithmetic: through doubles, values beyond 2^53 round and
    // the count may come out one too large.
    if (start_t->numel() != 1 || limit_t->numel() != 1 || delta_t->numel() != 1)
      return ctx.error("start, limit and delta must hold one element each");
    const int64_t s = integer_scalar(*start_t), l = integer_scalar(*limit_t),
                  d = integer_scalar(*delta_t);
    if (d == 0) return ctx.error("delta must not be 0");
    // The span and the step as magnitudes in uint64 (exact for any int64 pair).
    uint64_t span = 0, step = 0;
    if (d > 0 && l > s) {
      span = uint64_t(l) - uint64_t(s);
      step = uint64_t(d);
    } else if (d < 0 && s > l) {
      span = uint64_t(s) - uint64_t(l);
      step = uint64_t(0) - uint64_t(d);
    }
    uint64_t count = step ? span / step + (span % step != 0) : 0;
    if (count > (uint64_t(1) << 40)) return ctx.error("too many elements");
    n = int64_t(count);
  } else {
    auto start = scalar_as_double(*start_t, "start");
    auto limit = scalar_as_double(*limit_t, "limit");
    auto delta = scalar_as_double(*delta_t, "delta");
    for (const auto* r : {&start, &limit, &delta}) {
      if (!r->ok()) return ctx.error(r->status().message());
    }
    if (*delta == 0) return ctx.error("delta must not be 0");
    double count = std::ceil((*limit - *start) / *delta);
    if (!(count >= 0)) count = 0;
    if (count > double(int64_t(1) << 40)) return ctx.error("too many elements");
    n = int64_t(count);
  }
  ctx.set_output(0, dt, {n});
  std::unique_ptr<Kernel> k;
  dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The values were known at plan time (pinned or constant): recomputed
    // from the inputs, which hold the same bytes.
    k = std::make_unique<FnKernel>([n](const KernelIO& io) {
      T s = *static_cast<const T*>(io.in[0]), d = *static_cast<const T*>(io.in[2]);
      T* o = static_cast<T*>(io.out[0]);
      if constexpr (std::is_integral_v<T>) {
        // Modular uint64 arithmetic: start + i * delta is in range, the
        // product alone may not be.
        for (int64_t i = 0; i < n; ++i)
          o[i] = T(uint64_t(int64_t(s)) + uint64_t(i) * uint64_t(int64_t(d)));
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = T(s + T(i) * d);
      }
    });
  });
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
