// The choice of the next token from a row of logits (generator.cc): greedy,
// or sampling with temperature, top-k and top-p from a seeded generator whose
// draws are ours (not a standard library distribution), so the same seed
// gives the same tokens on every platform and library.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace onnx_prepack::engine {

struct SamplingOptions {
  bool do_sample = false;
  float temperature = 1.0f;
  int64_t top_k = 0;
  float top_p = 1.0f;
};

class TokenSampler {
 public:
  TokenSampler(SamplingOptions options, uint64_t seed);
  // Greedy: the index of the largest logit, the lowest on ties (a NaN never
  // wins). Sampling: the k most likely (all when top_k is 0), divided by the
  // temperature, softmax in double, cut to the smallest prefix whose mass
  // reaches top_p, one draw.
  int64_t choose(std::span<const float> logits);

 private:
  double uniform();  // [0, 1), 53 bits of splitmix64
  SamplingOptions options_;
  uint64_t state_;
  std::vector<int64_t> order_;  // scratch: candidate ids, most likely first
  std::vector<double> mass_;
};

}  // namespace onnx_prepack::engine
