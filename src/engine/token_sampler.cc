#include "engine/token_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace onnx_prepack::engine {

TokenSampler::TokenSampler(SamplingOptions options, uint64_t seed)
    : options_(options), state_(seed) {}

double TokenSampler::uniform() {
  // splitmix64: a full-period 64-bit sequence; the top 53 bits make the double.
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

int64_t TokenSampler::choose(std::span<const float> logits) {
  const int64_t n = int64_t(logits.size());
  if (!options_.do_sample) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (logits[size_t(i)] > logits[size_t(best)] || std::isnan(logits[size_t(best)])) best = i;
    }
    return best;
  }
  // Candidates, most likely first (ties: lower id first, so the order is total).
  const int64_t k = options_.top_k > 0 ? std::min(options_.top_k, n) : n;
  order_.resize(size_t(n));
  std::iota(order_.begin(), order_.end(), int64_t(0));
  auto more_likely = [&](int64_t a, int64_t b) {
    const float la = std::isnan(logits[size_t(a)]) ? -INFINITY : logits[size_t(a)];
    const float lb = std::isnan(logits[size_t(b)]) ? -INFINITY : logits[size_t(b)];
    return la > lb || (la == lb && a < b);
  };
  std::partial_sort(order_.begin(), order_.begin() + k, order_.end(), more_likely);
  order_.resize(size_t(k));
  const double top = double(logits[size_t(order_[0])]);
  mass_.resize(size_t(k));
  double sum = 0;
  for (int64_t i = 0; i < k; ++i) {
    const double l = double(logits[size_t(order_[size_t(i)])]);
    const double p = std::isfinite(l) ? std::exp((l - top) / double(options_.temperature)) : 0.0;
    mass_[size_t(i)] = p;
    sum += p;
  }
  if (!(sum > 0) || !std::isfinite(sum)) return order_[0];  // every logit -inf or NaN
  // top_p: keep the smallest prefix whose probability reaches top_p.
  int64_t keep = k;
  if (options_.top_p < 1.0f) {
    double acc = 0;
    for (int64_t i = 0; i < k; ++i) {
      acc += mass_[size_t(i)] / sum;
      if (acc >= double(options_.top_p)) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept = 0;
  for (int64_t i = 0; i < keep; ++i) kept += mass_[size_t(i)];
  const double u = uniform() * kept;
  double acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += mass_[size_t(i)];
    if (u < acc) return order_[size_t(i)];
  }
  return order_[size_t(keep - 1)];
}

}  // namespace onnx_prepack::engine
