// ONNX Attention (opsets 23 and 24): softmax(softcap(scale * Q K^T) + mask) V with
// grouped heads (q_num_heads a multiple of kv_num_heads), 3-D [B, S, heads *
// H] or 4-D [B, heads, S, H] inputs, an optional past concatenated before the
// new keys / values (present_key / present_value), is_causal (query i sees
// keys <= past + i), a bool (true attends) or float (added) attn_mask that
// broadcasts to [B, q_num_heads, S, past + kv_seq]. Opset 24 adds
// nonpad_kv_seqlen (input 6, int64 [B]): batch b attends only its first
// nonpad_kv_seqlen[b] keys (K / V are a whole external cache, no past), and
// is_causal aligns bottom-right on them: query i sees keys j <= i + nonpad[b] - S
// (leading rows that see none give zeros).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/attention/attention_core.h"
#include "runtime/ops/attention/attention_ops.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {
namespace {

struct AttnPlan {
  int64_t B, Nq, Nkv, S, L, P, T, H, Hv;  // L: new kv rows, P: past rows, T = P + L
  bool q4, k4, v4;                        // 4-D (BNSH) inputs; Y follows Q
  bool causal;
  float scale, softcap;
  int mask = -1;  // input index of attn_mask, -1 none
  bool mask_bool = false;
  std::vector<int64_t> mstride;  // the mask's strides over [B, Nq, S, T] (0: broadcast)
  int64_t mask_elems = 0;
  bool has_past;
  bool has_nonpad = false;  // nonpad_kv_seqlen (input 6)
  std::string where;        // the node, for run-time errors
};

// Element (b, n, s, j) of a 3-D or 4-D head tensor with `heads` heads and rows `rows`.
inline int64_t at(bool four, int64_t b, int64_t n, int64_t s, int64_t heads, int64_t rows,
                  int64_t h) {
  return four ? ((b * heads + n) * rows + s) * h : (b * rows + s) * heads * h + n * h;
}

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(AttnPlan p) : p_(std::move(p)) {}
  bool checks_input_values() const override { return p_.has_nonpad; }
  void run(const KernelIO& io) const override {
    const AttnPlan& p = p_;
    // nonpad_kv_seqlen: every count in [0, kv_seq] before anything is read with it.
    const int64_t* nonpad = p.has_nonpad ? static_cast<const int64_t*>(io.in[6]) : nullptr;
    for (int64_t b = 0; nonpad != nullptr && b < p.B; ++b) {
      if (nonpad[b] < 0 || nonpad[b] > p.T) {
        report_failure(io, invalid_argument(p.where + ": nonpad_kv_seqlen[" + std::to_string(b) +
                                            "] = " + std::to_string(nonpad[b]) +
                                            " is outside [0, kv_sequence_length = " +
                                            std::to_string(p.T) + "]"));
        return;
      }
    }
    const float* Q = static_cast<const float*>(io.in[0]);
    const float* K = static_cast<const float*>(io.in[1]);
    const float* V = static_cast<const float*>(io.in[2]);
    const float* pk = p.has_past ? static_cast<const float*>(io.in[4]) : nullptr;
    const float* pv = p.has_past ? static_cast<const float*>(io.in[5]) : nullptr;
    float* Y = static_cast<float*>(io.out[0]);
    // present [B, Nkv, T, H]: the outputs or scratch.
    std::vector<float> own_k, own_v;
    float* ok = io.out.size() > 1 && io.out[1] ? static_cast<float*>(io.out[1]) : nullptr;
    float* ov = io.out.size() > 2 && io.out[2] ? static_cast<float*>(io.out[2]) : nullptr;
    if (!ok) {
      own_k.resize(size_t(p.B * p.Nkv * p.T * p.H));  // dims-lint: ok (inputs' dims)
      ok = own_k.data();
    }
    if (!ov) {
      own_v.resize(size_t(p.B * p.Nkv * p.T * p.Hv));  // dims-lint: ok (inputs' dims)
      ov = own_v.data();
    }
    for (int64_t b = 0; b < p.B; ++b) {
      for (int64_t n = 0; n < p.Nkv; ++n) {
        const int64_t i = b * p.Nkv + n;
        if (p.P > 0) {
          std::memcpy(ok + i * p.T * p.H, pk + i * p.P * p.H, size_t(p.P * p.H) * sizeof(float));
          std::memcpy(ov + i * p.T * p.Hv, pv + i * p.P * p.Hv, size_t(p.P * p.Hv) * sizeof(float));
        }
        for (int64_t s = 0; s < p.L; ++s) {
          std::memcpy(ok + (i * p.T + p.P + s) * p.H, K + at(p.k4, b, n, s, p.Nkv, p.L, p.H),
                      size_t(p.H) * sizeof(float));
          std::memcpy(ov + (i * p.T + p.P + s) * p.Hv, V + at(p.v4, b, n, s, p.Nkv, p.L, p.Hv),
                      size_t(p.Hv) * sizeof(float));
        }
      }
    }
    // A bool mask as 0 / -inf floats.
    std::vector<float> mask_f;
    const float* mask = nullptr;
    if (p.mask >= 0) {
      if (p.mask_bool) {
        const bool* m = static_cast<const bool*>(io.in[size_t(p.mask)]);
        mask_f.resize(size_t(p.mask_elems));
        for (int64_t e = 0; e < p.mask_elems; ++e)
          mask_f[size_t(e)] = m[e] ? 0.0f : -std::numeric_limits<float>::infinity();
        mask = mask_f.data();
      } else {
        mask = static_cast<const float*>(io.in[size_t(p.mask)]);
      }
    }
    const int64_t group = p.Nq / p.Nkv;
    parallel_range(io.pool, p.B * p.Nq, 1, [&](int64_t i0, int64_t i1) {
      std::vector<float> scratch;
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / p.Nq, n = i % p.Nq, kv = b * p.Nkv + n / group;
        attention::HeadParams hp;
        hp.rows = p.S;
        hp.head_size = p.H;
        hp.v_size = p.Hv;
        hp.keys = p.T;
        hp.scale = p.scale;
        hp.softcap = p.softcap;
        hp.causal = p.causal;
        hp.past = p.P;
        if (nonpad != nullptr) {  // the padding keys are left out; causal aligns on the last valid
          hp.keys = nonpad[b];
          hp.past = nonpad[b] - p.S;  // may be negative: the leading rows see no key
        }
        scratch.resize(size_t(attention::head_scratch_floats(hp)));
        const float* bias = mask ? mask + b * p.mstride[0] + n * p.mstride[1] : nullptr;
        attention::attend_head(hp, Q + at(p.q4, b, n, 0, p.Nq, p.S, p.H), p.q4 ? p.H : p.Nq * p.H,
                               ok + kv * p.T * p.H, p.H, ov + kv * p.T * p.Hv, p.Hv, bias,
                               mask ? p.mstride[2] : 0, Y + at(p.q4, b, n, 0, p.Nq, p.S, p.Hv),
                               p.q4 ? p.Hv : p.Nq * p.Hv, scratch.data());
      }
    });
  }

 private:
  AttnPlan p_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> build_attention_onnx(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* q, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* k, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(const ValueDesc* v, ctx.require_input(2));
  if (ctx.opset() < 23) return ctx.error("Attention is an operator of opset 23 and later");
  AttnPlan p{};
  p.causal = ctx.attr_int("is_causal", 0) != 0;
  int64_t nq = ctx.attr_int("q_num_heads", 0), nkv = ctx.attr_int("kv_num_heads", 0);
  p.scale = ctx.attr_float("scale", 0.0f);
  p.softcap = ctx.attr_float("softcap", 0.0f);
  const int64_t qk_mode = ctx.attr_int("qk_matmul_output_mode", 0);
  OP_RETURN_IF_ERROR(ctx.attr_status());
  if (q->dtype != kFloat || k->dtype != kFloat || v->dtype != kFloat)
    return ctx.error("only float Q, K, V are supported");
  if (qk_mode != 0 || ctx.output_count() > 3)
    return ctx.error("qk_matmul_output (output 3, qk_matmul_output_mode) is not supported");
  if (!(p.softcap >= 0.0f) || !std::isfinite(p.softcap))
    return ctx.error("softcap must be finite and >= 0");
  if (!std::isfinite(p.scale)) return ctx.error("scale must be finite");
  const Shape &qs = q->shape, &ks = k->shape, &vs = v->shape;
  auto rank_ok = [](const Shape& s) { return s.size() == 3 || s.size() == 4; };
  if (!rank_ok(qs) || !rank_ok(ks) || !rank_ok(vs) || qs.size() != ks.size() ||
      ks.size() != vs.size())
    return ctx.error("Q " + shape_string(qs) + ", K " + shape_string(ks) + ", V " +
                     shape_string(vs) +
                     " must all be 3-D [batch, seq, heads * head_size] or all 4-D [batch, heads, "
                     "seq, head_size]");
  p.q4 = p.k4 = p.v4 = qs.size() == 4;
  p.B = qs[0];
  if (ks[0] != p.B || vs[0] != p.B) return ctx.error("Q, K and V must have the same batch");
  if (p.q4) {
    p.Nq = qs[1];
    p.S = qs[2];
    p.H = qs[3];
    p.Nkv = ks[1];
    p.L = ks[2];
    if (ks[3] != p.H || vs[1] != p.Nkv || vs[2] != p.L)
      return ctx.error("K " + shape_string(ks) + " and V " + shape_string(vs) +
                       " must be [batch, kv_heads, kv_seq, head_size] with Q's head_size " +
                       std::to_string(p.H));
    p.Hv = vs[3];
  } else {
    if (nq <= 0 || nkv <= 0) return ctx.error("3-D inputs need q_num_heads and kv_num_heads > 0");
    if (qs[2] % nq != 0 || ks[2] % nkv != 0 || vs[2] % nkv != 0)
      return ctx.error("hidden sizes (Q " + std::to_string(qs[2]) + ", K " + std::to_string(ks[2]) +
                       ", V " + std::to_string(vs[2]) + ") must be multiples of q_num_heads " +
                       std::to_string(nq) + " / kv_num_heads " + std::to_string(nkv));
    p.Nq = nq;
    p.Nkv = nkv;
    p.S = qs[1];
    p.H = qs[2] / nq;
    p.L = ks[1];
    p.Hv = vs[2] / nkv;
    if (ks[2] / nkv != p.H || vs[1] != p.L)
      return ctx.error("K's head size " + std::to_string(ks[2] / nkv) + " differs from Q's " +
                       std::to_string(p.H) + " or V's sequence differs from K's");
  }
  if (p.Nq <= 0 || p.Nkv <= 0 || p.Nq % p.Nkv != 0)
    return ctx.error("q heads " + std::to_string(p.Nq) +
                     " must be a positive multiple of kv heads " + std::to_string(p.Nkv));
  if ((nq > 0 && nq != p.Nq) || (nkv > 0 && nkv != p.Nkv))
    return ctx.error("q_num_heads / kv_num_heads differ from the 4-D inputs' heads");
  if (ctx.has_input(4) != ctx.has_input(5))
    return ctx.error("past_key and past_value must be both present or both absent");
  p.has_past = ctx.has_input(4);
  if (p.has_past) {
    const ValueDesc& a = ctx.input(4);
    const ValueDesc& b = ctx.input(5);
    if (a.dtype != kFloat || b.dtype != kFloat || a.shape.size() != 4 || b.shape.size() != 4 ||
        a.shape[0] != p.B || a.shape[1] != p.Nkv || a.shape[3] != p.H || b.shape[0] != p.B ||
        b.shape[1] != p.Nkv || b.shape[2] != a.shape[2] || b.shape[3] != p.Hv)
      return ctx.error("past_key " + shape_string(a.shape) + " / past_value " +
                       shape_string(b.shape) + " must be float [batch, kv_heads, past, head_size]");
    p.P = a.shape[2];
  }
  OP_ASSIGN_OR_RETURN(p.T, checked_add(p.P, p.L, ctx.where() + ": past + kv sequence"));
  if (ctx.has_input(3)) {
    const ValueDesc& m = ctx.input(3);
    if (m.dtype != kBool && m.dtype != kFloat) return ctx.error("attn_mask must be bool or float");
    const Shape full{p.B, p.Nq, p.S, p.T};
    auto r = broadcast_shapes(m.shape, full);
    if (!r.ok() || *r != full || m.shape.empty() || m.shape.back() != p.T)
      return ctx.error(
          "attn_mask " + shape_string(m.shape) + " must broadcast to " + shape_string(full) +
          " [batch, q_heads, q_seq, past + kv_seq] with its last dim the total sequence");
    p.mask = 3;
    p.mask_bool = m.dtype == kBool;
    p.mstride = broadcast_strides(m.shape, full);
    p.mask_elems = shape_numel(m.shape);
  }
  const int max_inputs = ctx.opset() >= 24 ? 7 : 6;
  if (ctx.input_count() > max_inputs)
    return ctx.error("at most " + std::to_string(max_inputs) + " inputs at opset " +
                     std::to_string(ctx.opset()) + " (nonpad_kv_seqlen is input 6 from opset 24)");
  if (ctx.has_input(6)) {
    const ValueDesc& np = ctx.input(6);
    if (np.dtype != kInt64 || np.shape != Shape{p.B})
      return ctx.error("nonpad_kv_seqlen " + dtype_name(np.dtype) + " " + shape_string(np.shape) +
                       " must be int64 [batch] = [" + std::to_string(p.B) + "]");
    if (p.has_past)
      return ctx.error(
          "nonpad_kv_seqlen (an external cache in K / V) cannot be used with past_key / "
          "past_value");
    p.has_nonpad = true;
    p.where = ctx.where();
  }
  if (p.scale == 0.0f) p.scale = 1.0f / std::sqrt(float(p.H));
  ctx.set_output(0, kFloat, p.q4 ? Shape{p.B, p.Nq, p.S, p.Hv} : Shape{p.B, p.S, p.Nq * p.Hv});
  const Shape pk{p.B, p.Nkv, p.T, p.H}, pv{p.B, p.Nkv, p.T, p.Hv};
  if (!checked_product(pk) || !checked_product(pv)) return ctx.error("present is too large");
  if (ctx.output_count() > 1) ctx.set_output(1, kFloat, pk);
  if (ctx.output_count() > 2) ctx.set_output(2, kFloat, pv);
  return std::unique_ptr<Kernel>(new AttentionKernel(std::move(p)));
}

}  // namespace onnx_prepack::runtime
