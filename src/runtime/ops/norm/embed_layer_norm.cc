// com.microsoft EmbedLayerNormalization (BERT's embeddings), as ONNX Runtime's CPU kernel:
// per token, word_embedding[input_ids] + position_embedding[position] (+
// segment_embedding[segment_ids]) in that order, in float, then LayerNormalization over the
// hidden axis with gamma and beta (norm_rows.h). The position is the token's index in its
// sequence, or position_ids[b or 0, s]. mask_index[b] is the number of mask[b, :] equal to 1
// (0 without mask); embedding_sum (output 2) the sums before normalization. Indices out of
// range fail the run with the value named.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/norm/norm_ops.h"
#include "runtime/ops/norm/norm_rows.h"

namespace onnx_prepack::runtime {

Result<std::unique_ptr<Kernel>> build_embed_layer_norm(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* ids, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* word, ctx.require_input(2));
  OP_ASSIGN_OR_RETURN(const ValueDesc* pos, ctx.require_input(3));
  OP_ASSIGN_OR_RETURN(const ValueDesc* gamma, ctx.require_input(5));
  OP_ASSIGN_OR_RETURN(const ValueDesc* beta, ctx.require_input(6));
  if (ctx.input_count() > 9)
    return ctx.error(std::to_string(ctx.input_count()) + " inputs, at most 9");
  const bool has_seg_ids = ctx.has_input(1), has_seg = ctx.has_input(4);
  if (has_seg_ids != has_seg)
    return ctx.error("segment_ids and segment_embedding must be given together");
  const bool has_mask = ctx.has_input(7), has_pos_ids = ctx.has_input(8);
  if (ids->dtype != kInt32)
    return ctx.error("input_ids must be int32, got " + dtype_name(ids->dtype));
  if (ids->shape.size() != 2)
    return ctx.error("input_ids must be [batch, sequence], got " + shape_string(ids->shape));
  const int64_t batch = ids->shape[0], seq = ids->shape[1];
  if (word->dtype != kFloat)
    return ctx.error("word_embedding must be float, got " + dtype_name(word->dtype));
  if (word->shape.size() != 2)
    return ctx.error("word_embedding must be 2-D, got " + shape_string(word->shape));
  const int64_t hidden = word->shape[1];
  const auto table = [&](const ValueDesc& v, const char* what) -> Status {
    if (v.dtype != kFloat)
      return ctx.error(std::string(what) + " must be float, got " + dtype_name(v.dtype));
    if (v.shape.size() != 2 || v.shape[1] != hidden)
      return ctx.error(std::string(what) + " " + shape_string(v.shape) + " must be [n, " +
                       std::to_string(hidden) + "] (word_embedding's hidden size)");
    return ok_status();
  };
  OP_RETURN_IF_ERROR(table(*pos, "position_embedding"));
  if (has_seg) OP_RETURN_IF_ERROR(table(ctx.input(4), "segment_embedding"));
  const auto vec = [&](const ValueDesc& v, const char* what) -> Status {
    if (v.dtype != kFloat)
      return ctx.error(std::string(what) + " must be float, got " + dtype_name(v.dtype));
    if (v.shape.size() != 1 || v.shape[0] != hidden)
      return ctx.error(std::string(what) + " " + shape_string(v.shape) + " must be [" +
                       std::to_string(hidden) + "] (the hidden size)");
    return ok_status();
  };
  OP_RETURN_IF_ERROR(vec(*gamma, "gamma"));
  OP_RETURN_IF_ERROR(vec(*beta, "beta"));
  const auto ids_like = [&](int i, const char* what, bool batch_one) -> Status {
    const ValueDesc& v = ctx.input(i);
    if (v.dtype != kInt32)
      return ctx.error(std::string(what) + " must be int32, got " + dtype_name(v.dtype));
    const bool ok = v.shape.size() == 2 && v.shape[1] == seq &&
                    (v.shape[0] == batch || (batch_one && v.shape[0] == 1));
    if (!ok)
      return ctx.error(std::string(what) + " " + shape_string(v.shape) + " must be " +
                       shape_string(ids->shape) + (batch_one ? " or [1, sequence]" : "") +
                       " (input_ids' shape)");
    return ok_status();
  };
  if (has_seg_ids) OP_RETURN_IF_ERROR(ids_like(1, "segment_ids", false));
  if (has_mask) OP_RETURN_IF_ERROR(ids_like(7, "mask", false));
  if (has_pos_ids) OP_RETURN_IF_ERROR(ids_like(8, "position_ids", true));
  const float eps = ctx.attr_float("epsilon", 1e-12f);
  if (!(eps >= 0.0f)) return ctx.error("epsilon " + std::to_string(eps) + " must be >= 0");
  if (ctx.output_count() < 2 || ctx.output_count() > 3)
    return ctx.error(
        std::to_string(ctx.output_count()) +
        " outputs, EmbedLayerNormalization has 2 or 3 (output, mask_index, embedding_sum)");
  const Shape out_shape{batch, seq, hidden};
  OP_ASSIGN_OR_RETURN(int64_t out_n, checked_product(out_shape, "output"));
  (void)out_n;
  ctx.set_output(0, kFloat, out_shape);
  ctx.set_output(1, kInt32, Shape{batch});
  if (ctx.output_count() > 2) ctx.set_output(2, kFloat, out_shape);
  const int64_t n_word = word->shape[0], n_pos = pos->shape[0];
  const int64_t n_seg = has_seg ? ctx.input(4).shape[0] : 0;
  const int64_t pos_rows = has_pos_ids ? ctx.input(8).shape[0] : 0;
  const std::string where = ctx.where();
  return std::unique_ptr<Kernel>(new FnKernel(
      [=](const KernelIO& io) {
        const int64_t tokens = batch * seq;
        const int32_t* id = static_cast<const int32_t*>(io.in[0]);
        const int32_t* sid = has_seg ? static_cast<const int32_t*>(io.in[1]) : nullptr;
        const int32_t* pid = has_pos_ids ? static_cast<const int32_t*>(io.in[8]) : nullptr;
        auto position = [&](int64_t t) -> int64_t {
          const int64_t s = t % seq;
          return pid ? pid[(pos_rows == 1 ? 0 : t / seq) * seq + s] : s;
        };
        auto fail = [&](const char* what, int64_t v, int64_t n) {
          report_failure(io, invalid_argument(where + ": " + what + " " + std::to_string(v) +
                                              " is out of range [0, " + std::to_string(n) + ")"));
        };
        for (int64_t t = 0; t < tokens; ++t) {
          if (id[t] < 0 || id[t] >= n_word) return fail("input_ids value", id[t], n_word);
          if (sid && (sid[t] < 0 || sid[t] >= n_seg))
            return fail("segment_ids value", sid[t], n_seg);
          const int64_t p = position(t);
          if (p < 0 || p >= n_pos)
            return fail(pid ? "position_ids value" : "position (sequence index)", p, n_pos);
        }
        const float* we = static_cast<const float*>(io.in[2]);
        const float* pe = static_cast<const float*>(io.in[3]);
        const float* se = has_seg ? static_cast<const float*>(io.in[4]) : nullptr;
        const float* g = static_cast<const float*>(io.in[5]);
        const float* b = static_cast<const float*>(io.in[6]);
        float* out = static_cast<float*>(io.out[0]);
        float* sum_out = io.out.size() > 2 ? static_cast<float*>(io.out[2]) : nullptr;
        parallel_range(io.pool, tokens, std::max<int64_t>(1, 8192 / std::max<int64_t>(hidden, 1)),
                       [&](int64_t t0, int64_t t1) {
                         float* s = (sum_out ? sum_out : out) + t0 * hidden;
                         for (int64_t t = t0; t < t1; ++t) {
                           const float* w = we + int64_t(id[t]) * hidden;
                           const float* p = pe + position(t) * hidden;
                           float* sr = s + (t - t0) * hidden;
                           for (int64_t j = 0; j < hidden; ++j) sr[j] = w[j] + p[j];
                           if (se) {
                             const float* e = se + int64_t(sid[t]) * hidden;
                             for (int64_t j = 0; j < hidden; ++j) sr[j] += e[j];
                           }
                         }
                         norm::normalize_rows(s, g, b, out + t0 * hidden, nullptr, nullptr,
                                              size_t(t1 - t0), size_t(hidden), eps, false);
                       });
        int32_t* mask_index = static_cast<int32_t*>(io.out[1]);
        const int32_t* mask = has_mask ? static_cast<const int32_t*>(io.in[7]) : nullptr;
        for (int64_t bi = 0; bi < batch; ++bi) {
          int32_t c = 0;
          if (mask)
            for (int64_t s = 0; s < seq; ++s) c += mask[bi * seq + s] == 1 ? 1 : 0;
          mask_index[bi] = c;
        }
      },
      FnKernel::ChecksInputValues{}));
}

}  // namespace onnx_prepack::runtime
