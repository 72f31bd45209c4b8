// BLAKE3 hash_many with AVX2: 8 inputs at a time, one input per 32-bit lane ("transposed"
// state). Built with -mavx2; reached only when the CPU and OS support AVX2 (dispatch).
#include <immintrin.h>

#include "digest/blake3/blake3_kernels.h"

namespace onnx_prepack::digest::blake3 {
namespace {

#define OP_B3_INLINE static inline __attribute__((always_inline))

OP_B3_INLINE __m256i add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
OP_B3_INLINE __m256i xor_(__m256i a, __m256i b) { return _mm256_xor_si256(a, b); }
OP_B3_INLINE __m256i rot16(__m256i x) {
  return _mm256_shuffle_epi8(
      x, _mm256_set_epi8(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2, 13, 12, 15, 14, 9, 8,
                         11, 10, 5, 4, 7, 6, 1, 0, 3, 2));
}
OP_B3_INLINE __m256i rot12(__m256i x) {
  return _mm256_or_si256(_mm256_srli_epi32(x, 12), _mm256_slli_epi32(x, 20));
}
OP_B3_INLINE __m256i rot8(__m256i x) {
  return _mm256_shuffle_epi8(
      x, _mm256_set_epi8(12, 15, 14, 13, 8, 11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1, 12, 15, 14, 13, 8,
                         11, 10, 9, 4, 7, 6, 5, 0, 3, 2, 1));
}
OP_B3_INLINE __m256i rot7(__m256i x) {
  return _mm256_or_si256(_mm256_srli_epi32(x, 7), _mm256_slli_epi32(x, 25));
}

// One round: the four column G functions, then the four diagonal ones, in lockstep.
OP_B3_INLINE void round8(__m256i v[16], const __m256i m[16], const uint8_t s[16]) {
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

// Transposes an 8x8 matrix of 32-bit words held as 8 rows.
OP_B3_INLINE void transpose8(__m256i x[8]) {
  __m256i ab_0145 = _mm256_unpacklo_epi32(x[0], x[1]);
  __m256i ab_2367 = _mm256_unpackhi_epi32(x[0], x[1]);
  __m256i cd_0145 = _mm256_unpacklo_epi32(x[2], x[3]);
  __m256i cd_2367 = _mm256_unpackhi_epi32(x[2], x[3]);
  __m256i ef_0145 = _mm256_unpacklo_epi32(x[4], x[5]);
  __m256i ef_2367 = _mm256_unpackhi_epi32(x[4], x[5]);
  __m256i gh_0145 = _mm256_unpacklo_epi32(x[6], x[7]);
  __m256i gh_2367 = _mm256_unpackhi_epi32(x[6], x[7]);
  __m256i abcd_04 = _mm256_unpacklo_epi64(ab_0145, cd_0145);
  __m256i abcd_15 = _mm256_unpackhi_epi64(ab_0145, cd_0145);
  __m256i abcd_26 = _mm256_unpacklo_epi64(ab_2367, cd_2367);
  __m256i abcd_37 = _mm256_unpackhi_epi64(ab_2367, cd_2367);
  __m256i efgh_04 = _mm256_unpacklo_epi64(ef_0145, gh_0145);
  __m256i efgh_15 = _mm256_unpackhi_epi64(ef_0145, gh_0145);
  __m256i efgh_26 = _mm256_unpacklo_epi64(ef_2367, gh_2367);
  __m256i efgh_37 = _mm256_unpackhi_epi64(ef_2367, gh_2367);
  x[0] = _mm256_permute2x128_si256(abcd_04, efgh_04, 0x20);
  x[1] = _mm256_permute2x128_si256(abcd_15, efgh_15, 0x20);
  x[2] = _mm256_permute2x128_si256(abcd_26, efgh_26, 0x20);
  x[3] = _mm256_permute2x128_si256(abcd_37, efgh_37, 0x20);
  x[4] = _mm256_permute2x128_si256(abcd_04, efgh_04, 0x31);
  x[5] = _mm256_permute2x128_si256(abcd_15, efgh_15, 0x31);
  x[6] = _mm256_permute2x128_si256(abcd_26, efgh_26, 0x31);
  x[7] = _mm256_permute2x128_si256(abcd_37, efgh_37, 0x31);
}

// Loads block `b` of the 8 inputs as 16 message vectors (vector w = word w of every input).
// `next` (or nullptr) are the inputs of the following call: their blocks are prefetched in
// step with ours, a whole group ahead of use.
OP_B3_INLINE void load_msg8(const uint8_t* const* inputs, const uint8_t* const* next, size_t offset,
                            __m256i m[16]) {
  for (int i = 0; i < 8; ++i) {
    m[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(inputs[i] + offset));
    m[8 + i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(inputs[i] + offset + 32));
  }
  if (next != nullptr) {
    for (int i = 0; i < 8; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(next[i] + offset), _MM_HINT_T0);
    }
  }
  transpose8(m);
  transpose8(m + 8);
}

static void hash8(const uint8_t* const* inputs, const uint8_t* const* next, size_t blocks,
                  const uint32_t key[8], uint64_t counter, bool increment_counter, uint8_t flags,
                  uint8_t flags_start, uint8_t flags_end, uint8_t* out) {
  __m256i h[8];
  for (int i = 0; i < 8; ++i) h[i] = _mm256_set1_epi32(int(key[i]));
  alignas(32) uint32_t lo[8];
  alignas(32) uint32_t hi[8];
  for (int i = 0; i < 8; ++i) {
    uint64_t c = counter + (increment_counter ? uint64_t(i) : 0);
    lo[i] = uint32_t(c);
    hi[i] = uint32_t(c >> 32);
  }
  const __m256i counter_lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo));
  const __m256i counter_hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi));
  uint8_t block_flags = flags | flags_start;
  for (size_t b = 0; b < blocks; ++b) {
    if (b + 1 == blocks) block_flags |= flags_end;
    __m256i m[16];
    load_msg8(inputs, next, b * kBlockLen, m);
    __m256i v[16] = {
        h[0],
        h[1],
        h[2],
        h[3],
        h[4],
        h[5],
        h[6],
        h[7],
        _mm256_set1_epi32(int(kIv[0])),
        _mm256_set1_epi32(int(kIv[1])),
        _mm256_set1_epi32(int(kIv[2])),
        _mm256_set1_epi32(int(kIv[3])),
        counter_lo,
        counter_hi,
        _mm256_set1_epi32(int(kBlockLen)),
        _mm256_set1_epi32(int(block_flags)),
    };
    round8(v, m, kMsgSchedule[0]);
    round8(v, m, kMsgSchedule[1]);
    round8(v, m, kMsgSchedule[2]);
    round8(v, m, kMsgSchedule[3]);
    round8(v, m, kMsgSchedule[4]);
    round8(v, m, kMsgSchedule[5]);
    round8(v, m, kMsgSchedule[6]);
    for (int i = 0; i < 8; ++i) h[i] = xor_(v[i], v[i + 8]);
    block_flags = flags;
  }
  transpose8(h);
  for (int i = 0; i < 8; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * i), h[i]);
}

}  // namespace

void hash_many_avx2(const uint8_t* const* inputs, size_t num_inputs, size_t blocks,
                    const uint32_t key[8], uint64_t counter, bool increment_counter, uint8_t flags,
                    uint8_t flags_start, uint8_t flags_end, uint8_t* out) {
  while (num_inputs >= 8) {
    const uint8_t* const* next = num_inputs >= 16 ? inputs + 8 : nullptr;
    hash8(inputs, next, blocks, key, counter, increment_counter, flags, flags_start, flags_end,
          out);
    if (increment_counter) counter += 8;
    inputs += 8;
    num_inputs -= 8;
    out += 8 * kOutLen;
  }
  hash_many_ref(inputs, num_inputs, blocks, key, counter, increment_counter, flags, flags_start,
                flags_end, out);
}

}  // namespace onnx_prepack::digest::blake3
