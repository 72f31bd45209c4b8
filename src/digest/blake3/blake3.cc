// BLAKE3 tree hashing: the chunk buffer, the stack of subtree chaining values, and the
// subtree hashing that feeds the SIMD kernels and the thread pool (docs/digest.md, "BLAKE3").
#include "digest/blake3/blake3.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <vector>

namespace onnx_prepack::digest::blake3 {
namespace {

static_assert(std::endian::native == std::endian::little, "BLAKE3 words are read in place");

// Chunks hashed per work unit: their chaining values (32 KiB) stay in L1/L2.
constexpr uint64_t kUnitMaxChunks = 1024;
// Default smallest subtree split across threads.
constexpr uint64_t kDefaultParallelMinBytes = uint64_t(1) << 20;
// Parent nodes combined per hash_many call while reducing a level.
constexpr size_t kParentBatch = 512;

struct Context {
  const Kernel* kernel;
  const uint32_t* key;
  uint8_t flags;
};

// The input of the last compression of a node: what the root output is computed from.
struct Output {
  uint32_t cv[8];
  uint8_t block[kBlockLen];
  uint8_t block_len;
  uint64_t counter;
  uint8_t flags;

  void chaining_value(uint8_t out[kOutLen]) const {
    uint32_t c[8];
    std::memcpy(c, cv, sizeof c);
    compress_in_place_ref(c, block, block_len, counter, flags);
    std::memcpy(out, c, kOutLen);
  }

