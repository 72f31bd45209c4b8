#include "digest/digest.h"

#include "digest/blake3/blake3.h"
#include "digest/canonical_tensor.h"
#include "digest/sha256.h"

namespace onnx_prepack::digest {
namespace {

class Blake3Sink : public ByteSink {
 public:
  explicit Blake3Sink(base::ThreadPool* pool) : hasher_(nullptr, pool) {}
  void update(std::span<const uint8_t> bytes) override { hasher_.update(bytes); }
  Digest finalize() const {
    Digest d{};
    hasher_.finalize(d);
    return d;
  }

 private:
  blake3::Hasher hasher_;
};

class Sha256Sink : public ByteSink {
 public:
  void update(std::span<const uint8_t> bytes) override { sha_.update(bytes); }
  Digest finalize() { return sha_.finalize(); }

 private:
  Sha256 sha_;
};

}  // namespace

std::optional<Algorithm> algorithm_from_name(std::string_view name) {
  if (name == "blake3") return Algorithm::kBlake3;
  if (name == "sha256") return Algorithm::kSha256;
  return std::nullopt;
}

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kBlake3:
      return "blake3";
    case Algorithm::kSha256:
      return "sha256";
  }
  return "?";
}

Result<TensorDigest> digest_tensor(const format::Model& model, const onnx::TensorProto& t,
                                   std::string_view context, const DigestOptions& options) {
  TensorDigest out;
  if (options.algorithm == Algorithm::kBlake3) {
    Blake3Sink sink(options.pool);
    OP_ASSIGN_OR_RETURN(out.content_bytes, write_canonical_tensor(model, t, context, sink));
    out.digest = sink.finalize();
  } else {
    Sha256Sink sink;
    OP_ASSIGN_OR_RETURN(out.content_bytes, write_canonical_tensor(model, t, context, sink));
    out.digest = sink.finalize();
  }
  return out;
}

Digest hash_bytes(Algorithm a, std::span<const std::span<const uint8_t>> parts,
                  base::ThreadPool* pool) {
  if (a == Algorithm::kBlake3) {
    blake3::Hasher h(nullptr, pool);
    for (auto p : parts) h.update(p);
    Digest d{};
    h.finalize(d);
    return d;
  }
  Sha256 sha;
  for (auto p : parts) sha.update(p);
  return sha.finalize();
}

}  // namespace onnx_prepack::digest
