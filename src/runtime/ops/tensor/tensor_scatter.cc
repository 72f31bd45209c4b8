// TensorScatter (opset 24): present = past_cache with `update` written along the
// sequence axis at write_indices[b] (0 when absent) for each batch entry b;
// mode "linear" needs write_indices[b] + sequence_length <= max_sequence_length,
// "circular" wraps the index modulo max_sequence_length.
#include <cstring>
#include <string>

#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_tensor_scatter(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* past, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* upd, ctx.require_input(1));
  if (ctx.opset() < 24) return ctx.error("TensorScatter is an operator of opset 24 and later");
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, past->dtype));
  int64_t axis = ctx.attr_int("axis", -2);
  const std::string mode = ctx.attr_string("mode", "linear");
  OP_RETURN_IF_ERROR(ctx.attr_status());
  if (mode != "linear" && mode != "circular")
    return ctx.error("mode '" + mode + "' must be linear or circular");
  if (upd->dtype != past->dtype)
    return ctx.error("update is " + dtype_name(upd->dtype) + ", past_cache " +
                     dtype_name(past->dtype));
  const Shape &ps = past->shape, &us = upd->shape;
  const int64_t rank = int64_t(ps.size());
  if (axis < 0) axis += rank;
  if (rank < 2 || axis <= 0 || axis >= rank)
    return ctx.error("axis " + std::to_string(ctx.attr_int("axis", -2)) + " of past_cache " +
                     shape_string(ps) + " must name a dimension other than the batch (0)");
  bool same = us.size() == ps.size();
  for (size_t d = 0; same && d < ps.size(); ++d)
    same = int64_t(d) == axis ? us[d] <= ps[d] : us[d] == ps[d];
  if (!same)
    return ctx.error("update " + shape_string(us) + " must be past_cache " + shape_string(ps) +
                     " with at most " + std::to_string(ps[size_t(axis)]) + " rows along axis " +
                     std::to_string(axis));
  const int64_t B = ps[0];
  const bool has_idx = ctx.has_input(2);
  if (has_idx) {
    const ValueDesc& w = ctx.input(2);
    if (w.dtype != kInt64 || w.shape != Shape{B})
      return ctx.error("write_indices " + dtype_name(w.dtype) + " " + shape_string(w.shape) +
                       " must be int64 [batch] = [" + std::to_string(B) + "]");
  }
  ctx.set_output(0, past->dtype, ps);
  const int64_t M = ps[size_t(axis)], L = us[size_t(axis)];
  const int64_t per_batch = dims_product(ps, 1, size_t(axis));  // prefixes per batch entry
  const size_t row =
      size_t(dims_product(ps, size_t(axis) + 1, ps.size())) * dtype_size(past->dtype);
  const size_t total = size_t(shape_numel(past->shape)) * dtype_size(past->dtype);
  const bool circular = mode == "circular";
  const std::string where = ctx.where();
  return std::unique_ptr<Kernel>(new FnKernel(
      [=](const KernelIO& io) {
        const auto* p = static_cast<const uint8_t*>(io.in[0]);
        const auto* u = static_cast<const uint8_t*>(io.in[1]);
        const int64_t* w = has_idx ? static_cast<const int64_t*>(io.in[2]) : nullptr;
        auto* o = static_cast<uint8_t*>(io.out[0]);
        for (int64_t b = 0; w != nullptr && b < B; ++b) {
          if (!circular && (w[b] < 0 || w[b] > M - L)) {
            report_failure(
                io, invalid_argument(where + ": write_indices[" + std::to_string(b) +
                                     "] = " + std::to_string(w[b]) + " with " + std::to_string(L) +
                                     " update rows is outside [0, max_sequence_length " +
                                     std::to_string(M) + " - " + std::to_string(L) +
                                     "] (mode linear)"));
            return;
          }
        }
        if (o != p && total > 0) std::memmove(o, p, total);
        if (row == 0 || L == 0) return;
        for (int64_t b = 0; b < B; ++b) {
          int64_t start = w ? w[b] : 0;
          if (circular) start = ((start % M) + M) % M;  // M >= L > 0 here
          for (int64_t q = 0; q < per_batch; ++q) {
            const int64_t prefix = b * per_batch + q;
            for (int64_t s = 0; s < L; ++s) {
              const int64_t t = circular ? (start + s) % M : start + s;
              std::memcpy(o + size_t(prefix * M + t) * row, u + size_t(prefix * L + s) * row, row);
            }
          }
        }
      },
      FnKernel::ChecksInputValues{}));
}

}  // namespace onnx_prepack::runtime::tensor_family
