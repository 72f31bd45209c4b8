// Range: start, start + delta, ... up to limit (exclusive). The element count
// depends on the values, so they must be known at plan time.
#include <cmath>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_range(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const Tensor* start_t, value_for_shape(ctx, 0, "start"));
  OP_ASSIGN_OR_RETURN(const Tensor* limit_t, value_for_shape(ctx, 1, "limit"));
  OP_ASSIGN_OR_RETURN(const Tensor* delta_t, value_for_shape(ctx, 2, "delta"));
  int32_t dt = start_t->dtype;
  if (limit_t->dtype != dt || delta_t->dtype != dt)
    return ctx.error("start, limit and delta must have one type");
  if (dt != kFloat && dt != kDouble && dt != kInt16 && dt != kInt32 && dt != kInt64)
    return ctx.error("type " + dtype_name(dt) + " is not supported");
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
  int64_t n = int64_t(count);
  ctx.set_output(0, dt, {n});
  std::unique_ptr<Kernel> k;
  dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The values were known at plan time (pinned or constant): recomputed
    // from the inputs, which hold the same bytes.
    k = std::make_unique<FnKernel>([n](const KernelIO& io) {
      T s = *static_cast<const T*>(io.in[0]), d = *static_cast<const T*>(io.in[2]);
      T* o = static_cast<T*>(io.out[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = T(s + T(i) * d);
    });
  });
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
