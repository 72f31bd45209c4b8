// The one catalogue of reasons why a compiled entry is not used (format.md §4.3).
// Ids are stable snake_case strings printed by `explain`, `--json` and
// ONNX_PREPACK_VERBOSE=resolve; docs/cli.md lists them. Resolve layer.
#pragma once

#include <optional>
#include <string_view>

namespace onnx_prepack::resolve {

// Per weight: the first group applies to the request as a whole; the others
// to one candidate entry, in the order the resolver tests them.
enum class MissReason {
  // request-level (format.md §4.3 rule 1)
  kNotFound,            // "not_found": no compiled entry names this source (or no such initializer)
  kDuplicateSource,     // "duplicate_source": the name resolves to several top-level initializers
  kOverriddenByInput,   // "overridden_by_input": a graph input of that name is fed in this run
  kNoAcceptableFormat,  // "no_acceptable_format": the consumer accepts no format on this host
  // candidate-level, cheap rules first
  kInvalidEntry,         // "invalid_entry": fails the checker or payload unreadable/wrong size (5)
  kBadDeviceIndex,       // "bad_device_index": device index out of range (3)
  kIncompatibleDevice,   // "incompatible_device": type, ordinal or architecture (4)
  kUnknownRuntime,       // "unknown_runtime": runtime is not ours (4)
  kRuntimeVersion,       // "runtime_version": packing ABI version differs (4)
  kUnknownMetadata,      // "unknown_metadata": a required metadata key we do not understand (4)
  kUnknownFormat,        // "unknown_format": physical format not acceptable to the consumer (6)
  kFormatVersion,        // "format_version": known format, other format_version (6)
  kFormatMismatch,       // "format_mismatch": the format rejects this entry's dims for the source
  kUnknownAlgorithm,     // "unknown_algorithm": digest_algorithm we do not implement (2)
  kSourceUnreadable,     // "source_unreadable": the source initializer has no digest (bad data)
  kStaleDigest,          // "stale_digest": source content changed since the entry was written (2)
  kUnverifiablePayload,  // "unverifiable_payload": no payload_digest, policy full/memo (4.6)
  kCorruptPayload,       // "corrupt_payload": payload bytes differ from payload_digest (4.6)
  kLineageMismatch,      // "lineage_mismatch": a lineage name, role or attribute differs (4.5)
  kNotPreferred,         // "not_preferred": usable, but another entry won (format.md §6 preference)
};

std::string_view miss_reason_id(MissReason r);
std::optional<MissReason> miss_reason_from_id(std::string_view id);
// One-line description for docs and `explain`.
std::string_view miss_reason_description(MissReason r);
// Every reason, in enum order (docs and tests iterate it).
inline constexpr int kMissReasonCount = static_cast<int>(MissReason::kNotPreferred) + 1;

}  // namespace onnx_prepack::resolve
