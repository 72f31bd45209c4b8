#include "base/content_hash.h"

#include <algorithm>
#include <cstring>

namespace onnx_prepack::base {
namespace {

constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 32);
}

}  // namespace

void ContentHash::block(const uint8_t* p) {
  for (int i = 0; i < 4; ++i) {
    const uint64_t w = load64(p + 8 * i);
    lanes_[i] = (lanes_[i] ^ w) * kMul;
    lanes_[i] = (lanes_[i] << 29) | (lanes_[i] >> 35);
  }
}

void ContentHash::update(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  length_ += n;
  if (tail_size_ > 0) {
    const size_t take = std::min(n, sizeof(tail_) - tail_size_);
    std::memcpy(tail_ + tail_size_, p, take);
    tail_size_ += take;
    p += take;
    n -= take;
    if (tail_size_ < sizeof(tail_)) return;
    block(tail_);
    tail_size_ = 0;
  }
  for (; n >= 32; p += 32, n -= 32) block(p);
  if (n > 0) std::memcpy(tail_, p, n);
  tail_size_ = n;
}

uint64_t ContentHash::value() const {
  uint64_t h = mix(length_);
  for (uint64_t lane : lanes_) h = mix(h ^ mix(lane));
  for (size_t i = 0; i < tail_size_; ++i) h = mix(h ^ (uint64_t(tail_[i]) << (8 * (i % 8))) ^ i);
  return h;
}

}  // namespace onnx_prepack::base
