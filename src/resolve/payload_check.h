// Payload integrity (SPEC 4.6): every entry we write records `payload_digest`
// (lower-case hex of the digest, under the entry's digest_algorithm, of the
// payload bytes as stored). A load checks it under `full`, trusts a memo record
// of the payload's file range under `memo`, and checks nothing under `off`.
// Resolve layer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "digest/digest.h"
#include "format/model.h"
#include "onnx_prepack.pb.h"
#include "resolve/memo_store.h"

namespace onnx_prepack::resolve {

inline constexpr std::string_view kPayloadDigestKey = "payload_digest";

using MetadataEntries = google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>;

// Lower-case hex digest of `payload` (tree-parallel BLAKE3 with `pool`).
std::string payload_digest_hex(digest::Algorithm algorithm, std::span<const uint8_t> payload,
                               base::ThreadPool* pool = nullptr);

// Sets (or replaces) payload_digest in `metadata`.
void set_payload_digest(MetadataEntries& metadata, digest::Algorithm algorithm,
                        std::span<const uint8_t> payload, base::ThreadPool* pool = nullptr);

// Where a payload's bytes are, for memo records: a mapped file range (external
// payloads), or the model file as a whole (inline raw_data; `file` then is the
// model's identity and path).
struct PayloadLocation {
  std::string path;  // file the bytes live in; empty = unknown (no memo)
  base::FileIdentity identity;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string name;  // "compiled_tensors[3]" or the cache entry folder, part of the key
};

enum class PayloadVerdict { kIntact, kUnchecked, kCorrupt, kUnverifiable };

struct PayloadCheck {
  PayloadVerdict verdict = PayloadVerdict::kIntact;
  std::string detail;  // for kCorrupt / kUnverifiable
  uint64_t bytes_hashed = 0;
  bool memo_used = false;
  bool usable() const {
    return verdict == PayloadVerdict::kIntact || verdict == PayloadVerdict::kUnchecked;
  }
};

// Applies SPEC 4.6 under a policy: `hash` = false is `off` (kUnchecked, even
// without a digest); `memo` non-null trusts (and writes) a memo record for
// `where`. `context` names the entry in details.
PayloadCheck check_payload(const MetadataEntries& metadata, std::string_view algorithm_name,
                           std::span<const uint8_t> payload, bool hash, const MemoStore* memo,
                           const PayloadLocation& where, base::ThreadPool* pool,
                           std::string_view context);

// For writers copying an existing entry: false when it records a
// payload_digest that `payload` does not match (the entry is dropped, so
// corruption is never re-certified); an entry without one stays unverifiable.
bool copied_payload_intact(const onnx::CompiledTensorProto& entry, std::span<const uint8_t> payload,
                           base::ThreadPool* pool);

// The memo key of compiled_tensors[index]'s external payload in `model` as its
// data file is now (as check_payload keys it), and the digest the entry
// records; for `compile`, which records memo entries for what it just wrote.
struct PayloadMemo {
  MemoKey key;
  digest::Digest digest{};
};
Result<PayloadMemo> payload_memo_for(const format::Model& model, int index);

}  // namespace onnx_prepack::resolve
