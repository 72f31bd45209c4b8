// A fast 64-bit hash of byte streams, for names derived from content (the
// data file a compile writes is named by its bytes, so one input gives one
// output). Not a digest: nothing trusts it for integrity (format.md §4.6 digests do
// that). Base layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace onnx_prepack::base {

class ContentHash {
 public:
  // Feeds bytes; the value depends only on the concatenation of all updates.
  void update(std::span<const uint8_t> bytes);
  uint64_t value() const;

 private:
  void block(const uint8_t* p);  // 32 bytes into the four lanes
  uint64_t lanes_[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                        0x082efa98ec4e6c89ull};
  uint8_t tail_[32] = {};
  size_t tail_size_ = 0;
  uint64_t length_ = 0;
};

}  // namespace onnx_prepack::base
