// Portable BLAKE3 compression: the oracle for the SIMD kernels and the fallback on any CPU.
#include <cstring>

#include "digest/blake3/blake3_kernels.h"

namespace onnx_prepack::digest::blake3 {
namespace {

uint32_t rotr32(uint32_t w, int c) { return (w >> c) | (w << (32 - c)); }

uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

void store_le32(uint8_t* p, uint32_t w) {
  p[0] = uint8_t(w);
  p[1] = uint8_t(w >> 8);
  p[2] = uint8_t(w >> 16);
  p[3] = uint8_t(w >> 24);
}

void g(uint32_t* v, int a, int b, int c, int d, uint32_t x, uint32_t y) {
  v[a] = v[a] + v[b] + x;
  v[d] = rotr32(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = rotr32(v[b] ^ v[c], 12);
  v[a] = v[a] + v[b] + y;
  v[d] = rotr32(v[d] ^ v[a], 8);
  v[c] = v[c] + v[d];
  v[b] = rotr32(v[b] ^ v[c], 7);
}

// Runs the 7 rounds on the 16-word state v.
void compress_state(uint32_t v[16], const uint32_t cv[8], const uint8_t block[kBlockLen],
                    uint8_t block_len, uint64_t counter, uint8_t flags) {
  uint32_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le32(block + 4 * i);
  for (int i = 0; i < 8; ++i) v[i] = cv[i];
  for (int i = 0; i < 4; ++i) v[8 + i] = kIv[i];
  v[12] = uint32_t(counter);
  v[13] = uint32_t(counter >> 32);
  v[14] = block_len;
  v[15] = flags;
  for (int r = 0; r < 7; ++r) {
    const uint8_t* s = kMsgSchedule[r];
    g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
}

}  // namespace

void compress_in_place_ref(uint32_t cv[8], const uint8_t block[kBlockLen], uint8_t block_len,
                           uint64_t counter, uint8_t flags) {
  uint32_t v[16];
  compress_state(v, cv, block, block_len, counter, flags);
  for (int i = 0; i < 8; ++i) cv[i] = v[i] ^ v[i + 8];
}

void compress_xof_ref(const uint32_t cv[8], const uint8_t block[kBlockLen], uint8_t block_len,
                      uint64_t counter, uint8_t flags, uint8_t out[64]) {
  uint32_t v[16];
  compress_state(v, cv, block, block_len, counter, flags);
  for (int i = 0; i < 8; ++i) {
    store_le32(out + 4 * i, v[i] ^ v[i + 8]);
    store_le32(out + 32 + 4 * i, v[i + 8] ^ cv[i]);
  }
}

void hash_many_ref(const uint8_t* const* inputs, size_t num_inputs, size_t blocks,
                   const uint32_t key[8], uint64_t counter, bool increment_counter, uint8_t flags,
                   uint8_t flags_start, uint8_t flags_end, uint8_t* out) {
  for (size_t i = 0; i < num_inputs; ++i) {
    uint32_t cv[8];
    std::memcpy(cv, key, sizeof cv);
    uint8_t block_flags = flags | flags_start;
    for (size_t b = 0; b < blocks; ++b) {
      if (b + 1 == blocks) block_flags |= flags_end;
      compress_in_place_ref(cv, inputs[i] + b * kBlockLen, uint8_t(kBlockLen), counter,
                            block_flags);
      block_flags = flags;
    }
    for (int w = 0; w < 8; ++w) store_le32(out + 32 * i + 4 * w, cv[w]);
    if (increment_counter) ++counter;
  }
}

}  // namespace onnx_prepack::digest::blake3
