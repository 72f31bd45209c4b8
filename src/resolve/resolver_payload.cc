// The resolver's payload-integrity rule (format.md §4.6), kept apart from the
// loading rules of resolver.cc. Resolve layer.
#include "resolve/payload_check.h"
#include "resolve/resolver.h"

namespace onnx_prepack::resolve {

PayloadLocation Resolver::payload_location(const Hit& hit, const std::string& name) const {
  PayloadLocation where;
  where.name = name;
  where.length = hit.payload.size();
  if (hit.payload_external && hit.keep_alive != nullptr) {
    // External payloads: the mapped file (model entries) or the cache entry.
    if (hit.entry >= 0) {
      auto file = std::static_pointer_cast<const base::MappedFile>(hit.keep_alive);
      where.path = file->path();
      where.identity = file->identity();
      where.offset = uint64_t(hit.payload.data() - file->bytes().data());
    } else {
      auto entry = std::static_pointer_cast<const CacheEntry>(hit.keep_alive);
      where.path = entry->data_path;
      where.identity = entry->data_identity;
    }
  } else if (!model_.path().empty()) {
    // Inline raw_data: the model file as a whole identifies it.
    where.path = model_.path();
    where.identity = model_.identity();
    where.length = model_.identity().size;
  }
  return where;
}

bool Resolver::payload_ok(const onnx::CompiledTensorProto& entry, const Hit& hit,
                          const std::string& name, CandidateDecision& c, Resolution& out) {
  const PayloadLocation where = payload_location(hit, name);
  const PayloadHash* ahead = nullptr;
  if (auto it = prefetched_payloads_.find(hit.entry); it != prefetched_payloads_.end()) {
    ahead = &it->second;
  }
  // prefetch_digests counted its own bytes in the totals; they count once in a resolution.
  const uint64_t ahead_bytes = ahead != nullptr ? ahead->bytes_hashed : 0;
  const PayloadCheck pc =
      check_payload(entry, hit.type, hit.payload, options_.verify != VerifyPolicy::kOff,
                    memo_.get(), where, options_.pool, name, ahead);
  if (ahead != nullptr) prefetched_payloads_.erase(hit.entry);
  out.bytes_hashed += pc.bytes_hashed;
  totals_.bytes_hashed += pc.bytes_hashed - ahead_bytes;
  if (pc.memo_used) out.memo_used = true;
  if (pc.usable()) return true;
  c.usable = false;
  c.reason = pc.verdict == PayloadVerdict::kCorrupt ? MissReason::kCorruptPayload
                                                    : MissReason::kUnverifiablePayload;
  c.detail = pc.detail;
  return false;
}

}  // namespace onnx_prepack::resolve
