// What the generator (generator.cc) feeds a decoder and reads back, found
// from the graph's inputs and outputs: the token ids, the attention mask,
// position ids when the model takes them, one past / present pair per KV
// tensor, the logits; and its form (include/onnx_prepack/generator.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_prepack/engine.hpp"
#include "onnx_prepack/status.h"

namespace onnx_prepack::engine {

enum class DecoderForm {
  kGenai,    // GroupQueryAttention: one max-length KV buffer, past and present
  kOptimum,  // standard operators: present = past + the step's rows
};

struct KvTensor {
  std::string past;     // past_key_values.N.key / .value
  std::string present;  // present.N.key / .value
  int64_t heads = 0;    // dim 1 of [batch, heads, sequence, head_size]
  int64_t head_size = 0;
};

struct DecoderSignature {
  DecoderForm form = DecoderForm::kGenai;
  int32_t ids_dtype = 0;  // INT64 or INT32, as the graph declares each
  int32_t mask_dtype = 0;
  bool has_position_ids = false;
  int32_t position_dtype = 0;
  int32_t kv_dtype = 0;      // FLOAT or FLOAT16
  int32_t logits_dtype = 0;  // FLOAT or FLOAT16
  int64_t vocab = -1;        // logits' last dim when the graph fixes it
  std::vector<KvTensor> kv;  // layer by layer, key then value
};

inline constexpr const char* kInputIds = "input_ids";
inline constexpr const char* kAttentionMask = "attention_mask";
inline constexpr const char* kPositionIds = "position_ids";
inline constexpr const char* kLogits = "logits";

// The signature of `engine`'s model, or invalid_argument naming the input or
// output that does not fit (docs/llm.md, "Generation").
Result<DecoderSignature> read_decoder_signature(const Engine& engine);

}  // namespace onnx_prepack::engine
