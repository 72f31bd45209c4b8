// com.microsoft::GroupQueryAttention with ONNX Runtime's CPU semantics
// (docs/llm.md): causal attention of num_heads query heads over kv_num_heads
// key/value heads, the new keys and values appended to a BNSH cache.
//
// Inputs: query [B, S, N*H] (or packed [B, S, (N + 2 Nkv) H] with key and
// value absent), key, value [B, S, Nkv*H], past_key, past_value
// [B, Nkv, P, H], seqlens_k [B] int32 (valid length - 1 per batch),
// total_sequence_length (int32 scalar, known when planning), cos_cache,
// sin_cache [rows, rot / 2]. Outputs: output [B, S, N*H], present_key,
// present_value [B, Nkv, max(total_sequence_length, P), H].
//
// Batch b holds L = seqlens_k[b] + 1 tokens. On the first prompt (S ==
// total_sequence_length) its S new rows go to present rows [0, S) and row s
// attends keys [0, min(s + 1, L)); otherwise (a decode step, S == 1, or a
// later prompt of batch 1) the past holds L - S rows, the new ones go to
// [L - S, L) and row s attends [0, L - S + s + 1). When present_key IS
// past_key (the shared buffer of a generation loop) only the new rows are
// written; otherwise present is zeroed, the past rows copied, the new written.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/vec_math/vec_half.h"
#include "runtime/kernel.h"
#include "runtime/ops/attention/attention_core.h"
#include "runtime/ops/attention/attention_ops.h"
#include "runtime/ops/attention/rotary.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {
namespace {

struct GqaPlan {
  int64_t B, S, N, Nkv, H;
  bool packed;
  int64_t past_len;     // P (0: no past)
  int64_t present_len;  // max(total, P)
  int64_t total;        // total_sequence_length
  bool first_prompt;
  float scale, softcap;
  int64_t window;
  bool smooth, rotary, interleaved;
  bool half;  // float16 tensors, computed in float
  bool has_ids = false, has_attn_bias = false, has_sink = false;
  int64_t ab_sb = 0, ab_sn = 0, ab_ld = 0;  // attention_bias strides (batch, head, row)
  int64_t rot, cache_rows;
  std::string where;
};

// float16 rotary: ONNX Runtime rounds the rotated Q and K to float16 before attention.
void round_to_half(float* x, int64_t n) {
  const auto& hc = kernels::vec::host_half_convert();
  uint16_t tmp[256];
  for (int64_t i = 0; i < n; i += 256) {
    const size_t m = size_t(std::min<int64_t>(256, n - i));
    hc.f32_to_f16(x + i, tmp, m);
    hc.f16_to_f32(tmp, x + i, m);
  }
}

class GqaKernel final : public Kernel {
 public:
  GqaKernel(GqaPlan p, std::vector<int64_t> in_elems)
      : p_(std::move(p)), in_elems_(std::move(in_elems)) {}
  bool checks_input_values() const override { return true; }

  void run(const KernelIO& io) const override {
    if (p_.half) {
      run_half(io);
    } else {
      run_f32(io, -1, nullptr);
    }
  }

