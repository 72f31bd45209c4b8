// Stable ids and descriptions of the miss reasons (format.md §4.3). Resolve layer.
#include "resolve/miss_reason.h"

#include <array>

namespace onnx_prepack::resolve {
namespace {

struct ReasonInfo {
  MissReason reason;
  std::string_view id;
  std::string_view description;
};

constexpr std::array<ReasonInfo, kMissReasonCount> kReasons = {{
    {MissReason::kNotFound, "not_found",
     "no compiled entry (model or cache store) names this initializer"},
    {MissReason::kDuplicateSource, "duplicate_source",
     "the name resolves to several top-level initializers"},
    {MissReason::kOverriddenByInput, "overridden_by_input",
     "a graph input of the same name is fed in this run"},
    {MissReason::kNoAcceptableFormat, "no_acceptable_format",
     "the consumer accepts no persisted format on this host"},
    {MissReason::kInvalidEntry, "invalid_entry",
     "the entry fails the checker, or its payload is unreadable or the wrong size"},
    {MissReason::kBadDeviceIndex, "bad_device_index", "the device index is out of range"},
    {MissReason::kIncompatibleDevice, "incompatible_device",
     "device type, ordinal or architecture is not this host's (or the format's ISA is missing)"},
    {MissReason::kUnknownRuntime, "unknown_runtime", "the entry is for another runtime"},
    {MissReason::kRuntimeVersion, "runtime_version",
     "the entry's packing ABI version differs from this runtime's"},
    {MissReason::kUnknownMetadata, "unknown_metadata",
     "the device requires a metadata key this runtime does not understand"},
    {MissReason::kUnknownFormat, "unknown_format",
     "the physical format is not one the consumer reads"},
    {MissReason::kFormatVersion, "format_version",
     "a format the consumer reads, but another format_version"},
    {MissReason::kFormatMismatch, "format_mismatch",
     "the entry's dims do not fit the source tensor for this format"},
    {MissReason::kUnknownAlgorithm, "unknown_algorithm",
     "digest_algorithm is not one this runtime implements"},
    {MissReason::kSourceUnreadable, "source_unreadable",
     "the source initializer has no digest (its data does not match its dims or is unreadable)"},
    {MissReason::kStaleDigest, "stale_digest",
     "the source content changed since the entry was written"},
    {MissReason::kUnverifiablePayload, "unverifiable_payload",
     "the entry has no payload_digest, so its payload cannot be verified (full, memo)"},
    {MissReason::kCorruptPayload, "corrupt_payload",
     "the payload bytes differ from the entry's payload_digest"},
    {MissReason::kLineageMismatch, "lineage_mismatch",
     "a lineage initializer name, role or attribute of the entry differs from the consuming node"},
    {MissReason::kNotPreferred, "not_preferred",
     "usable, but another entry was preferred (format order, then earliest entry)"},
}};

}  // namespace

std::string_view miss_reason_id(MissReason r) { return kReasons[static_cast<size_t>(r)].id; }

std::string_view miss_reason_description(MissReason r) {
  return kReasons[static_cast<size_t>(r)].description;
}

std::optional<MissReason> miss_reason_from_id(std::string_view id) {
  for (const ReasonInfo& info : kReasons) {
    if (info.id == id) return info.reason;
  }
  return std::nullopt;
}

}  // namespace onnx_prepack::resolve
