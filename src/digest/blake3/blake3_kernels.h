// BLAKE3 compression kernels: constants and the per-ISA entry points.
// Included by the ISA files (blake3_ref.cc, blake3_avx2.cc, blake3_avx512.cc), so it holds
// declarations and constant data only: no inline functions (see docs/digest.md, "Kernels").
#pragma once

#include <cstddef>
#include <cstdint>

namespace onnx_prepack::digest::blake3 {

inline constexpr size_t kBlockLen = 64;
inline constexpr size_t kChunkLen = 1024;
inline constexpr size_t kBlocksPerChunk = kChunkLen / kBlockLen;
inline constexpr size_t kOutLen = 32;
inline constexpr size_t kKeyLen = 32;

// Domain flags of the BLAKE3 specification, section 2.1.
enum Flag : uint8_t {
  kChunkStart = 1 << 0,
  kChunkEnd = 1 << 1,
  kParent = 1 << 2,
  kRoot = 1 << 3,
  kKeyedHash = 1 << 4,
  kDeriveKeyContext = 1 << 5,
  kDeriveKeyMaterial = 1 << 6,
};

inline constexpr uint32_t kIv[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                                    0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

// Message word order of each of the 7 rounds: round r+1 applies the specification's
// permutation {2,6,3,10,7,0,4,13,1,11,12,5,9,14,15,8} to round r.
inline constexpr uint8_t kMsgSchedule[7][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8},
    {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1},
    {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6},
    {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4},
    {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7},
    {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13},
};

// Compresses one block into the chaining value `cv` (8 words).
void compress_in_place_ref(uint32_t cv[8], const uint8_t block[kBlockLen], uint8_t block_len,
                           uint64_t counter, uint8_t flags);

// Full 64-byte output of one compression (extendable output and root bytes).
void compress_xof_ref(const uint32_t cv[8], const uint8_t block[kBlockLen], uint8_t block_len,
                      uint64_t counter, uint8_t flags, uint8_t out[64]);

// Hashes `num_inputs` inputs of `blocks` full blocks each, starting from `key`, and writes
// one 32-byte chaining value per input to out[32 * i]. Input i uses counter + i when
// `increment_counter` (chunks) and `counter` otherwise (parents). The first block adds
// `flags_start`, the last `flags_end`. The _avx2 and _avx512 versions process 8 and 16
// inputs at a time, the rest through narrower paths; all write identical bytes.
void hash_many_ref(const uint8_t* const* inputs, size_t num_inputs, size_t blocks,
                   const uint32_t key[8], uint64_t counter, bool increment_counter, uint8_t flags,
                   uint8_t flags_start, uint8_t flags_end, uint8_t* out);
void hash_many_avx2(const uint8_t* const* inputs, size_t num_inputs, size_t blocks,
                    const uint32_t key[8], uint64_t counter, bool increment_counter, uint8_t flags,
                    uint8_t flags_start, uint8_t flags_end, uint8_t* out);
void hash_many_avx512(const uint8_t* const* inputs, size_t num_inputs, size_t blocks,
                      const uint32_t key[8], uint64_t counter, bool increment_counter,
                      uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t* out);

using HashManyFn = void (*)(const uint8_t* const*, size_t, size_t, const uint32_t*, uint64_t, bool,
                            uint8_t, uint8_t, uint8_t, uint8_t*);

}  // namespace onnx_prepack::digest::blake3
