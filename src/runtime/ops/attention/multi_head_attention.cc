// com.microsoft::MultiHeadAttention with ONNX Runtime's CPU semantics
// (docs/llm.md): query [B, S, N*H]; key / value [B, L, N*H] / [B, L, N*Hv]
// (after the past when one is given: present = past ++ new) or, for cross
// attention, [B, N, L, H] used as they are; bias [N*H + N*H + N*Hv] added to
// Q, K and V; key_padding_mask int32 [B] (key lengths), [B, T] or [B, S, T]
// (0 masks); attention_bias [B|1, N|1, S, T]; unidirectional (causal).
// Masks add mask_filter_value (default -10000), as ONNX Runtime does, after
// the scale; attention_bias is added after them.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/attention/attention_core.h"
#include "runtime/ops/attention/attention_ops.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/linalg/gemm.h"

namespace onnx_prepack::runtime {
namespace {

struct MhaPlan {
  int64_t B, N, S, L, P, T, H, Hv;
  bool kv_bnsh;  // key / value [B, N, L, H]: used as they are
  bool has_bias, has_past, causal;
  // key_padding_mask: 0 none, 1 [B] (key lengths), 2 [B, T], 3 [B, S, T], 4 [2B] (ends, then
  // starts: com.microsoft::Attention's mask_index)
  int mask_rank = 0;
  bool has_attn_bias = false;
  int64_t ab_sb = 0, ab_sn = 0;  // attention_bias strides over batch and heads (0: broadcast)
  float scale, filter;
  std::string where;
};

class MhaKernel final : public Kernel {
 public:
  explicit MhaKernel(MhaPlan p) : p_(std::move(p)) {}
  bool checks_input_values() const override { return p_.mask_rank == 1 || p_.mask_rank == 4; }
  void run(const KernelIO& io) const override {
    const MhaPlan& p = p_;
    const int64_t B = p.B, N = p.N, S = p.S, L = p.L, P = p.P, T = p.T, H = p.H, Hv = p.Hv;
    const float* Q = static_cast<const float*>(io.in[0]);
    const float* K = static_cast<const float*>(io.in[1]);
    const float* V = static_cast<const float*>(io.in[2]);
    const float* bias = p.has_bias ? static_cast<const float*>(io.in[3]) : nullptr;
    const int32_t* kpm = p.mask_rank ? static_cast<const int32_t*>(io.in[4]) : nullptr;
    const float* ab = p.has_attn_bias ? static_cast<const float*>(io.in[5]) : nullptr;
    const float* pk = p.has_past ? static_cast<const float*>(io.in[6]) : nullptr;
    const float* pv = p.has_past ? static_cast<const float*>(io.in[7]) : nullptr;
    if (p.mask_rank == 1 || p.mask_rank == 4) {
      for (int64_t e = 0; e < (p.mask_rank == 4 ? 2 * B : B); ++e) {
        if (kpm[e] < 0 || kpm[e] > T) {
          report_failure(
              io, invalid_argument(p.where + ": mask[" + std::to_string(e) +
                                   "] = " + std::to_string(kpm[e]) +
                                   " is not a key position in [0, " + std::to_string(T) + "]"));
          return;
        }
      }
    }
    float* Y = static_cast<float*>(io.out[0]);
    std::vector<float> own_k, own_v;
    float* ok = io.out.size() > 1 && io.out[1] ? static_cast<float*>(io.out[1]) : nullptr;
    float* ov = io.out.size() > 2 && io.out[2] ? static_cast<float*>(io.out[2]) : nullptr;
    if (!ok) {
      own_k.resize(size_t(B * N * T * H));  // dims-lint: ok (inputs' dims)
      ok = own_k.data();
    }
    if (!ov) {
      own_v.resize(size_t(B * N * T * Hv));  // dims-lint: ok (inputs' dims)
      ov = own_v.data();
    }
    // present [B, N, T, *]: the past, then the new rows with their bias.
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t n = 0; n < N; ++n) {
        const int64_t i = b * N + n;
        if (P > 0) {
          std::memcpy(ok + i * T * H, pk + i * P * H, size_t(P * H) * sizeof(float));
          std::memcpy(ov + i * T * Hv, pv + i * P * Hv, size_t(P * Hv) * sizeof(float));
        }
        for (int64_t s = 0; s < L; ++s) {
          const float* kr = p.kv_bnsh ? K + (i * L + s) * H : K + (b * L + s) * N * H + n * H;
          const float* vr = p.kv_bnsh ? V + (i * L + s) * Hv : V + (b * L + s) * N * Hv + n * Hv;
          float* kd = ok + (i * T + P + s) * H;
          float* vd = ov + (i * T + P + s) * Hv;
          for (int64_t j = 0; j < H; ++j) kd[j] = bias ? kr[j] + bias[N * H + n * H + j] : kr[j];
          for (int64_t j = 0; j < Hv; ++j)
            vd[j] = bias ? vr[j] + bias[2 * N * H + n * Hv + j] : vr[j];
        }
      }
    }
    parallel_range(io.pool, B * N, 1, [&](int64_t i0, int64_t i1) {
      std::vector<float> scratch, qb, mask(size_t(S * T));
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / N, n = i % N;
        const float* q = Q + b * S * N * H + n * H;
        int64_t q_ld = N * H;
        if (bias) {
          qb.resize(size_t(S * H));
          for (int64_t s = 0; s < S; ++s)
            for (int64_t j = 0; j < H; ++j)
              qb[size_t(s * H + j)] = q[s * q_ld + j] + bias[n * H + j];
          q = qb.data();
          q_ld = H;
        }
        // The additive mask of this (batch, head): padding, causal, attention_bias.
        const bool any = p.mask_rank || p.causal || ab;
        if (any) {
          for (int64_t s = 0; s < S; ++s) {
            for (int64_t t = 0; t < T; ++t) {
              float m = 0.0f;
              if ((p.mask_rank == 1 || p.mask_rank == 4) && t >= kpm[b]) m = p.filter;
              if (p.mask_rank == 4 && t < kpm[B + b]) m = p.filter;
              if (p.mask_rank == 2 && kpm[b * T + t] == 0) m = p.filter;
              if (p.mask_rank == 3 && kpm[(b * S + s) * T + t] == 0) m = p.filter;
              if (p.causal && t > P + s) m += p.filter;
              if (ab) m += ab[b * p.ab_sb + n * p.ab_sn + s * T + t];
              mask[size_t(s * T + t)] = m;
            }
          }
        }
        attention::HeadParams hp;
        hp.rows = S;
        hp.head_size = H;
        hp.v_size = Hv;
        hp.keys = T;
        hp.scale = p.scale;
        scratch.resize(size_t(attention::head_scratch_floats(hp)));
        attention::attend_head(hp, q, q_ld, ok + i * T * H, H, ov + i * T * Hv, Hv,
                               any ? mask.data() : nullptr, T, Y + b * S * N * Hv + n * Hv, N * Hv,
                               scratch.data());
      }
    });
  }

 private:
  MhaPlan p_;
};