 private:
  // float16: every float input widened into scratch, the float kernel run on it, the
  // outputs narrowed back. When present IS past (shared), only the new rows are narrowed
  // back into it.
  void run_half(const KernelIO& io) const {
    const GqaPlan& p = p_;
    const auto& hc = kernels::vec::host_half_convert();
    const int64_t present_elems = p.B * p.Nkv * p.present_len * p.H;  // dims-lint: ok (output)
    const bool shared = io.in.size() > 4 && io.in[3] != nullptr && io.out.size() > 2 &&
                        io.in[3] == io.out[1] && io.in[4] == io.out[2];
    std::vector<std::vector<float>> wide(io.in.size());
    std::vector<void*> in(io.in.size(), nullptr);
    // A shared past is as long as the generation's max length: widen only the
    // rows each batch holds (seqlens_k + 1; the kernel reads no others, and
    // checks the values), into memory left uninitialised, so a decode step
    // costs its rows, not the buffer's.
    std::unique_ptr<float[]> shared_wide[2];
    for (int kv = 0; shared && kv < 2; ++kv) {
      const size_t i = size_t(3 + kv);
      shared_wide[kv].reset(new float[size_t(in_elems_[i])]);
      const int64_t rows = in_elems_[i] / (p.B * p.Nkv * p.H);
      const auto* seqlens = static_cast<const int32_t*>(io.in[5]);
      const auto* src = static_cast<const uint16_t*>(io.in[i]);
      for (int64_t bh = 0; bh < p.B * p.Nkv; ++bh) {
        const int64_t valid = std::clamp<int64_t>(int64_t(seqlens[bh / p.Nkv]) + 1, 0, rows);
        const size_t off = size_t(bh * rows * p.H);
        hc.f16_to_f32(src + off, shared_wide[kv].get() + off, size_t(valid * p.H));
      }
      in[i] = shared_wide[kv].get();
    }
    for (size_t i = 0; i < io.in.size(); ++i) {
      if (in[i] != nullptr) continue;                           // a shared past, widened above
      if (io.in[i] == nullptr || i == 5 || i == 6 || i == 9) {  // the integer inputs
        in[i] = io.in[i];
        continue;
      }
      wide[i].resize(size_t(in_elems_[i]));
      hc.f16_to_f32(static_cast<const uint16_t*>(io.in[i]), wide[i].data(), wide[i].size());
      in[i] = wide[i].data();
    }
    std::vector<float> out0(size_t(p.B * p.S * p.N * p.H)), pk, pv;  // dims-lint: ok (output)
    std::vector<void*> out(io.out.size(), nullptr);
    out[0] = out0.data();
    if (shared) {  // the widened past is the present
      out[1] = in[3];
      out[2] = in[4];
    } else {
      pk.resize(size_t(present_elems));
      pv.resize(size_t(present_elems));
      if (out.size() > 1) out[1] = pk.data();
      if (out.size() > 2) out[2] = pv.data();
    }
    KernelIO sub = io;
    sub.in = in;
    sub.out = out;
    Status st;
    sub.status = &st;
    std::vector<int64_t> past_rows;
    run_f32(sub, shared ? 1 : 0, &past_rows);
    if (!st.ok()) {
      report_failure(io, std::move(st));
      return;
    }
    hc.f32_to_f16(out0.data(), static_cast<uint16_t*>(io.out[0]), out0.size());
    for (size_t o = 1; o < 3 && o < io.out.size(); ++o) {
      if (io.out[o] == nullptr) continue;
      const float* src = static_cast<const float*>(out[o]);
      uint16_t* dst = static_cast<uint16_t*>(io.out[o]);
      if (!shared) {
        hc.f32_to_f16(src, dst, size_t(present_elems));
        continue;
      }
      for (int64_t i = 0; i < p.B * p.Nkv; ++i) {
        const int64_t off = (i * p.present_len + past_rows[size_t(i / p.Nkv)]) * p.H;
        hc.f32_to_f16(src + off, dst + off, size_t(p.S * p.H));
      }
    }
  }

