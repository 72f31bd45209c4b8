// Deterministic synthetic models for tests and benchmarks: MLPs,
// transformer encoders and MatMulNBits stacks (opset 17, IR 8, so onnx 1.12's checker accepts
// them).
#pragma once

#include <cstdint>
#include <string>

#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

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

// Llama-class decoders (generate_decoder.cc). form "genai": the layout of onnxruntime-genai's
// model builder for CPU int4 (IR 10, opset 21 + com.microsoft: Gather embeddings,
// (Skip)SimplifiedLayerNormalization, packed qkv MatMulNBits, GroupQueryAttention with
// do_rotary and cos/sin caches, SiLU MLP, lm_head MatMulNBits). form "optimum": the same
// function and the same weights (dequantized to fp32) in standard ops as optimum's export
// writes it (IR 8, opset 17: position_ids input, Concat KV cache, decomposed RMSNorm, rotary
// and attention).
struct DecoderOptions {
  std::string form = "genai";
  int64_t layers = 2;
  int64_t hidden = 128;
  int64_t intermediate = 256;
  int64_t heads = 4;
  int64_t kv_heads = 2;
  int64_t vocab = 512;
  int64_t max_positions = 256;  // rows of cos_cache / sin_cache
  int64_t block_size = 32;
  int64_t accuracy_level = 4;
  bool zero_points = true;    // false: symmetric int4 (the builder's default), code 8 = 0
  int64_t local_window = -1;  // GroupQueryAttention local_window_size; -1 = none
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  uint64_t seed = 1;
};
// "tiny" (tests) and "7b" (Llama-2-7B shapes with 8 KV heads).
Result<DecoderOptions> decoder_preset(const std::string& name);
// Checks the options (heads divide hidden, block divides K, sizes that overflow, ...).
Status validate_decoder(const DecoderOptions& options);
// Initializer bytes the options produce (no model is built).
Result<uint64_t> decoder_weight_bytes(const DecoderOptions& options);

// BERT-class encoders (generate_encoder.cc): inputs input_ids, attention_mask, token_type_ids;
// output last_hidden_state. int8: every weight MatMul as onnxruntime.quantization's
// quantize_dynamic writes it (DynamicQuantizeLinear -> MatMulInteger with per-tensor int8
// weights -> Cast -> Mul by the scale product -> the original bias Add). IR 8, opset 17.
struct EncoderOptions {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t intermediate = 3072;
  int64_t vocab = 30522;
  int64_t max_positions = 512;
  int64_t type_vocab = 2;
  bool int8 = false;
  uint64_t seed = 1;
};
Result<EncoderOptions> encoder_preset(const std::string& name);  // "bert-base", "minilm-l6"
Status validate_encoder(const EncoderOptions& options);
Result<uint64_t> encoder_weight_bytes(const EncoderOptions& options);

struct WrittenModel {
  uint64_t weight_bytes = 0;
  std::string data_file;  // file name beside the model; empty when everything is inline
  int64_t nodes = 0;
  int64_t initializers = 0;
};
// Builds and writes the model; with `external`, initializers of 1 KiB or more are streamed to
// "<model file name>.data" beside it as they are made. Both files are published atomically.
Result<WrittenModel> write_decoder(const DecoderOptions& options, const std::string& path,
                                   bool external);
Result<WrittenModel> write_encoder(const EncoderOptions& options, const std::string& path,
                                   bool external);

}  // namespace onnx_prepack::runtime