  void root_bytes(uint8_t* out, size_t len) const {
    uint8_t buf[64];
    for (uint64_t block_index = 0; len > 0; ++block_index) {
      compress_xof_ref(cv, block, block_len, block_index, flags | kRoot, buf);
      size_t take = std::min<size_t>(len, 64);
      std::memcpy(out, buf, take);
      out += take;
      len -= take;
    }
  }
};

// A chunk of 0..1024 bytes with everything but its last block compressed.
Output chunk_output(const Context& c, const uint8_t* data, size_t len, uint64_t chunk_index) {
  Output o;
  std::memcpy(o.cv, c.key, sizeof o.cv);
  const size_t blocks = std::max<size_t>(1, (len + kBlockLen - 1) / kBlockLen);
  uint8_t start = kChunkStart;
  for (size_t b = 0; b + 1 < blocks; ++b) {
    compress_in_place_ref(o.cv, data + b * kBlockLen, uint8_t(kBlockLen), chunk_index,
                          c.flags | start);
    start = 0;
  }
  const size_t last = (blocks - 1) * kBlockLen;
  std::memset(o.block, 0, sizeof o.block);
  if (len > last) std::memcpy(o.block, data + last, len - last);
  o.block_len = uint8_t(len - last);
  o.counter = chunk_index;
  o.flags = c.flags | start | kChunkEnd;
  return o;
}

Output parent_output(const Context& c, const uint8_t left[kOutLen], const uint8_t right[kOutLen]) {
  Output o;
  std::memcpy(o.cv, c.key, sizeof o.cv);
  std::memcpy(o.block, left, kOutLen);
  std::memcpy(o.block + kOutLen, right, kOutLen);
  o.block_len = uint8_t(kBlockLen);
  o.counter = 0;
  o.flags = c.flags | kParent;
  return o;
}

// Chaining values of `n` full chunks at `data`, the first with index `chunk_index`.
void chunk_cvs(const Context& c, const uint8_t* data, size_t n, uint64_t chunk_index,
               uint8_t* out) {
  const uint8_t* ptrs[kUnitMaxChunks];
  assert(n <= kUnitMaxChunks);
  for (size_t i = 0; i < n; ++i) ptrs[i] = data + i * kChunkLen;
  c.kernel->hash_many(ptrs, n, kBlocksPerChunk, c.key, chunk_index, true, c.flags, kChunkStart,
                      kChunkEnd, out);
}

// Combines adjacent pairs level by level (an odd last node moves up unchanged) until
// `target` (1 or 2) nodes remain. This is the BLAKE3 tree over aligned subtrees. `cvs`
// and `tmp` hold `count` nodes each; returns whichever holds the result.
uint8_t* reduce(const Context& c, uint8_t* cvs, uint8_t* tmp, size_t count, size_t target) {
  const uint8_t* ptrs[kParentBatch];
  while (count > target) {
    const size_t pairs = count / 2;
    for (size_t first = 0; first < pairs; first += kParentBatch) {
      const size_t n = std::min(kParentBatch, pairs - first);
      for (size_t i = 0; i < n; ++i) ptrs[i] = cvs + 2 * kOutLen * (first + i);
      c.kernel->hash_many(ptrs, n, 1, c.key, 0, false, c.flags | kParent, 0, 0,
                          tmp + kOutLen * first);
    }
    if (count % 2) std::memcpy(tmp + kOutLen * pairs, cvs + kOutLen * (count - 1), kOutLen);
    count = pairs + count % 2;
    std::swap(cvs, tmp);
  }
  return cvs;
}

// The single chaining value of `units` aligned units of `unit` full chunks each.
void units_cvs(const Context& c, const uint8_t* data, uint64_t unit, uint64_t first_unit,
               uint64_t end_unit, uint64_t chunk_index, uint8_t* out) {
  std::vector<uint8_t> scratch(2 * kUnitMaxChunks * kOutLen);
  for (uint64_t u = first_unit; u < end_unit; ++u) {
    chunk_cvs(c, data + u * unit * kChunkLen, unit, chunk_index + u * unit, scratch.data());
    const uint8_t* cv =
        reduce(c, scratch.data(), scratch.data() + kUnitMaxChunks * kOutLen, unit, 1);
    std::memcpy(out + u * kOutLen, cv, kOutLen);
  }
}

// `target` (1 or 2) chaining values of the complete subtree of `n` full chunks (a power of
// two, at least `target`) starting at chunk `chunk_index`, which is a multiple of n.
void subtree_cvs(const Context& c, const uint8_t* data, uint64_t n, uint64_t chunk_index,
                 size_t target, uint8_t* out, base::ThreadPool* pool, uint64_t parallel_min) {
  const size_t threads = pool ? pool->size() : 1;
  const bool parallel = threads > 1 && n * kChunkLen >= parallel_min && n >= 2;
  uint64_t unit = std::min(n, kUnitMaxChunks);
  if (parallel) {
    // At least four units per thread so that uneven progress still balances.
    unit = std::clamp<uint64_t>(std::bit_floor(std::max<uint64_t>(1, n / (4 * threads))), 1,
                                kUnitMaxChunks);
  }
  const uint64_t units = n / unit;
  std::vector<uint8_t> cvs(2 * kOutLen * (units == 1 ? n : units));
  if (units == 1) {
    chunk_cvs(c, data, n, chunk_index, cvs.data());
    const uint8_t* r = reduce(c, cvs.data(), cvs.data() + n * kOutLen, n, target);
    std::memcpy(out, r, target * kOutLen);
    return;
  }
  if (parallel) {
    // Many small tasks (about 1 MiB each at the default unit): the last task
    // running bounds how long the other threads sit idle at the end.
    const uint64_t tasks = std::min<uint64_t>(units, 64 * threads);
    pool->parallel_for(tasks, [&](size_t task, size_t) {
      const uint64_t first = units * task / tasks;
      const uint64_t end = units * (task + 1) / tasks;
      units_cvs(c, data, unit, first, end, chunk_index, cvs.data());
    });
  } else {
    units_cvs(c, data, unit, 0, units, chunk_index, cvs.data());
  }
  const uint8_t* r = reduce(c, cvs.data(), cvs.data() + units * kOutLen, units, target);
  std::memcpy(out, r, target * kOutLen);
}

}  // namespace

Hasher::Hasher(const Kernel* kernel, base::ThreadPool* pool) : Hasher(kIv, 0, kernel, pool) {}

Hasher::Hasher(const uint32_t key[8], uint8_t flags, const Kernel* kernel, base::ThreadPool* pool)
    : flags_(flags),
      kernel_(kernel ? kernel : &best_kernel()),
      pool_(pool),
      parallel_min_bytes_(kDefaultParallelMinBytes) {
  std::memcpy(key_, key, sizeof key_);
}

Hasher Hasher::keyed(std::span<const uint8_t, kKeyLen> key, const Kernel* kernel,
                     base::ThreadPool* pool) {
  uint32_t words[8];
  std::memcpy(words, key.data(), sizeof words);
  return Hasher(words, kKeyedHash, kernel, pool);
}

Hasher Hasher::derive_key(std::string_view context, const Kernel* kernel, base::ThreadPool* pool) {
  Hasher ctx(kIv, kDeriveKeyContext, kernel, nullptr);
  ctx.update({reinterpret_cast<const uint8_t*>(context.data()), context.size()});
  uint8_t key[kKeyLen];
  ctx.finalize(key);
  uint32_t words[8];
  std::memcpy(words, key, sizeof words);
  return Hasher(words, kDeriveKeyMaterial, kernel, pool);
}

void Hasher::merge_stack(uint64_t total_chunks) {
  const Context c{kernel_, key_, flags_};
  const size_t keep = size_t(std::popcount(total_chunks));
  while (stack_len_ > keep) {
    parent_output(c, stack_[stack_len_ - 2], stack_[stack_len_ - 1])
        .chaining_value(stack_[stack_len_ - 2]);
    --stack_len_;
  }
}

void Hasher::push_cv(const uint8_t cv[kOutLen], uint64_t chunk_index) {
  // Everything before chunk_index is complete: merge it into whole subtrees first.
  merge_stack(chunk_index);
  assert(stack_len_ < kMaxStack);
  std::memcpy(stack_[stack_len_++], cv, kOutLen);
}

void Hasher::update(std::span<const uint8_t> data) {
  const Context c{kernel_, key_, flags_};
  const uint8_t* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    if (buf_len_ == kChunkLen) {
      // More input follows, so the buffered chunk is not the root.
      uint8_t cv[kOutLen];
      chunk_cvs(c, buf_, 1, chunk_counter_, cv);
      push_cv(cv, chunk_counter_);
      ++chunk_counter_;
      buf_len_ = 0;
    }
    if (buf_len_ > 0 || n <= kChunkLen) {
      const size_t take = std::min(kChunkLen - buf_len_, n);
      std::memcpy(buf_ + buf_len_, p, take);
      buf_len_ += take;
      p += take;
      n -= take;
      continue;
    }
    // Chunk-aligned with more than one chunk left: hash the largest complete subtree that
    // starts here (its size divides chunk_counter_) and fits in the input.
    uint64_t chunks = std::bit_floor(uint64_t(n / kChunkLen));
    while (chunk_counter_ & (chunks - 1)) chunks /= 2;
    if (chunks == 1) {
      uint8_t cv[kOutLen];
      chunk_cvs(c, p, 1, chunk_counter_, cv);
      push_cv(cv, chunk_counter_);
    } else {
      // Push both halves, not their parent: if the input ends here, that parent is the root.
      uint8_t cvs[2 * kOutLen];
      subtree_cvs(c, p, chunks, chunk_counter_, 2, cvs, pool_, parallel_min_bytes_);
      push_cv(cvs, chunk_counter_);
      push_cv(cvs + kOutLen, chunk_counter_ + chunks / 2);
    }
    chunk_counter_ += chunks;
    p += chunks * kChunkLen;
    n -= chunks * kChunkLen;
  }
}

void Hasher::finalize(std::span<uint8_t> out) const {
  const Context c{kernel_, key_, flags_};
  Hasher copy = *this;  // merging changes the stack; finalize does not
  Output o;
  size_t remaining;
  if (copy.buf_len_ > 0 || copy.stack_len_ == 0) {
    copy.merge_stack(copy.chunk_counter_);
    o = chunk_output(c, copy.buf_, copy.buf_len_, copy.chunk_counter_);
    remaining = copy.stack_len_;
  } else {
    // The input ended on a pushed pair of halves: their parent is the last node.
    o = parent_output(c, copy.stack_[copy.stack_len_ - 2], copy.stack_[copy.stack_len_ - 1]);
    remaining = copy.stack_len_ - 2;
  }
  while (remaining > 0) {
    --remaining;
    uint8_t right[kOutLen];
    o.chaining_value(right);
    o = parent_output(c, copy.stack_[remaining], right);
  }
  o.root_bytes(out.data(), out.size());
}

}  // namespace onnx_prepack::digest::blake3
