// metadata_props lookups (StringStringEntryProto lists of models, types,
// devices and compiled tensors).
#pragma once

#include <string>
#include <string_view>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::format {

using MetadataEntries = google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>;

// The value of the first entry named `key`, or "" when there is none.
inline std::string metadata_value(const MetadataEntries& entries, std::string_view key) {
  for (const auto& kv : entries) {
    if (kv.key() == key) return kv.value();
  }
  return "";
}

}  // namespace onnx_prepack::format
