// Lineage checks and writer keys (format.md §4.5). The resolver calls check_lineage
// for each candidate that passed the primary digest; writers call lineage_props.
#include "resolve/lineage.h"

#include <map>

#include "base/json.h"

namespace onnx_prepack::resolve {
namespace {

constexpr std::string_view kLineage = "lineage.";
constexpr std::string_view kAttr = "attr.";
constexpr std::string_view kDigestSuffix = ".digest";

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

bool is_lineage_key(std::string_view key) {
  return starts_with(key, kLineage) || starts_with(key, kAttr);
}

std::optional<LineageMiss> check_lineage(const LineageRequest& want,
                                         const onnx::CompiledTensorProto& entry,
                                         const format::Model& model, bool verify,
                                         const LineageDigestFn& digest_of) {
  std::map<std::string, std::string, std::less<>> props;
  for (const auto& kv : entry.metadata_props()) {
    if (is_lineage_key(kv.key())) props[kv.key()] = kv.value();
  }
  auto mismatch = [](std::string detail) {
    return LineageMiss{MissReason::kLineageMismatch, std::move(detail)};
  };
  // Names and roles, exactly; then attributes; then nothing else.
  std::map<std::string, std::string, std::less<>> expected;
  for (const auto& [role, name] : want.roles) {
    const std::string key = std::string(kLineage) + role;
    auto it = props.find(key);
    if (it == props.end()) return mismatch("no " + key + " (the node reads " + quoted(name) + ")");
    if (it->second != name) {
      return mismatch(key + " is " + quoted(it->second) + ", the node reads " + quoted(name) +
                      " in that role");
    }
    expected[key] = name;
    if (!name.empty()) expected[key + std::string(kDigestSuffix)] = "";
  }
  for (const auto& [attr, value] : want.attrs) {
    const std::string key = std::string(kAttr) + attr;
    auto it = props.find(key);
    if (it == props.end()) return mismatch("no " + key + " (the node has " + value + ")");
    if (it->second != value) {
      return mismatch(key + " is " + quoted(it->second) + ", the node has " + quoted(value));
    }
    expected[key] = value;
  }
  for (const auto& [key, value] : props) {
    if (expected.count(key) == 0) return mismatch("unexpected key " + key + " for this node");
  }
  if (!verify) return std::nullopt;
  for (const auto& [role, name] : want.roles) {
    if (name.empty()) continue;
    const std::string key = std::string(kLineage) + role + std::string(kDigestSuffix);
    const int index = model.initializer_index(name);
    if (index < 0 || model.count_initializers(name) != 1) {
      return mismatch("lineage." + role + " " + quoted(name) +
                      " is not exactly one top-level initializer");
    }
    Result<digest::Digest> d = digest_of(model.proto().graph().initializer(index), index);
    if (!d.ok()) return LineageMiss{MissReason::kSourceUnreadable, d.status().message()};
    const std::string now = base::hex_lower(d->data(), d->size());
    if (props[key] != now) {
      return LineageMiss{MissReason::kStaleDigest,
                         "role " + role + " (" + quoted(name) + "): " + key + " " +
                             props[key].substr(0, 16) + "... differs from its digest now (" +
                             now.substr(0, 16) + "...)"};
    }
  }
  return std::nullopt;
}

Result<std::vector<std::pair<std::string, std::string>>> lineage_props(
    const LineageRequest& want, const format::Model& model, digest::Algorithm algorithm) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [role, name] : want.roles) {
    out.emplace_back(std::string(kLineage) + role, name);
    if (name.empty()) continue;
    const onnx::TensorProto* t = model.find_initializer(name);
    if (t == nullptr || model.count_initializers(name) != 1) {
      return invalid_argument("lineage." + role + ": " + quoted(name) +
                              " is not exactly one top-level initializer");
    }
    digest::DigestOptions o;
    o.algorithm = algorithm;
    OP_ASSIGN_OR_RETURN(digest::TensorDigest d, digest::digest_tensor(model, *t, name, o));
    out.emplace_back(std::string(kLineage) + role + std::string(kDigestSuffix),
                     base::hex_lower(d.digest.data(), d.digest.size()));
  }
  for (const auto& [attr, value] : want.attrs) out.emplace_back(std::string(kAttr) + attr, value);
  return out;
}

}  // namespace onnx_prepack::resolve
