// One head of scaled dot-product attention, shared by the attention
// operators: out = softmax(softcap(scale * q k^T) + bias) v over a causal,
// local-window or full range of keys per query row.
#pragma once

#include <cstdint>

namespace onnx_prepack::runtime::attention {

struct HeadParams {
  int64_t rows = 0;       // query rows (S)
  int64_t head_size = 0;  // H of q and k
  int64_t v_size = 0;     // H of v and out (usually head_size)
  int64_t keys = 0;       // key / value rows (T)
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: x -> softcap * tanh(x / softcap) before the softmax
  bool smooth = false;   // smooth softmax: an extra logit `sink` in the denominator
  float sink = 0.0f;     // (GroupQueryAttention's head_sink; 0 for smooth_softmax)
  bool causal = false;   // query row s sees keys [0, past + s + 1)
  int64_t past = 0;      // position of query row 0 among the keys (causal)
  // > 0 with causal: row s sees at most `window` keys, ending at past + s
  // (com.microsoft GroupQueryAttention's local_window_size, as ONNX Runtime 1.30's
  // CPU kernel counts it: the query's own key included).
  int64_t window = -1;
  // A row whose logits are all -inf (fully masked) gets NaN, as a standalone
  // Softmax gives it, instead of zeros (the fused standard-op subgraph,
  // attention_fusion.h, keeps the unfused plan's result).
  bool all_masked_nan = false;
};

// Scratch floats attend_head needs for `p`.
// Query rows attended together: the scratch holds kRowBlock x keys scores, whatever
// the prompt's length.
inline constexpr int64_t kRowBlock = 64;
inline int64_t head_scratch_floats(const HeadParams& p) {
  return (p.rows < kRowBlock ? p.rows : kRowBlock) * p.keys;
}

// q: rows x head_size, row stride q_ld; k: keys x head_size and v: keys x
// v_size, row strides k_ld / v_ld; out: rows x v_size, row stride out_ld.
// bias (or null): an additive rows x keys term, row stride bias_ld, applied
// after the scale and the softcap, as ONNX Runtime orders them (a -inf masks the
// key). scratch: head_scratch_floats(p).
// A row that sees no key (its range is empty or fully masked) gets zeros.
void attend_head(const HeadParams& p, const float* q, int64_t q_ld, const float* k, int64_t k_ld,
                 const float* v, int64_t v_ld, const float* bias, int64_t bias_ld, float* out,
                 int64_t out_ld, float* scratch);

// The dot product of two float vectors (8 partial sums).
float dot(const float* a, const float* b, int64_t n);

}  // namespace onnx_prepack::runtime::attention
