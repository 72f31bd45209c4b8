// Lineage of packs derived from several initializers (format.md §4.5): what a
// consumer declares (its initializers by role, its attributes), how an entry
// records it in metadata_props (lineage.<role>, lineage.<role>.digest,
// attr.<name>), and the load-time check the resolver applies to each candidate.
// Resolve layer.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "digest/digest.h"
#include "format/model.h"
#include "onnx_prepack/status.h"
#include "resolve/miss_reason.h"

namespace onnx_prepack::resolve {

// What the consuming node reads besides its primary initializer, in the
// format's fixed role order. An absent optional input has an empty name.
struct LineageRequest {
  std::vector<std::pair<std::string, std::string>> roles;  // (role, initializer name)
  std::vector<std::pair<std::string, std::string>> attrs;  // (attribute, value as text)
};

struct LineageMiss {
  MissReason reason;  // kLineageMismatch or kStaleDigest (or kSourceUnreadable)
  std::string detail;
};

// Digest of a top-level initializer under the entry's algorithm (the resolver's
// hashing, so verification policies and the memo apply).
using LineageDigestFn =
    std::function<Result<digest::Digest>(const onnx::TensorProto& tensor, int init_index)>;

// Checks `entry`'s lineage keys against `want`: names, roles and attributes
// exactly (lineage_mismatch), then, when `verify`, every named initializer's
// digest (stale_digest naming the role). nullopt when the entry passes.
std::optional<LineageMiss> check_lineage(const LineageRequest& want,
                                         const onnx::CompiledTensorProto& entry,
                                         const format::Model& model, bool verify,
                                         const LineageDigestFn& digest_of);

// The metadata_props a writer adds for `want`: lineage.<role> (+ .digest of the
// initializer's canonical digest under `algorithm`, lower-case hex) and
// attr.<name>. Fails when a named initializer is missing or unreadable.
Result<std::vector<std::pair<std::string, std::string>>> lineage_props(const LineageRequest& want,
                                                                       const format::Model& model,
                                                                       digest::Algorithm algorithm);

// True for keys this file owns ("lineage." or "attr." prefixes).
bool is_lineage_key(std::string_view key);

}  // namespace onnx_prepack::resolve
