// Canonical tensor digest, version 1 (format.md §5; docs/digest.md).
// Public entry points of the digest layer; BLAKE3 and SHA-256 live below it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/thread_pool.h"
#include "format/model.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::digest {

enum class Algorithm { kBlake3, kSha256 };

// "blake3" / "sha256", matched exactly (lower-case).
std::optional<Algorithm> algorithm_from_name(std::string_view name);
std::string_view algorithm_name(Algorithm a);
inline constexpr size_t kDigestSize = 32;  // both algorithms
using Digest = std::array<uint8_t, kDigestSize>;

struct DigestOptions {
  Algorithm algorithm = Algorithm::kBlake3;
  // Pool for tree-parallel BLAKE3 of large tensors; nullptr = calling thread only.
  // The digest is identical for every pool size.
  base::ThreadPool* pool = nullptr;
};

struct TensorDigest {
  Digest digest{};
  uint64_t content_bytes = 0;  // canonical content hashed (excludes the header)
};

// Digest of the canonical form of `t` (initializer or Constant-node tensor).
// External data is resolved through `model`. Errors name `context`.
Result<TensorDigest> digest_tensor(const format::Model& model, const onnx::TensorProto& t,
                                   std::string_view context, const DigestOptions& options = {});

// Hash of arbitrary bytes, several spans streamed as one message, no copy.
Digest hash_bytes(Algorithm a, std::span<const std::span<const uint8_t>> parts,
                  base::ThreadPool* pool = nullptr);

}  // namespace onnx_prepack::digest