  // shared_override: -1 decide by pointer equality, 0 / 1 forced. past_rows_out: each
  // batch's past rows (where its new rows went).
  void run_f32(const KernelIO& io, int shared_override, std::vector<int64_t>* past_rows_out) const {
    const GqaPlan& p = p_;
    const int64_t B = p.B, S = p.S, N = p.N, Nkv = p.Nkv, H = p.H, Lp = p.present_len;
    const float* query = static_cast<const float*>(io.in[0]);
    const float* key = p.packed ? nullptr : static_cast<const float*>(io.in[1]);
    const float* value = p.packed ? nullptr : static_cast<const float*>(io.in[2]);
    const float* past_k = io.in.size() > 3 ? static_cast<const float*>(io.in[3]) : nullptr;
    const float* past_v = io.in.size() > 4 ? static_cast<const float*>(io.in[4]) : nullptr;
    const int32_t* seqlens = static_cast<const int32_t*>(io.in[5]);
    const float* cos = p.rotary ? static_cast<const float*>(io.in[7]) : nullptr;
    const float* sin = p.rotary ? static_cast<const float*>(io.in[8]) : nullptr;
    float* out = static_cast<float*>(io.out[0]);

    // Per batch: the valid length L and the past rows before the new ones.
    std::vector<int64_t> past_rows(static_cast<size_t>(B)), valid(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      const int64_t L = int64_t(seqlens[b]) + 1;
      const int64_t pr = p.first_prompt ? 0 : L - S;
      std::string why;
      if (L < 1 || L > p.total) {
        why = "must be in [0, total_sequence_length - 1 = " + std::to_string(p.total - 1) + "]";
      } else if (p.first_prompt && L > S) {
        why = "exceeds the prompt's sequence length - 1 (" + std::to_string(S - 1) + ")";
      } else if (pr < 0) {
        why = "leaves fewer than the " + std::to_string(S) +
              " new tokens (seqlens_k + 1 = valid length)";
      } else if (pr > p.past_len && pr > 0) {
        why = "needs " + std::to_string(pr) + " past rows but past_key holds " +
              std::to_string(p.past_len);
      } else if (pr + S > Lp) {
        why = "puts the new rows past the " + std::to_string(Lp) + " rows of present_key";
      }
      if (!why.empty()) {
        report_failure(io, invalid_argument(p.where + ": seqlens_k[" + std::to_string(b) +
                                            "] = " + std::to_string(seqlens[b]) + " " + why));
        return;
      }
      past_rows[size_t(b)] = pr;
      valid[size_t(b)] = L;
    }
    // Rotary positions, as ONNX Runtime 1.30's CPU kernel takes them: on the first prompt
    // token s of every batch is at (position_ids[0, 0] or 0) + s, padding included; otherwise
    // at position_ids[b, s], or without them past + s (1 for a position past the valid ones).
    const int64_t* ids = p.has_ids ? static_cast<const int64_t*>(io.in[9]) : nullptr;
    auto position = [&](int64_t b, int64_t s) -> int64_t {
      if (p.first_prompt) return ids != nullptr ? saturating_add(ids[0], s) : s;
      if (ids != nullptr) return ids[b * S + s];
      const int64_t pos = past_rows[size_t(b)] + s;
      return pos < valid[size_t(b)] ? pos : 1;
    };
    if (p.rotary) {
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t s = 0; s < S; ++s) {
          if (position(b, s) < 0 || position(b, s) >= p.cache_rows) {
            report_failure(
                io,
                invalid_argument(p.where + ": position " + std::to_string(position(b, s)) +
                                 " of batch " + std::to_string(b) + " is outside the " +
                                 std::to_string(p.cache_rows) + " rows of cos_cache / sin_cache"));
            return;
          }
        }
      }
    }

    // The present buffers: the outputs, or scratch when they are not asked for.
    const int64_t present_elems = B * Nkv * Lp * H;  // dims-lint: ok (an output's shape)
    std::vector<float> own_k, own_v;
    float* pk = io.out.size() > 1 ? static_cast<float*>(io.out[1]) : nullptr;
    float* pv = io.out.size() > 2 ? static_cast<float*>(io.out[2]) : nullptr;
    if (pk == nullptr) {
      own_k.resize(size_t(present_elems));
      pk = own_k.data();
    }
    if (pv == nullptr) {
      own_v.resize(size_t(present_elems));
      pv = own_v.data();
    }
    const bool shared = shared_override >= 0 ? shared_override == 1
                                             : past_k != nullptr && past_k == pk && past_v == pv;
    if (past_rows_out != nullptr) *past_rows_out = past_rows;

    const int64_t q_row = p.packed ? (N + 2 * Nkv) * H : N * H;  // floats per token of query
    const int64_t kv_row = p.packed ? q_row : Nkv * H;
    const float* k_src = p.packed ? query + N * H : key;
    const float* v_src = p.packed ? query + (N + Nkv) * H : value;

