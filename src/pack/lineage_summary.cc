// lineage_summary: an entry's lineage (format.md §4.5) as short items for explain.
#include <map>
#include <string>
#include <vector>

#include "pack/pack_family.h"

namespace onnx_prepack::pack {

std::vector<std::string> lineage_summary(const onnx::CompiledTensorProto& entry) {
  std::vector<std::string> out;
  std::map<std::string, std::string> digests;
  for (const auto& kv : entry.metadata_props()) {
    const std::string& k = kv.key();
    if (k.rfind("lineage.", 0) == 0 && k.size() > 7 && k.find(".digest") == k.size() - 7) {
      digests[k.substr(8, k.size() - 15)] = kv.value();
    }
  }
  for (const auto& kv : entry.metadata_props()) {
    const std::string& k = kv.key();
    if (k.rfind("lineage.", 0) == 0 && !(k.size() > 7 && k.find(".digest") == k.size() - 7)) {
      const std::string role = k.substr(8);
      std::string item = role + "=" + (kv.value().empty() ? "(absent)" : kv.value());
      if (digests.count(role)) item += " (" + digests[role].substr(0, 16) + "...)";
      out.push_back(item);
    } else if (k.rfind("attr.", 0) == 0) {
      out.push_back(k.substr(5) + "=" + kv.value());
    }
  }
  return out;
}

}  // namespace onnx_prepack::pack
