// RotaryEmbedding: com.microsoft (input, position_ids, cos_cache, sin_cache)
// and ONNX opset 23 (X, cos_cache, sin_cache, position_ids?). Both rotate the
// first rotary_embedding_dim values of every head (rotary.h); a 3-D input is
// [batch, seq, heads * head_size], a 4-D one [batch, heads, seq, head_size].
#include <string>

#include "runtime/kernel.h"
#include "runtime/ops/attention/attention_ops.h"
#include "runtime/ops/attention/rotary.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {
namespace {

// Where the angles of (batch b, position s) come from.
enum class PosMode {
  kOffset,   // com.microsoft position_ids of one element: row position_ids[0] + s
  kIds,      // position_ids [batch, seq]: row position_ids[b, s]
  kPerToken  // ONNX without position_ids: cos_cache [batch, seq, rot / 2], row (b, s)
};

struct RotaryPlan {
  int64_t batch, seq, heads, head_size, rot;
  bool bnsh, interleaved;
  PosMode pos;
  int64_t cache_rows;  // rows of cos_cache / sin_cache (kOffset, kIds)
  int cos_input, sin_input, pos_input;
  std::string where;
};

std::unique_ptr<Kernel> rotary_kernel(RotaryPlan p) {
  return std::unique_ptr<Kernel>(new FnKernel(
      [p = std::move(p)](const KernelIO& io) {
        const float* x = static_cast<const float*>(io.in[0]);
        const float* cs = static_cast<const float*>(io.in[size_t(p.cos_input)]);
        const float* sn = static_cast<const float*>(io.in[size_t(p.sin_input)]);
        const int64_t* ids = p.pos == PosMode::kPerToken
                                 ? nullptr
                                 : static_cast<const int64_t*>(io.in[size_t(p.pos_input)]);
        float* y = static_cast<float*>(io.out[0]);
        const int64_t half = p.rot / 2;
        // Every row index first: a bad position fails the run before any write.
        if (p.pos != PosMode::kPerToken) {
          for (int64_t b = 0; b < (p.pos == PosMode::kIds ? p.batch : 1); ++b) {
            for (int64_t s = 0; s < (p.pos == PosMode::kIds ? p.seq : 1); ++s) {
              const int64_t v = ids[p.pos == PosMode::kIds ? b * p.seq + s : 0];
              const int64_t last =
                  p.pos == PosMode::kIds ? v : (v < 0 ? v : saturating_add(v, p.seq - 1));
              if (v < 0 || last >= p.cache_rows) {
                report_failure(
                    io, invalid_argument(
                            p.where + ": position id " + std::to_string(last) +
                            (p.pos == PosMode::kOffset && v >= 0
                                 ? " (offset " + std::to_string(v) + " + sequence length - 1)"
                                 : std::string()) +
                            " at batch " + std::to_string(b) + " is outside the " +
                            std::to_string(p.cache_rows) + " rows of cos_cache / sin_cache"));
                return;
              }
            }
          }
        }
        // One task per (batch, position): every head of it.
        parallel_range(
            io.pool, p.batch * p.seq, std::max<int64_t>(1, 4096 / (p.heads * p.head_size + 1)),
            [&](int64_t r0, int64_t r1) {
              for (int64_t r = r0; r < r1; ++r) {
                const int64_t b = r / p.seq, s = r % p.seq;
                int64_t row = r;  // kPerToken
                if (p.pos == PosMode::kIds) row = ids[r];
                if (p.pos == PosMode::kOffset) row = ids[0] + s;
                const float* c = cs + row * half;
                const float* si = sn + row * half;
                for (int64_t n = 0; n < p.heads; ++n) {
                  const int64_t off = p.bnsh ? ((b * p.heads + n) * p.seq + s) * p.head_size
                                             : ((b * p.seq + s) * p.heads + n) * p.head_size;
                  attention::rotate_head(x + off, y + off, p.head_size, p.rot, c, si,
                                         p.interleaved);
                }
              }
            });
      },
      FnKernel::ChecksInputValues{}));
}

// The geometry shared by both domains: batch, seq, heads, head_size from X
// (3-D needs heads or, for com.microsoft, the cache width), rot from the
// attribute or the head size.
Status plan_geometry(BuildContext& ctx, const ValueDesc& x, int64_t num_heads, int64_t rot_attr,
                     int64_t cache_half, bool ms, RotaryPlan& p) {
  const Shape& xs = x.shape;
  if (xs.size() != 3 && xs.size() != 4)
    return ctx.error(
        "input must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head_size], got " +
        shape_string(xs));
  if (num_heads < 0) return ctx.error("num_heads must be >= 0, got " + std::to_string(num_heads));
  if (rot_attr < 0)
    return ctx.error("rotary_embedding_dim must be >= 0, got " + std::to_string(rot_attr));
  p.batch = xs[0];
  p.bnsh = xs.size() == 4;
  if (p.bnsh) {
    p.heads = xs[1];
    p.seq = xs[2];
    p.head_size = xs[3];
    if (num_heads > 0 && num_heads != p.heads)
      return ctx.error("num_heads " + std::to_string(num_heads) +
                       " differs from the input's heads dimension " + std::to_string(p.heads));
  } else {
    p.seq = xs[1];
    const int64_t hidden = xs[2];
    if (num_heads > 0) {
      p.head_size = hidden / num_heads;
    } else if (ms && rot_attr == 0) {
      p.head_size = cache_half * 2;  // com.microsoft: the head is as wide as the cache
    } else {
      return ctx.error("a 3-D input needs the num_heads attribute");
    }
    if (p.head_size <= 0 || hidden % p.head_size != 0 || (num_heads > 0 && hidden % num_heads != 0))
      return ctx.error("hidden size " + std::to_string(hidden) + " is not a multiple of " +
                       (num_heads > 0 ? "num_heads " + std::to_string(num_heads)
                                      : "the head size " + std::to_string(p.head_size)));
    p.heads = hidden / p.head_size;
  }
  p.rot = rot_attr > 0 ? rot_attr : p.head_size;
  if (p.rot > p.head_size || p.rot % 2 != 0)
    return ctx.error("rotary_embedding_dim " + std::to_string(p.rot) +
                     " must be even and <= head_size " + std::to_string(p.head_size));
  if (cache_half != p.rot / 2)
    return ctx.error("cos_cache / sin_cache have " + std::to_string(cache_half) +
                     " values per row; the rotary dimension " + std::to_string(p.rot) + " needs " +
                     std::to_string(p.rot / 2));
  return ok_status();
}

Status check_caches(BuildContext& ctx, int ci, int si, int rank) {
  const ValueDesc& c = ctx.input(ci);
  const ValueDesc& s = ctx.input(si);
  if (c.dtype != kFloat || s.dtype != kFloat)
    return ctx.error("cos_cache and sin_cache must be float");
  if (int(c.shape.size()) != rank || c.shape != s.shape)
    return ctx.error("cos_cache " + shape_string(c.shape) + " and sin_cache " +
                     shape_string(s.shape) + " must have the same " + std::to_string(rank) +
                     "-D shape");
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_rotary_embedding_ms(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* ids, ctx.require_input(1));
  OP_RETURN_IF_ERROR(ctx.require_input(2).status());
  OP_RETURN_IF_ERROR(ctx.require_input(3).status());
  if (x->dtype != kFloat) return ctx.error("only float input is supported");
  if (ids->dtype != kInt64) return ctx.error("position_ids must be int64");
  OP_RETURN_IF_ERROR(check_caches(ctx, 2, 3, 2));
  if (ctx.attr_int("is_packed_batching", 0) != 0)
    return ctx.error("is_packed_batching = 1 (packed batches) is not supported");
  RotaryPlan p{};
  p.interleaved = ctx.attr_int("interleaved", 0) != 0;
  const Shape& cs = ctx.input(2).shape;
  OP_RETURN_IF_ERROR(plan_geometry(ctx, *x, ctx.attr_int("num_heads", 0),
                                   ctx.attr_int("rotary_embedding_dim", 0), cs[1], true, p));
  OP_RETURN_IF_ERROR(ctx.attr_status());
  const int64_t nids = shape_numel(ids->shape);
  if (nids == 1 && ids->shape.size() <= 1) {
    p.pos = PosMode::kOffset;
  } else if (ids->shape == Shape{p.batch, p.seq}) {
    p.pos = PosMode::kIds;
  } else {
    return ctx.error("position_ids " + shape_string(ids->shape) +
                     " must have one element or be [batch, seq] " +
                     shape_string(Shape{p.batch, p.seq}));
  }
  p.cache_rows = cs[0];
  p.cos_input = 2;
  p.sin_input = 3;
  p.pos_input = 1;
  p.where = ctx.where();
  ctx.set_output(0, kFloat, x->shape);
  return rotary_kernel(std::move(p));
}

Result<std::unique_ptr<Kernel>> build_rotary_embedding(BuildContext& ctx) {
  if (ctx.opset() < 23) return ctx.error("RotaryEmbedding is an operator of opset 23 and later");
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(ctx.require_input(1).status());
  OP_RETURN_IF_ERROR(ctx.require_input(2).status());
  if (x->dtype != kFloat) return ctx.error("only float input is supported");
  const bool has_ids = ctx.has_input(3);
  OP_RETURN_IF_ERROR(check_caches(ctx, 1, 2, has_ids ? 2 : 3));
  RotaryPlan p{};
  p.interleaved = ctx.attr_int("interleaved", 0) != 0;
  const Shape& cs = ctx.input(1).shape;
  OP_RETURN_IF_ERROR(plan_geometry(ctx, *x, ctx.attr_int("num_heads", 0),
                                   ctx.attr_int("rotary_embedding_dim", 0), cs.back(), false, p));
  OP_RETURN_IF_ERROR(ctx.attr_status());
  if (has_ids) {
    const ValueDesc& ids = ctx.input(3);
    if (ids.dtype != kInt64) return ctx.error("position_ids must be int64");
    if (ids.shape != Shape{p.batch, p.seq})
      return ctx.error("position_ids " + shape_string(ids.shape) + " must be [batch, seq] " +
                       shape_string(Shape{p.batch, p.seq}));
    p.pos = PosMode::kIds;
    p.cache_rows = cs[0];
  } else {
    if (cs[0] != p.batch || cs[1] != p.seq)
      return ctx.error("without position_ids, cos_cache " + shape_string(cs) +
                       " must be [batch, seq, " + std::to_string(p.rot / 2) + "] with batch " +
                       std::to_string(p.batch) + ", seq " + std::to_string(p.seq));
    p.pos = PosMode::kPerToken;
  }
  p.cos_input = 1;
  p.sin_input = 2;
  p.pos_input = 3;
  p.where = ctx.where();
  ctx.set_output(0, kFloat, x->shape);
  return rotary_kernel(std::move(p));
}

}  // namespace onnx_prepack::runtime
