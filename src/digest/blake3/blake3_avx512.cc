// BLAKE3 hash_many with AVX-512: 16 inputs at a time, one input per 32-bit lane, native
// 32-bit rotates (vprord). Fewer than 16 inputs go to the AVX2 path. Built with
// -mavx512f/bw/dq/vl; reached only when the CPU and OS support them (dispatch).
#include <immintrin.h>

#include "digest/blake3/blake3_kernels.h"

// GCC 12 reports its own _mm512_undefined_epi32() inside _mm512_ror_epi32 as maybe
// uninitialized; the intrinsic's result does not depend on it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace onnx_prepack::digest::blake3 {
namespace {

#define OP_B3_INLINE static inline __attribute__((always_inline))

OP_B3_INLINE __m512i add(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }
OP_B3_INLINE __m512i xor_(__m512i a, __m512i b) { return _mm512_xor_si512(a, b); }
OP_B3_INLINE __m512i rot16(__m512i x) { return _mm512_ror_epi32(x, 16); }
OP_B3_INLINE __m512i rot12(__m512i x) { return _mm512_ror_epi32(x, 12); }
OP_B3_INLINE __m512i rot8(__m512i x) { return _mm512_ror_epi32(x, 8); }
OP_B3_INLINE __m512i rot7(__m512i x) { return _mm512_ror_epi32(x, 7); }

// One round: the four column G functions, then the four diagonal ones, in lockstep.
OP_B3_INLINE void round16(__m512i v[16], const __m512i m[16], const uint8_t s[16]) {
  v[0] = add(add(v[0], m[s[0]]), v[4]);
  v[1] = add(add(v[1], m[s[2]]), v[5]);
  v[2] = add(add(v[2], m[s[4]]), v[6]);
  v[3] = add(add(v[3], m[s[6]]), v[7]);
  v[12] = rot16(xor_(v[12], v[0]));
  v[13] = rot16(xor_(v[13], v[1]));
  v[14] = rot16(xor_(v[14], v[2]));
  v[15] = rot16(xor_(v[15], v[3]));
  v[8] = add(v[8], v[12]);
  v[9] = add(v[9], v[13]);
  v[10] = add(v[10], v[14]);
  v[11] = add(v[11], v[15]);
  v[4] = rot12(xor_(v[4], v[8]));
  v[5] = rot12(xor_(v[5], v[9]));
  v[6] = rot12(xor_(v[6], v[10]));
  v[7] = rot12(xor_(v[7], v[11]));
  v[0] = add(add(v[0], m[s[1]]), v[4]);
  v[1] = add(add(v[1], m[s[3]]), v[5]);
  v[2] = add(add(v[2], m[s[5]]), v[6]);
  v[3] = add(add(v[3], m[s[7]]), v[7]);
  v[12] = rot8(xor_(v[12], v[0]));
  v[13] = rot8(xor_(v[13], v[1]));
  v[14] = rot8(xor_(v[14], v[2]));
  v[15] = rot8(xor_(v[15], v[3]));
  v[8] = add(v[8], v[12]);
  v[9] = add(v[9], v[13]);
  v[10] = add(v[10], v[14]);
  v[11] = add(v[11], v[15]);
  v[4] = rot7(xor_(v[4], v[8]));
  v[5] = rot7(xor_(v[5], v[9]));
  v[6] = rot7(xor_(v[6], v[10]));
  v[7] = rot7(xor_(v[7], v[11]));

  v[0] = add(add(v[0], m[s[8]]), v[5]);
  v[1] = add(add(v[1], m[s[10]]), v[6]);
  v[2] = add(add(v[2], m[s[12]]), v[7]);
  v[3] = add(add(v[3], m[s[14]]), v[4]);
  v[15] = rot16(xor_(v[15], v[0]));
  v[12] = rot16(xor_(v[12], v[1]));
  v[13] = rot16(xor_(v[13], v[2]));
  v[14] = rot16(xor_(v[14], v[3]));
  v[10] = add(v[10], v[15]);
  v[11] = add(v[11], v[12]);
  v[8] = add(v[8], v[13]);
  v[9] = add(v[9], v[14]);
  v[5] = rot12(xor_(v[5], v[10]));
  v[6] = rot12(xor_(v[6], v[11]));
  v[7] = rot12(xor_(v[7], v[8]));
  v[4] = rot12(xor_(v[4], v[9]));
  v[0] = add(add(v[0], m[s[9]]), v[5]);
  v[1] = add(add(v[1], m[s[11]]), v[6]);
  v[2] = add(add(v[2], m[s[13]]), v[7]);
  v[3] = add(add(v[3], m[s[15]]), v[4]);
  v[15] = rot8(xor_(v[15], v[0]));
  v[12] = rot8(xor_(v[12], v[1]));
  v[13] = rot8(xor_(v[13], v[2]));
  v[14] = rot8(xor_(v[14], v[3]));
  v[10] = add(v[10], v[15]);
  v[11] = add(v[11], v[12]);
  v[8] = add(v[8], v[13]);
  v[9] = add(v[9], v[14]);
  v[5] = rot7(xor_(v[5], v[10]));
  v[6] = rot7(xor_(v[6], v[11]));
  v[7] = rot7(xor_(v[7], v[8]));
  v[4] = rot7(xor_(v[4], v[9]));
}

// 16x16 transpose of 32-bit words: row i (input i's block) -> vector w (word w of all inputs).
OP_B3_INLINE void transpose16(__m512i x[16]) {
  __m512i u[16];
  // Rows 4g..4g+3: after two unpack stages, u[4g+k] holds in 128-bit lane j the word 4j+k
  // of those four rows.
  for (int g = 0; g < 4; ++g) {
    __m512i* r = x + 4 * g;
    __m512i t0 = _mm512_unpacklo_epi32(r[0], r[1]);
    __m512i t1 = _mm512_unpackhi_epi32(r[0], r[1]);
    __m512i t2 = _mm512_unpacklo_epi32(r[2], r[3]);
    __m512i t3 = _mm512_unpackhi_epi32(r[2], r[3]);
    u[4 * g + 0] = _mm512_unpacklo_epi64(t0, t2);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t0, t2);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t1, t3);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t1, t3);
  }
  // For each k, a 4x4 transpose of 128-bit lanes across the four groups.
  for (int k = 0; k < 4; ++k) {
    __m512i a0 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x44);
    __m512i a1 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xEE);
    __m512i b0 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x44);
    __m512i b1 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xEE);
    x[0 + k] = _mm512_shuffle_i32x4(a0, b0, 0x88);
    x[4 + k] = _mm512_shuffle_i32x4(a0, b0, 0xDD);
    x[8 + k] = _mm512_shuffle_i32x4(a1, b1, 0x88);
    x[12 + k] = _mm512_shuffle_i32x4(a1, b1, 0xDD);
  }
}

