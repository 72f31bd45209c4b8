// BLAKE3 (hash, keyed_hash and derive_key modes, extendable output), written from the
// public specification. Large inputs are hashed as whole subtrees by the widest kernel the
// CPU supports, split across a thread pool; the result never depends on the pool size,
// the kernel, or how the message is cut into update() calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/thread_pool.h"
#include "digest/blake3/blake3_kernels.h"

namespace onnx_prepack::digest::blake3 {

enum class Isa { kPortable, kAvx2, kAvx512 };

// One compression kernel: `degree` inputs per SIMD step.
struct Kernel {
  std::string_view name;  // "portable", "avx2", "avx512"
  Isa isa;
  size_t degree;
  HashManyFn hash_many;
};

// Every kernel of this build, portable first, widest last.
std::span<const Kernel> kernels();
// Whether this CPU and OS can run `k` (CPUID feature bits and XGETBV-enabled state).
bool kernel_supported(const Kernel& k);
// The widest supported kernel, detected once.
const Kernel& best_kernel();
// The kernel named `name`, or nullptr.
const Kernel* find_kernel(std::string_view name);

class Hasher {
 public:
  // Plain hash mode. kernel nullptr = best_kernel(); pool nullptr = calling thread only.
  explicit Hasher(const Kernel* kernel = nullptr, base::ThreadPool* pool = nullptr);
  static Hasher keyed(std::span<const uint8_t, kKeyLen> key, const Kernel* kernel = nullptr,
                      base::ThreadPool* pool = nullptr);
  static Hasher derive_key(std::string_view context, const Kernel* kernel = nullptr,
                           base::ThreadPool* pool = nullptr);

  // Appends bytes to the message. Whole subtrees are hashed straight from `data`; at most
  // one partial chunk (under 1 KiB) is buffered between calls.
  void update(std::span<const uint8_t> data);
  // Writes out.size() bytes of output (32 is the default hash; longer is the XOF stream).
  // Does not change the state: more update() calls may follow.
  void finalize(std::span<uint8_t> out) const;

  // Smallest subtree, in bytes, split across the pool (tests lower it).
  void set_parallel_min_bytes(uint64_t bytes) { parallel_min_bytes_ = bytes; }

 private:
  Hasher(const uint32_t key[8], uint8_t flags, const Kernel* kernel, base::ThreadPool* pool);
  void push_cv(const uint8_t cv[kOutLen], uint64_t chunk_index);
  void merge_stack(uint64_t total_chunks);

  static constexpr size_t kMaxStack = 64;

  uint32_t key_[8];
  uint8_t flags_;
  const Kernel* kernel_;
  base::ThreadPool* pool_;
  uint64_t parallel_min_bytes_;
  uint64_t chunk_counter_ = 0;  // index of the chunk in buf_
  size_t buf_len_ = 0;
  size_t stack_len_ = 0;
  uint8_t buf_[kChunkLen];
  uint8_t stack_[kMaxStack][kOutLen];
};

}  // namespace onnx_prepack::digest::blake3