// com.microsoft::Attention: the packed projection input x weights + bias, then
// MultiHeadAttention's kernel on the projected Q, K, V (BSNH) with the combined past
// [2, B, N, P, H] and present [2, B, N, T, H] split in halves.
class BertAttentionKernel final : public Kernel {
 public:
  BertAttentionKernel(MhaPlan p, int64_t in_hidden, bool has_bias)
      : mha_(p), p_(std::move(p)), in_(in_hidden), bias_(has_bias) {}
  bool checks_input_values() const override { return mha_.checks_input_values(); }
  void run(const KernelIO& io) const override {
    const MhaPlan& p = p_;
    const int64_t rows = p.B * p.S, dq = p.N * p.H, dv = p.N * p.Hv, width = 2 * dq + dv;
    std::vector<float> qkv(size_t(rows * width)), q(size_t(rows * dq)), k(size_t(rows * dq)),
        v(size_t(rows * dv));
    gemm_f32(size_t(rows), size_t(width), size_t(in_), static_cast<const float*>(io.in[0]),
             size_t(in_), static_cast<const float*>(io.in[1]), kernels::PackSourceLayout::kKN,
             qkv.data(), size_t(width), false, nullptr, 0, io.pool);
    const float* bias = bias_ ? static_cast<const float*>(io.in[2]) : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = qkv.data() + r * width;
      for (int64_t j = 0; j < dq; ++j) {
        q[size_t(r * dq + j)] = row[j] + (bias ? bias[j] : 0.0f);
        k[size_t(r * dq + j)] = row[dq + j] + (bias ? bias[dq + j] : 0.0f);
      }
      for (int64_t j = 0; j < dv; ++j)
        v[size_t(r * dv + j)] = row[2 * dq + j] + (bias ? bias[2 * dq + j] : 0.0f);
    }
    const float* past = io.in.size() > 4 ? static_cast<const float*>(io.in[4]) : nullptr;
    float* present = io.out.size() > 1 ? static_cast<float*>(io.out[1]) : nullptr;
    const int64_t past_half = p.B * p.N * p.P * p.H, present_half = p.B * p.N * p.T * p.H;
    void* in[8] = {q.data(),
                   k.data(),
                   v.data(),
                   nullptr,
                   io.in.size() > 3 ? io.in[3] : nullptr,
                   io.in.size() > 5 ? io.in[5] : nullptr,
                   past ? const_cast<float*>(past) : nullptr,
                   past ? const_cast<float*>(past + past_half) : nullptr};
    void* out[3] = {io.out[0], present, present ? present + present_half : nullptr};
    KernelIO sub = io;
    sub.in = in;
    sub.out = out;
    mha_.run(sub);
  }

 private:
  MhaKernel mha_;
  MhaPlan p_;
  int64_t in_;
  bool bias_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> build_multi_head_attention(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* q, ctx.require_input(0));
  MhaPlan p{};
  p.N = ctx.attr_int("num_heads", 0);
  p.scale = ctx.attr_float("scale", 0.0f);
  p.filter = ctx.attr_float("mask_filter_value", -10000.0f);
  p.causal = ctx.attr_int("unidirectional", 0) != 0;
  OP_RETURN_IF_ERROR(ctx.attr_status());
  if (p.N <= 0) return ctx.error("num_heads must be > 0, got " + std::to_string(p.N));
  if (!std::isfinite(p.scale) || !std::isfinite(p.filter))
    return ctx.error("scale and mask_filter_value must be finite");
  if (q->dtype != kFloat) return ctx.error("only float query is supported");
  if (q->shape.size() == 5)
    return ctx.error(
        "packed QKV [B, S, N, 3, H] is not supported (nor by ONNX Runtime's CPU kernel)");
  if (q->shape.size() != 3)
    return ctx.error("query must be 3-D [batch, seq, hidden], got " + shape_string(q->shape));
  p.B = q->shape[0];
  p.S = q->shape[1];
  if (q->shape[2] % p.N != 0)
    return ctx.error("query hidden size " + std::to_string(q->shape[2]) +
                     " is not a multiple of num_heads " + std::to_string(p.N));
  p.H = q->shape[2] / p.N;
  if (!ctx.has_input(1) || !ctx.has_input(2))
    return ctx.error("key and value are required (packed KV and packed QKV are not supported)");
  const ValueDesc& k = ctx.input(1);
  const ValueDesc& v = ctx.input(2);
  if (k.dtype != kFloat || v.dtype != kFloat) return ctx.error("key and value must be float");
  if (k.shape.size() == 5)
    return ctx.error(
        "packed KV [B, L, N, 2, H] is not supported (nor by ONNX Runtime's CPU kernel)");
  p.kv_bnsh = k.shape.size() == 4;
  if (p.kv_bnsh) {
    if (v.shape.size() != 4 || k.shape[0] != p.B || k.shape[1] != p.N || k.shape[3] != p.H ||
        v.shape[0] != p.B || v.shape[1] != p.N || v.shape[2] != k.shape[2])
      return ctx.error("4-D key " + shape_string(k.shape) + " / value " + shape_string(v.shape) +
                       " must be [batch, num_heads, kv_seq, head_size]");
    p.L = k.shape[2];
    p.Hv = v.shape[3];
  } else {
    if (k.shape.size() != 3 || v.shape.size() != 3 || k.shape[0] != p.B || v.shape[0] != p.B ||
        k.shape[2] != q->shape[2] || v.shape[1] != k.shape[1] || v.shape[2] % p.N != 0)
      return ctx.error("key " + shape_string(k.shape) + " / value " + shape_string(v.shape) +
                       " must be [batch, kv_seq, hidden] with query's hidden size for key");
    p.L = k.shape[1];
    p.Hv = v.shape[2] / p.N;
  }
  p.has_bias = ctx.has_input(3);
  if (p.has_bias) {
    if (p.kv_bnsh)
      return ctx.error("bias with 4-D key / value is not supported (nor by ONNX Runtime)");
    const ValueDesc& b = ctx.input(3);
    const int64_t want = 2 * p.N * p.H + p.N * p.Hv;  // dims-lint: ok (inputs' hidden sizes)
    if (b.dtype != kFloat || b.shape != Shape{want})
      return ctx.error("bias " + shape_string(b.shape) + " must be float [" + std::to_string(want) +
                       "]");
  }
  if (ctx.has_input(6) != ctx.has_input(7))
    return ctx.error("past_key and past_value must be both present or both absent");
  p.has_past = ctx.has_input(6);
  if (p.has_past) {
    if (p.kv_bnsh)
      return ctx.error("a past with 4-D key / value is not supported (nor by ONNX Runtime)");
    const ValueDesc& a = ctx.input(6);
    const ValueDesc& b = ctx.input(7);
    if (a.dtype != kFloat || b.dtype != kFloat || a.shape.size() != 4 || b.shape.size() != 4 ||
        a.shape[0] != p.B || a.shape[1] != p.N || a.shape[3] != p.H || b.shape[0] != p.B ||
        b.shape[1] != p.N || b.shape[2] != a.shape[2] || b.shape[3] != p.Hv)
      return ctx.error("past_key " + shape_string(a.shape) + " / past_value " +
                       shape_string(b.shape) +
                       " must be float [batch, num_heads, past, head_size]");
    p.P = a.shape[2];
  }
  OP_ASSIGN_OR_RETURN(p.T, checked_add(p.P, p.L, ctx.where() + ": past + kv sequence"));
  if (ctx.has_input(4)) {
    const ValueDesc& m = ctx.input(4);
    if (m.dtype != kInt32) return ctx.error("key_padding_mask must be int32");
    if (m.shape == Shape{p.B}) {
      p.mask_rank = 1;
    } else if (m.shape == Shape{p.B, p.T}) {
      p.mask_rank = 2;
    } else if (m.shape == Shape{p.B, p.S, p.T}) {
      p.mask_rank = 3;
    } else {
      return ctx.error("key_padding_mask " + shape_string(m.shape) + " must be [batch], [batch, " +
                       std::to_string(p.T) + "] or [batch, seq, " + std::to_string(p.T) +
                       "] (total sequence " + std::to_string(p.T) + ")");
    }
  }
  if (ctx.has_input(5)) {
    const ValueDesc& a = ctx.input(5);
    if (a.dtype != kFloat || a.shape.size() != 4 || (a.shape[0] != 1 && a.shape[0] != p.B) ||
        (a.shape[1] != 1 && a.shape[1] != p.N) || a.shape[2] != p.S || a.shape[3] != p.T)
      return ctx.error("attention_bias " + shape_string(a.shape) +
                       " must be float [batch or 1, num_heads or 1, " + std::to_string(p.S) + ", " +
                       std::to_string(p.T) + "]");
    p.has_attn_bias = true;
    p.ab_sn = a.shape[1] == 1 ? 0 : p.S * p.T;
    p.ab_sb = a.shape[0] == 1 ? 0 : a.shape[1] * p.S * p.T;
  }
  for (int i = 8; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i))
      return ctx.error("input " + std::to_string(i) +
                       " (past_sequence_length / cache_indirection, beam search) is not supported");
  }
  if (ctx.output_count() > 3) return ctx.error("output_qk (output 3) is not supported");
  if (p.scale == 0.0f) p.scale = 1.0f / std::sqrt(float(p.H));
  p.where = ctx.where();
  ctx.set_output(0, kFloat, {p.B, p.S, p.N * p.Hv});  // dims-lint: ok (value's hidden size)
  const Shape pk{p.B, p.N, p.T, p.H}, pv{p.B, p.N, p.T, p.Hv};
  if (!checked_product(pk) || !checked_product(pv)) return ctx.error("present is too large");
  if (ctx.output_count() > 1) ctx.set_output(1, kFloat, pk);
  if (ctx.output_count() > 2) ctx.set_output(2, kFloat, pv);
  return std::unique_ptr<Kernel>(new MhaKernel(std::move(p)));
}

}  // namespace onnx_prepack::runtime