    // 1. present: past rows (unless shared), new rows (rotated keys), zeros after.
    parallel_range(io.pool, B * Nkv, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / Nkv, h = i % Nkv, pr = past_rows[size_t(b)];
        float* dk = pk + i * Lp * H;
        float* dv = pv + i * Lp * H;
        if (!shared) {
          if (pr > 0) {
            std::memcpy(dk, past_k + i * p.past_len * H, size_t(pr * H) * sizeof(float));
            std::memcpy(dv, past_v + i * p.past_len * H, size_t(pr * H) * sizeof(float));
          }
          std::fill(dk + (pr + S) * H, dk + Lp * H, 0.0f);
          std::fill(dv + (pr + S) * H, dv + Lp * H, 0.0f);
        }
        for (int64_t s = 0; s < S; ++s) {
          const float* ks = k_src + (b * S + s) * kv_row + h * H;
          const float* vs = v_src + (b * S + s) * kv_row + h * H;
          float* kd = dk + (pr + s) * H;
          if (p.rotary) {
            const int64_t pos = position(b, s);
            attention::rotate_head(ks, kd, H, p.rot, cos + pos * (p.rot / 2),
                                   sin + pos * (p.rot / 2), p.interleaved);
            if (p.half) round_to_half(kd, H);
          } else {
            std::memcpy(kd, ks, size_t(H) * sizeof(float));
          }
          std::memcpy(dv + (pr + s) * H, vs, size_t(H) * sizeof(float));
        }
      }
    });

    // 2. attention per (batch, head).
    const float* ab = p.has_attn_bias ? static_cast<const float*>(io.in[10]) : nullptr;
    const float* sink = p.has_sink ? static_cast<const float*>(io.in[11]) : nullptr;
    const int64_t group = N / Nkv;
    parallel_range(io.pool, B * N, 1, [&](int64_t i0, int64_t i1) {
      std::vector<float> scratch, qrot;
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / N, n = i % N, L = valid[size_t(b)];
        const float* q = query + b * S * q_row + n * H;
        int64_t q_ld = q_row;
        if (p.rotary) {
          qrot.resize(size_t(S * H));
          for (int64_t s = 0; s < S; ++s) {
            const int64_t pos = position(b, s);
            attention::rotate_head(q + s * q_row, qrot.data() + s * H, H, p.rot,
                                   cos + pos * (p.rot / 2), sin + pos * (p.rot / 2), p.interleaved);
            if (p.half) round_to_half(qrot.data() + s * H, H);
          }
          q = qrot.data();
          q_ld = H;
        }
        attention::HeadParams hp;
        hp.rows = S;
        hp.head_size = H;
        hp.v_size = H;
        hp.keys = L;
        hp.scale = p.scale;
        hp.softcap = p.softcap;
        hp.smooth = p.smooth;
        hp.causal = true;
        hp.past = past_rows[size_t(b)];
        hp.window = p.window;
        if (sink != nullptr) {
          hp.smooth = true;
          hp.sink = sink[n];
        }
        const float* bias = ab != nullptr ? ab + b * p.ab_sb + n * p.ab_sn : nullptr;
        scratch.resize(size_t(attention::head_scratch_floats(hp)));
        const int64_t kvi = b * Nkv + n / group;
        attention::attend_head(hp, q, q_ld, pk + kvi * Lp * H, H, pv + kvi * Lp * H, H, bias,
                               p.ab_ld, out + b * S * N * H + n * H, N * H, scratch.data());
      }
    });
  }

  GqaPlan p_;
  std::vector<int64_t> in_elems_;  // element counts of the inputs (float16 widening)
};

}  // namespace

