// Plan-time recognition of the attention subgraph that standard-op exports
// (torch.onnx, Hugging Face optimum, opsets 14-18, and `onnx-prepack generate
// decoder --form optimum`) write per layer, run with the attention core's
// attend_head (ops/attention/attention_core.h) as one step
// (Session::fuse_attention, attention_fusion.cc):
//
//   Q [B, Nq, S, D] [-> Mul | Div by a constant]
//   K [B, Nkv, T, D] [-> Unsqueeze(2) -> Expand [.., rep, ..] -> Reshape
//     [B, Nkv * rep, T, D]: repeat_kv] [-> Mul | Div by a constant]
//     -> Transpose(0, 1, 3, 2) [-> Mul | Div by a constant]
//     (or K [B, T, Nkv, D] -> Transpose(0, 2, 3, 1): the BERT export's one Transpose)
//   MatMul(Q, K^T) [-> Mul | Div by a constant] [-> Add float mask (either
//   operand order) that broadcasts to [B, Nq, S, T] along its last axis T]
//   -> Softmax over the last axis -> MatMul(P, V [B, Nkv, T, Dv], V repeated
//   the same way) -> [B, Nq, S, Dv]
//
// The constants multiply into one scale (sqrt(scale) on Q and on K both
// fold). A pattern fuses only when every intermediate value is read inside it
// alone (no other reader, no graph output, no storage shared outside it), the
// scales are float constants of one element known at plan time, and the
// types (float) and shapes fit; anything else is left to the unfused steps.
// A row whose logits are all -inf gives NaN, as the unfused Softmax does.
// Results differ from the unfused plan by rounding only (the scores' dot
// products and the softmax sum in another order; docs/runtime.md, "Pattern
// fusion": the measured bound). ONNX_PREPACK_PATTERN_FUSION=0 or
// SessionOptions::fuse_patterns = false turns it off with the other patterns.
#pragma once
