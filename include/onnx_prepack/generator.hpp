// Token generation on a decoder model: the KV-cache loop of
// onnxruntime-genai's Generator, run by one Engine (docs/llm.md,
// "Generation"). Tokenization stays with the caller: prompts and results are
// token ids.
//
//   auto engine = onnx_prepack::Engine::open("model.onnx");
//   onnx_prepack::GeneratorParams params;
//   params.max_new_tokens = 32;
//   auto gen = onnx_prepack::Generator::create(**engine, params);
//   (*gen)->append_tokens({{1, 15043, 3186}});
//   while (!(*gen)->is_done()) (*gen)->generate_next_token();
//   std::vector<int64_t> ids = (*gen)->sequence(0);
//
// Two decoder forms are recognised from the graph's signature:
// - genai (onnxruntime-genai's model builder; GroupQueryAttention): inputs
//   input_ids, attention_mask, past_key_values.N.key/.value; outputs logits,
//   present.N.key/.value. The KV cache is one max-length buffer per layer,
//   bound as both past and present, so each step writes only its new rows
//   (no copies). Batches are right-padded, as ONNX Runtime's CPU
//   GroupQueryAttention expects.
// - optimum (standard operators; Concat-based cache): the same names plus
//   position_ids. present is one row longer than past each step; it is written
//   into the generator's own buffer, which the next step reads as past (two
//   buffers per tensor, swapped; no copies). Batches are left-padded.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "onnx_prepack/engine.hpp"
#include "onnx_prepack/status.h"

namespace onnx_prepack {

struct GeneratorParams {
  // Tokens per sequence, prompt included, and the length the KV cache is
  // sized for once. 0: the longest prompt + max_new_tokens.
  int64_t max_length = 0;
  // Tokens generated per sequence at most; 0: until max_length. One of
  // max_length and max_new_tokens must be set.
  int64_t max_new_tokens = 0;
  // Greedy (argmax, the lowest id on ties) unless do_sample.
  bool do_sample = false;
  float temperature = 1.0f;  // > 0; logits are divided by it before sampling
  int64_t top_k = 0;         // > 0: sample among the k most likely; 0: all
  float top_p = 1.0f;        // in (0, 1]: the smallest set whose mass reaches top_p
  uint64_t seed = 0;         // the sampler's seed: the same seed, the same tokens
  // A sequence is done when it emits one of these (the id is kept in its
  // sequence), or when it reaches max_length / max_new_tokens.
  std::vector<int64_t> stop_ids;
  int64_t pad_token_id = 0;  // fills the padding of shorter prompts in a batch
};

// What a generation took, in milliseconds of wall time.
struct GenerationStats {
  double first_token_ms = 0;  // the prompt step: from append_tokens to its tokens chosen
  double decode_ms = 0;       // every step after the prompt step
  int64_t prompt_tokens = 0;  // over the batch, padding excluded
  int64_t decode_steps = 0;   // steps after the prompt step
  int64_t new_tokens = 0;     // generated over the batch, the prompt step's included
  double plan_ms = 0;         // planning, included in the times above
  // Decode steps per second (0 before the second step).
  double decode_tokens_per_second() const {
    return decode_ms > 0 ? double(decode_steps) * 1000.0 / decode_ms : 0;
  }
};

class Generator {
 public:
  // Recognises the decoder form of `engine`'s model (above) and checks
  // `params`; the engine must outlive the generator, and is used by it alone
  // while it generates. Errors name the input or parameter and the rule.
  static Result<std::unique_ptr<Generator>> create(Engine& engine, GeneratorParams params);
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // The prompt: one row of token ids per sequence (the batch size is the
  // number of rows; shorter rows are padded). Runs the prompt step and chooses
  // each sequence's first new token. A later call (batch 1 only) appends more
  // tokens to the sequence and runs them as one step.
  Status append_tokens(const std::vector<std::vector<int64_t>>& rows);
  // One decode step: feeds each sequence's last token, chooses the next.
  // Sequences that are done get pad_token_id and are not extended.
  Status generate_next_token();
  bool is_done() const;  // every sequence is done
  // The token each sequence chose in the last step (pad_token_id for a
  // sequence that was already done).
  std::vector<int64_t> next_tokens() const;
  // Prompt and generated ids of sequence `b`, padding excluded.
  const std::vector<int64_t>& sequence(size_t b) const;
  size_t batch_size() const;
  // The logits of the last step, one row of vocab_size floats per sequence.
  const std::vector<float>& last_logits() const;
  int64_t vocab_size() const;
  const GenerationStats& stats() const;
  const GeneratorParams& params() const;
  // "genai" or "optimum".
  const char* form() const;

 private:
  struct State;
  explicit Generator(std::unique_ptr<State> state);
  Status append_more(const std::vector<int64_t>& tokens, size_t rows,
                     std::chrono::steady_clock::time_point t0);
  std::unique_ptr<State> s_;
};

struct GenerateResult {
  std::vector<std::vector<int64_t>> sequences;   // per prompt: prompt + generated ids
  std::vector<std::vector<int64_t>> new_tokens;  // per prompt: generated ids only
  GenerationStats stats;
};

// The whole loop in one call: append_tokens(prompts), then
// generate_next_token() until is_done().
Result<GenerateResult> generate(Engine& engine, const std::vector<std::vector<int64_t>>& prompts,
                                const GeneratorParams& params);

}  // namespace onnx_prepack
