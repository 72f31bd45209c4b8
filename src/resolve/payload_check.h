// Payload integrity (format.md §4.6, bound as docs/loading.md decides): every entry
// we write records `payload_digest`, the lower-case hex of
//   H("onnx-prepack-payload-v1" 0x00 || binding || H(payload bytes as stored))
// under the entry's digest_algorithm, where the binding names the source digest,
// the format (type name, format_version), the value dims and the lineage
// metadata. A payload spliced into an entry written for another source or
// format therefore fails like a flipped byte. A load checks it under `full`,
// trusts a memo record of H(payload) for the payload's file range under `memo`
// (the binding is recomputed, never memoised), and checks nothing under `off`.
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

// What payload_digest binds besides the bytes: the entry's source_digest, the
// resolved type's name and format_version, the value dims, and its lineage.* and
// attr.* metadata in key order, each length-prefixed.
std::string payload_binding(const onnx::CompiledTensorProto& entry,
                            const onnx::StructTypeProto& type);

// The recorded form: H(prefix || binding || inner), inner = H(payload).
digest::Digest bound_payload_digest(digest::Algorithm algorithm, std::string_view binding,
                                    const digest::Digest& inner);

// Sets (or replaces) the entry's payload_digest (its source_digest, value dims
// and lineage metadata must already be set); returns inner = H(payload), what a
// memo record of the payload's range holds.
digest::Digest set_payload_digest(onnx::CompiledTensorProto& entry,
                                  const onnx::StructTypeProto& type, digest::Algorithm algorithm,
                                  std::span<const uint8_t> payload,
                                  base::ThreadPool* pool = nullptr);

// The struct type an entry's value names in `model` (catalogue or inline), or null.
const onnx::StructTypeProto* entry_struct_type(const onnx::ModelProto& model,
                                               const onnx::CompiledTensorProto& entry);

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
  std::optional<digest::Digest> inner;  // H(payload) when hashed or memoised
  bool usable() const {
    return verdict == PayloadVerdict::kIntact || verdict == PayloadVerdict::kUnchecked;
  }
};

// H(payload), the inner digest a check compares: a trusted memo record of
// `where` when `memo` is non-null and has one, else hashed on `pool`. Writes no
// record: check_payload does, once the bound digest matched.
struct PayloadHash {
  digest::Digest inner{};
  uint64_t bytes_hashed = 0;
  bool memo_used = false;
  std::optional<MemoKey> memo_key;  // where a record goes (memo on, file unchanged since mapping)
};
PayloadHash hash_payload(std::span<const uint8_t> payload, digest::Algorithm algorithm,
                         const MemoStore* memo, const PayloadLocation& where,
                         base::ThreadPool* pool);

// Applies format.md §4.6 under a policy: `hash` = false is `off` (kUnchecked, even
// without a digest); `memo` non-null trusts (and writes) a memo record for
// `where`. `context` names the entry in details.
// `type` is the entry's resolved struct type (null: unverifiable). `hashed`:
// hash_payload's result taken ahead (the resolver hashes payloads in parallel
// before resolving), used instead of hashing again.
PayloadCheck check_payload(const onnx::CompiledTensorProto& entry,
                           const onnx::StructTypeProto* type, std::span<const uint8_t> payload,
                           bool hash, const MemoStore* memo, const PayloadLocation& where,
                           base::ThreadPool* pool, std::string_view context,
                           const PayloadHash* hashed = nullptr);

// For writers copying an existing entry of `model`: false when it records a
// payload_digest that `payload` does not match (the entry is dropped, so
// corruption is never re-certified); an entry without one stays unverifiable.
// `inner` receives H(payload) when it was checked.
bool copied_payload_intact(const onnx::ModelProto& model, const onnx::CompiledTensorProto& entry,
                           std::span<const uint8_t> payload, base::ThreadPool* pool,
                           std::optional<digest::Digest>* inner = nullptr);

// The memo key of compiled_tensors[index]'s external payload in `model` as its
// data file is now (as check_payload keys it), and the payload_digest the entry
// records (hex); for `compile`, which records H(payload) of what it just wrote.
struct PayloadMemo {
  MemoKey key;
  std::string recorded;
};
Result<PayloadMemo> payload_memo_for(const format::Model& model, int index);

}  // namespace onnx_prepack::resolve