// `next` (or nullptr) are the inputs of the following call: their blocks are prefetched in
// step with ours, a whole group ahead of use, which hides memory latency on large inputs.
static void hash16(const uint8_t* const* inputs, const uint8_t* const* next, size_t blocks,
                   const uint32_t key[8], uint64_t counter, bool increment_counter, uint8_t flags,
                   uint8_t flags_start, uint8_t flags_end, uint8_t* out) {
  __m512i h[8];
  for (int i = 0; i < 8; ++i) h[i] = _mm512_set1_epi32(int(key[i]));
  alignas(64) uint32_t lo[16];
  alignas(64) uint32_t hi[16];
  for (int i = 0; i < 16; ++i) {
    uint64_t c = counter + (increment_counter ? uint64_t(i) : 0);
    lo[i] = uint32_t(c);
    hi[i] = uint32_t(c >> 32);
  }
  const __m512i counter_lo = _mm512_load_si512(lo);
  const __m512i counter_hi = _mm512_load_si512(hi);
  uint8_t block_flags = flags | flags_start;
  for (size_t b = 0; b < blocks; ++b) {
    if (b + 1 == blocks) block_flags |= flags_end;
    const size_t offset = b * kBlockLen;
    __m512i m[16];
    for (int i = 0; i < 16; ++i) m[i] = _mm512_loadu_si512(inputs[i] + offset);
    if (next != nullptr) {
      for (int i = 0; i < 16; ++i) {
        _mm_prefetch(reinterpret_cast<const char*>(next[i] + offset), _MM_HINT_T0);
      }
    }
    transpose16(m);
    __m512i v[16] = {
        h[0],
        h[1],
        h[2],
        h[3],
        h[4],
        h[5],
        h[6],
        h[7],
        _mm512_set1_epi32(int(kIv[0])),
        _mm512_set1_epi32(int(kIv[1])),
        _mm512_set1_epi32(int(kIv[2])),
        _mm512_set1_epi32(int(kIv[3])),
        counter_lo,
        counter_hi,
        _mm512_set1_epi32(int(kBlockLen)),
        _mm512_set1_epi32(int(block_flags)),
    };
    round16(v, m, kMsgSchedule[0]);
    round16(v, m, kMsgSchedule[1]);
    round16(v, m, kMsgSchedule[2]);
    round16(v, m, kMsgSchedule[3]);
    round16(v, m, kMsgSchedule[4]);
    round16(v, m, kMsgSchedule[5]);
    round16(v, m, kMsgSchedule[6]);
    for (int i = 0; i < 8; ++i) h[i] = xor_(v[i], v[i + 8]);
    block_flags = flags;
  }
  // Lane i of h[w] is word w of input i's chaining value.
  alignas(64) uint32_t words[8][16];
  for (int w = 0; w < 8; ++w) _mm512_store_si512(words[w], h[w]);
  for (int i = 0; i < 16; ++i) {
    uint32_t* cv = reinterpret_cast<uint32_t*>(out + 32 * i);
    __m256i row = _mm256_i32gather_epi32(reinterpret_cast<const int*>(&words[0][i]),
                                         _mm256_setr_epi32(0, 16, 32, 48, 64, 80, 96, 112), 4);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(cv), row);
  }
}

}  // namespace

void hash_many_avx512(const uint8_t* const* inputs, size_t num_inputs, size_t blocks,
                      const uint32_t key[8], uint64_t counter, bool increment_counter,
                      uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint8_t* out) {
  while (num_inputs >= 16) {
    const uint8_t* const* next = num_inputs >= 32 ? inputs + 16 : nullptr;
    hash16(inputs, next, blocks, key, counter, increment_counter, flags, flags_start, flags_end,
           out);
    if (increment_counter) counter += 16;
    inputs += 16;
    num_inputs -= 16;
    out += 16 * kOutLen;
  }
  hash_many_avx2(inputs, num_inputs, blocks, key, counter, increment_counter, flags, flags_start,
                 flags_end, out);
}

}  // namespace onnx_prepack::digest::blake3
