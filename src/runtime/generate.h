// Deterministic synthetic models for tests and benchmarks: MLPs,
// transformer encoders and MatMulNBits stacks (opset 17, IR 8, so onnx 1.12's checker accepts
// them).
#pragma once

#include <cstdint>
#include <string>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::runtime {

struct GenerateOptions {
  std::string kind = "mlp";  // "mlp" or "transformer"
  int layers = 2;
  int width = 256;   // hidden size (d_model for transformers)
  int heads = 4;     // transformer only
  int seq = 16;      // transformer: sequence length (input [batch, seq])
  int vocab = 1000;  // transformer only
  uint64_t seed = 1;
  // llm only: com.microsoft::MatMulNBits weights.
  int bits = 4;
  int block_size = 32;
  int accuracy_level = 0;
  bool zero_points = true;
};

// mlp: x[batch, width] -> layers x (MatMul W[width, width] + bias, Relu between) -> y.
// transformer: input_ids int64[batch, seq] -> token + position embeddings ->
//   layers x (LayerNormalization, fused QKV MatMul + Split, multi-head attention with
//   a padding mask from Equal/Where, output projection, residual; LayerNorm written
//   out with ReduceMean/Sub/Pow/Sqrt/Div, FFN 4x width with Gelu as its Erf form,
//   residual) -> final LayerNormalization -> last_hidden_state[batch, seq, width].
// llm: x[batch, width] -> layers x MatMulNBits (width x width, random codes, packed
//   uint8 zero points unless !zero_points, scales keeping unit variance) -> y:
//   the decoder's weight stack as ONNX Runtime's quantizer writes it.
onnx::ModelProto generate_model(const GenerateOptions& options);

// Weight bytes the options produce (for sizing).
uint64_t generated_weight_bytes(const GenerateOptions& options);

}  // namespace onnx_prepack::runtime