namespace onnx_prepack::runtime {

// com.microsoft::Attention (BERT): input [B, S, In], weights [In, Dq + Dk + Dv]
// (qkv_hidden_sizes, default three equal parts), bias, mask_index (1-D [B] key
// lengths or [2B] ends then starts, 2-D [B, T], 3-D [B, S, T]), past [2, B, N, P, H],
// attention_bias; unidirectional, scale, mask_filter_value. Output [B, S, Dv],
// present [2, B, N, T, H].
Result<std::unique_ptr<Kernel>> build_attention_ms(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* w, ctx.require_input(1));
  MhaPlan p{};
  p.N = ctx.attr_int("num_heads", 0);
  p.scale = ctx.attr_float("scale", 0.0f);
  p.filter = ctx.attr_float("mask_filter_value", -10000.0f);
  p.causal = ctx.attr_int("unidirectional", 0) != 0;
  const auto sizes = ctx.attr_ints("qkv_hidden_sizes");
  const bool share = ctx.attr_int("past_present_share_buffer", 0) != 0;
  const bool rotary = ctx.attr_int("do_rotary", 0) != 0;
  OP_RETURN_IF_ERROR(ctx.attr_status());
  if (share) return ctx.error("past_present_share_buffer = 1 is not supported");
  if (rotary) return ctx.error("do_rotary = 1 is not supported");
  if (p.N <= 0) return ctx.error("num_heads must be > 0, got " + std::to_string(p.N));
  if (!std::isfinite(p.scale) || !std::isfinite(p.filter))
    return ctx.error("scale and mask_filter_value must be finite");
  if (x->dtype != kFloat || w->dtype != kFloat)
    return ctx.error("only float input and weights are supported");
  if (x->shape.size() != 3)
    return ctx.error("input must be 3-D [batch, seq, input_hidden], got " + shape_string(x->shape));
  if (w->shape.size() != 2 || w->shape[0] != x->shape[2])
    return ctx.error("weights " + shape_string(w->shape) + " must be [input_hidden " +
                     std::to_string(x->shape[2]) + ", q + k + v hidden]");
  int64_t dq = 0, dk = 0, dv = 0;
  if (sizes) {
    if (sizes->size() != 3) return ctx.error("qkv_hidden_sizes must have 3 values");
    dq = (*sizes)[0];
    dk = (*sizes)[1];
    dv = (*sizes)[2];
  } else {
    if (w->shape[1] % 3 != 0)
      return ctx.error("weights' width " + std::to_string(w->shape[1]) + " is not 3 equal parts");
    dq = dk = dv = w->shape[1] / 3;
  }
  const int64_t width = w->shape[1];
  if (dq <= 0 || dk != dq || dv <= 0 || dq % p.N != 0 || dv % p.N != 0 || dq > width ||
      dv > width || dq + dk + dv != width)
    return ctx.error("qkv_hidden_sizes (" + std::to_string(dq) + ", " + std::to_string(dk) + ", " +
                     std::to_string(dv) + ") must be positive multiples of num_heads " +
                     std::to_string(p.N) + " with q == k, summing to the weights' width " +
                     std::to_string(width));
  p.B = x->shape[0];
  p.S = x->shape[1];
  p.L = p.S;
  p.H = dq / p.N;
  p.Hv = dv / p.N;
  const bool has_bias = ctx.has_input(2);
  if (has_bias && (ctx.input(2).dtype != kFloat || ctx.input(2).shape != Shape{width}))
    return ctx.error("bias " + shape_string(ctx.input(2).shape) + " must be float [" +
                     std::to_string(width) + "]");
  p.has_bias = false;  // added after the projection
  p.has_past = ctx.has_input(4);
  if (p.has_past) {
    const ValueDesc& a = ctx.input(4);
    if (p.H != p.Hv) return ctx.error("past needs equal q and v head sizes");
    if (a.dtype != kFloat || a.shape.size() != 5 || a.shape[0] != 2 || a.shape[1] != p.B ||
        a.shape[2] != p.N || a.shape[4] != p.H)
      return ctx.error("past " + shape_string(a.shape) +
                       " must be float [2, batch, num_heads, past, head_size]");
    p.P = a.shape[3];
  }
  OP_ASSIGN_OR_RETURN(p.T, checked_add(p.P, p.L, ctx.where() + ": past + sequence"));
  if (ctx.has_input(3)) {
    const ValueDesc& m = ctx.input(3);
    if (m.dtype != kInt32) return ctx.error("mask_index must be int32");
    if (m.shape == Shape{p.B}) {
      p.mask_rank = 1;
    } else if (m.shape == Shape{2 * p.B}) {
      p.mask_rank = 4;
    } else if (m.shape == Shape{p.B, p.T}) {
      p.mask_rank = 2;
    } else if (m.shape == Shape{p.B, p.S, p.T}) {
      p.mask_rank = 3;
    } else {
      return ctx.error("mask_index " + shape_string(m.shape) +
                       " must be [batch], [2 * batch], [batch, " + std::to_string(p.T) +
                       "] or [batch, seq, " + std::to_string(p.T) +
                       "] (the 4-D Megatron form is not supported)");
    }
  }
  if (ctx.has_input(5)) {
    const ValueDesc& a = ctx.input(5);
    if (a.dtype != kFloat || a.shape.size() != 4 || (a.shape[0] != 1 && a.shape[0] != p.B) ||
        (a.shape[1] != 1 && a.shape[1] != p.N) || a.shape[2] != p.S || a.shape[3] != p.T)
      return ctx.error("attention_bias " + shape_string(a.shape) +
                       " must be float [batch or 1, num_heads or 1, " + std::to_string(p.S) + ", " +
                       std::to_string(p.T) + "]");
    p.has_attn_bias = true;
    p.ab_sn = a.shape[1] == 1 ? 0 : p.S * p.T;
    p.ab_sb = a.shape[0] == 1 ? 0 : a.shape[1] * p.S * p.T;
  }
  if (ctx.has_input(6)) return ctx.error("past_sequence_length (input 6) is not supported");
  if (ctx.output_count() > 2) return ctx.error("at most 2 outputs (output, present)");
  if (p.scale == 0.0f) p.scale = 1.0f / std::sqrt(float(p.H));
  p.where = ctx.where();
  ctx.set_output(0, kFloat, {p.B, p.S, dv});
  const Shape present{2, p.B, p.N, p.T, p.H};
  if (!checked_product(present)) return ctx.error("present is too large");
  if (ctx.output_count() > 1) ctx.set_output(1, kFloat, present);
  return std::unique_ptr<Kernel>(new BertAttentionKernel(std::move(p), x->shape[2], has_bias));
}

}  // namespace onnx_prepack::runtime
