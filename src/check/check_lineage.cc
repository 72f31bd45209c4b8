// Lineage keys of compiled tensors (format.md §4.5): lineage.<role> names an
// initializer and has a digest of 64 lower-case hex digits; an absent optional
// input is lineage.<role> = "" with no digest; a format that declares its
// roles and attributes (type metadata lineage_roles / lineage_attrs, comma
// lists) admits no other lineage./attr. key.
#include <map>
#include <set>
#include <sstream>

#include "check/checker.h"
#include "check/rules.h"

namespace onnx_prepack::check {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::optional<std::set<std::string>> declared(const onnx::StructTypeProto& type,
                                              std::string_view key) {
  for (const auto& kv : type.metadata_props()) {
    if (kv.key() != key) continue;
    std::set<std::string> out;
    std::stringstream ss(kv.value());
    for (std::string item; std::getline(ss, item, ',');) {
      if (!item.empty()) out.insert(item);
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace

void Checker::check_lineage(const onnx::CompiledTensorProto& ct, const std::string& path) {
  constexpr std::string_view kLineage = "lineage.", kAttr = "attr.", kDigest = ".digest";
  std::map<std::string, std::pair<int, std::string>> roles, digests;  // role -> (index, value)
  std::map<std::string, int> attrs;
  for (int i = 0; i < ct.metadata_props_size(); ++i) {
    const std::string& key = ct.metadata_props(i).key();
    if (starts_with(key, kLineage)) {
      std::string role = key.substr(kLineage.size());
      if (ends_with(role, kDigest)) {
        digests[role.substr(0, role.size() - kDigest.size())] = {i, ct.metadata_props(i).value()};
      } else {
        roles[role] = {i, ct.metadata_props(i).value()};
      }
    } else if (starts_with(key, kAttr)) {
      attrs[key.substr(kAttr.size())] = i;
    }
  }
  auto at = [&](int i) { return path + "[" + std::to_string(i) + "]"; };
  for (const auto& [role, iv] : roles) {
    const auto& [i, name] = iv;
    if (name.empty()) {
      if (digests.count(role)) {
        error(rules::kLineageDigestMissing, at(digests[role].first),
              at(digests[role].first) + ": lineage." + role +
                  " is empty (absent input) but has a digest");
      }
      continue;
    }
    if (model_.count_initializers(name) == 0) {
      error(rules::kLineageSourceMissing, at(i),
            at(i) + ": lineage." + role + " '" + name +
                "' names no initializer of the top-level graph");
    }
    if (!digests.count(role)) {
      error(rules::kLineageDigestMissing, at(i),
            at(i) + ": lineage." + role + " has no lineage." + role + ".digest");
    }
  }
  for (const auto& [role, iv] : digests) {
    if (!roles.count(role)) {
      error(rules::kLineageDigestMissing, at(iv.first),
            at(iv.first) + ": lineage." + role + ".digest without lineage." + role);
    } else if (!is_hex64(iv.second)) {
      error(rules::kLineageDigestFormat, at(iv.first),
            at(iv.first) + ": lineage." + role + ".digest is not 64 lower-case hex digits");
    }
  }
  // Roles and attributes its format declares, when the type resolves.
  const onnx::StructTypeProto* type = nullptr;
  if (ct.has_value()) {
    if (ct.value().has_struct_type()) {
      type = &ct.value().struct_type();
    } else if (ct.value().type() >= 0 && ct.value().type() < proto().struct_types_size()) {
      type = &proto().struct_types(ct.value().type());
    }
  }
  if (type == nullptr) return;
  if (auto known = declared(*type, "lineage_roles")) {
    std::set<std::string> seen;
    for (const auto& [role, iv] : roles) seen.insert(role);
    for (const auto& [role, iv] : digests) seen.insert(role);
    for (const std::string& role : seen) {
      if (!known->count(role)) {
        const int i = roles.count(role) ? roles[role].first : digests[role].first;
        error(rules::kLineageUnknownKey, at(i),
              at(i) + ": role '" + role + "' is not one format '" + type->name() + "' declares");
      }
    }
  }
  if (auto known = declared(*type, "lineage_attrs")) {
    for (const auto& [attr, i] : attrs) {
      if (!known->count(attr)) {
        error(
            rules::kLineageUnknownKey, at(i),
            at(i) + ": attribute '" + attr + "' is not one format '" + type->name() + "' declares");
      }
    }
  }
}

}  // namespace onnx_prepack::check