Result<std::unique_ptr<Kernel>> build_group_query_attention(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* q, ctx.require_input(0));
  GqaPlan p{};
  p.N = ctx.attr_int("num_heads", 0);
  p.Nkv = ctx.attr_int("kv_num_heads", 0);
  p.scale = ctx.attr_float("scale", 0.0f);
  p.softcap = ctx.attr_float("softcap", 0.0f);
  p.window = ctx.attr_int("local_window_size", -1);
  p.rotary = ctx.attr_int("do_rotary", 0) != 0;
  p.interleaved = ctx.attr_int("rotary_interleaved", 0) != 0;
  p.smooth = ctx.attr_int("smooth_softmax", 0) != 0;
  const int64_t qk_output = ctx.attr_int("qk_output", 0);
  OP_RETURN_IF_ERROR(ctx.attr_status());
  if (p.N <= 0 || p.Nkv <= 0)
    return ctx.error("num_heads (" + std::to_string(p.N) + ") and kv_num_heads (" +
                     std::to_string(p.Nkv) + ") must be > 0");
  if (p.N % p.Nkv != 0)
    return ctx.error("num_heads " + std::to_string(p.N) + " is not a multiple of kv_num_heads " +
                     std::to_string(p.Nkv));
  if (qk_output != 0) return ctx.error("qk_output is not supported");
  for (const char* a : {"k_quant_type", "v_quant_type"}) {
    if (ctx.attr_string(a, "NONE") != "NONE")
      return ctx.error(std::string(a) + " (a quantized KV cache) is not supported");
  }
  if (!(p.softcap >= 0.0f) || !std::isfinite(p.softcap))
    return ctx.error("softcap must be finite and >= 0, got " + std::to_string(p.softcap));
  if (!std::isfinite(p.scale)) return ctx.error("scale must be finite");
  if (q->dtype != kFloat && q->dtype != kFloat16)
    return ctx.error("query must be float or float16, got " + dtype_name(q->dtype));
  const int32_t T = q->dtype;
  p.half = T == kFloat16;
  if (q->shape.size() != 3)
    return ctx.error("query must be 3-D [batch, seq, hidden], got " + shape_string(q->shape));
  p.B = q->shape[0];
  p.S = q->shape[1];
  const int64_t D = q->shape[2];
  p.packed = !ctx.has_input(1);
  if (p.packed != !ctx.has_input(2))
    return ctx.error("key and value must be both present or both absent (packed QKV)");
  const int64_t heads_in_q = p.packed ? p.N + 2 * p.Nkv : p.N;
  if (D % heads_in_q != 0 || D == 0)
    return ctx.error("query hidden size " + std::to_string(D) + " is not a positive multiple of " +
                     (p.packed ? "num_heads + 2 kv_num_heads = " : "num_heads = ") +
                     std::to_string(heads_in_q));
  p.H = D / heads_in_q;
  const Shape kv_shape{p.B, p.S, p.Nkv * p.H};  // dims-lint: ok (a divisor of query's dim)
  if (!p.packed) {
    for (int i : {1, 2}) {
      const ValueDesc& t = ctx.input(i);
      if (t.dtype != T || t.shape != kv_shape)
        return ctx.error(std::string(i == 1 ? "key " : "value ") + shape_string(t.shape) +
                         " must be of query's type, " + shape_string(kv_shape) +
                         " [batch, seq, kv_num_heads * head_size]");
    }
  }
  if (ctx.has_input(3) != ctx.has_input(4))
    return ctx.error("past_key and past_value must be both present or both absent");
  if (ctx.has_input(3)) {
    const ValueDesc& pk = ctx.input(3);
    const ValueDesc& pv = ctx.input(4);
    if (pk.dtype != T || pv.dtype != T || pk.shape.size() != 4 || pk.shape != pv.shape ||
        pk.shape[0] != p.B || pk.shape[1] != p.Nkv || pk.shape[3] != p.H)
      return ctx.error("past_key " + shape_string(pk.shape) + " and past_value " +
                       shape_string(pv.shape) + " must be of query's type, [batch " +
                       std::to_string(p.B) + ", kv_num_heads " + std::to_string(p.Nkv) +
                       ", past, head_size " + std::to_string(p.H) + "] (BNSH)");
    p.past_len = pk.shape[2];
  }
  OP_ASSIGN_OR_RETURN(const ValueDesc* sk, ctx.require_input(5));
  if (sk->dtype != kInt32 || shape_numel(sk->shape) != p.B || sk->shape.size() > 1 ||
      (sk->shape.empty() && p.B != 1))
    return ctx.error("seqlens_k " + shape_string(sk->shape) + " must be int32 [batch " +
                     std::to_string(p.B) + "]");
  OP_ASSIGN_OR_RETURN(const ValueDesc* ts, ctx.require_input(6));
  if (ts->dtype != kInt32 || shape_numel(ts->shape) != 1)
    return ctx.error("total_sequence_length " + shape_string(ts->shape) + " must be one int32");
  OP_ASSIGN_OR_RETURN(std::vector<int64_t> total, ctx.const_ints(6, "total_sequence_length"));
  p.total = total[0];
  if (p.total < p.S || p.total > p.past_len + p.S)
    return ctx.error("total_sequence_length " + std::to_string(p.total) +
                     " must be in [sequence length " + std::to_string(p.S) +
                     ", past length + sequence length = " + std::to_string(p.past_len + p.S) + "]");
  p.first_prompt = p.S == p.total;
  if (!p.first_prompt && p.S != 1 && p.B != 1)
    return ctx.error("a prompt after the first (sequence length " + std::to_string(p.S) +
                     " != total_sequence_length " + std::to_string(p.total) +
                     ") needs batch 1, got " + std::to_string(p.B));
  if (!p.first_prompt && p.past_len == 0)
    return ctx.error("sequence length " + std::to_string(p.S) + " < total_sequence_length " +
                     std::to_string(p.total) + " needs past_key and past_value");
  p.present_len = std::max(p.total, p.past_len);
  if (ctx.has_input(7) != ctx.has_input(8))
    return ctx.error("cos_cache and sin_cache must be both present or both absent");
  if (p.rotary) {
    if (!ctx.has_input(7)) return ctx.error("do_rotary = 1 needs cos_cache and sin_cache");
    const ValueDesc& c = ctx.input(7);
    const ValueDesc& s = ctx.input(8);
    if (c.dtype != T || s.dtype != T || c.shape.size() != 2 || c.shape != s.shape)
      return ctx.error("cos_cache " + shape_string(c.shape) + " and sin_cache " +
                       shape_string(s.shape) +
                       " must be of query's type and the same 2-D shape [rows, rotary_dim / 2]");
    p.rot = c.shape[1] * 2;
    p.cache_rows = c.shape[0];
    if (p.rot <= 0 || p.rot > p.H)
      return ctx.error("cos_cache's " + std::to_string(c.shape[1]) +
                       " values per row give rotary dim " + std::to_string(p.rot) +
                       ", which must be in [2, head_size " + std::to_string(p.H) + "]");
    if (p.cache_rows < p.total)
      return ctx.error("cos_cache has " + std::to_string(p.cache_rows) +
                       " rows, fewer than total_sequence_length " + std::to_string(p.total));
  }
  if (ctx.has_input(9)) {  // position_ids [B, S] for the rotary
    const ValueDesc& ids = ctx.input(9);
    if (ids.dtype != kInt64 || ids.shape != Shape{p.B, p.S})
      return ctx.error("position_ids " + shape_string(ids.shape) + " must be int64 [batch, seq] " +
                       shape_string(Shape{p.B, p.S}));
    if (!p.rotary) return ctx.error("position_ids needs do_rotary = 1");
    p.has_ids = true;
  }
  if (ctx.has_input(10)) {  // attention_bias [B or 1, N or 1, S, total]
    const ValueDesc& a = ctx.input(10);
    if (a.dtype != T || a.shape.size() != 4 || (a.shape[0] != 1 && a.shape[0] != p.B) ||
        (a.shape[1] != 1 && a.shape[1] != p.N) || a.shape[2] != p.S || a.shape[3] != p.total)
      return ctx.error("attention_bias " + shape_string(a.shape) +
                       " must be of query's type, [batch or 1, num_heads or 1, " +
                       std::to_string(p.S) + ", total_sequence_length " + std::to_string(p.total) +
                       "]");
    p.has_attn_bias = true;
    p.ab_ld = a.shape[3];
    p.ab_sn = a.shape[1] == 1 ? 0 : p.S * a.shape[3];
    p.ab_sb = a.shape[0] == 1 ? 0 : a.shape[1] * p.S * a.shape[3];
  }
  if (ctx.has_input(11)) {  // head_sink [N]: each head's extra logit of the smooth softmax
    const ValueDesc& h = ctx.input(11);
    if (h.dtype != T || h.shape != Shape{p.N})
      return ctx.error("head_sink " + shape_string(h.shape) +
                       " must be of query's type, [num_heads " + std::to_string(p.N) + "]");
    p.has_sink = true;
  }
  if (ctx.input_count() > 12)
    return ctx.error("at most 12 inputs, got " + std::to_string(ctx.input_count()));
  if (p.scale == 0.0f) p.scale = 1.0f / std::sqrt(float(p.H));
  p.where = ctx.where();
  ctx.set_output(0, T, {p.B, p.S, p.N * p.H});  // dims-lint: ok (query's hidden or less)
  const Shape present{p.B, p.Nkv, p.present_len, p.H};
  if (!checked_product(present))
    return ctx.error("present shape " + shape_string(present) + " is too large");
  if (ctx.output_count() > 1) ctx.set_output(1, T, present);
  if (ctx.output_count() > 2) ctx.set_output(2, T, present);
  if (ctx.output_count() > 3) return ctx.error("output_qk (output 3) is not supported");
  std::vector<int64_t> in_elems(size_t(ctx.input_count()), 0);
  for (int i = 0; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i)) in_elems[size_t(i)] = shape_numel(ctx.input(i).shape);
  }
  return std::unique_ptr<Kernel>(new GqaKernel(std::move(p), std::move(in_elems)));
}

}  // namespace onnx_prepack::runtime
