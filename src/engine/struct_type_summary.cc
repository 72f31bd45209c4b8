#include "engine/struct_type_summary.h"

#include "types/struct_type.h"

namespace onnx_prepack::engine {

base::Json struct_type_summary(const onnx::ModelProto& model, const onnx::StructTypeProto& type) {
  base::Json o = base::Json::object();
  o["name"] = type.name();
  const char* kind = "unset";
  switch (type.kind_case()) {
    case onnx::StructTypeProto::kArray:
      kind = "array";
      break;
    case onnx::StructTypeProto::kStructure:
      kind = "structure";
      break;
    case onnx::StructTypeProto::kPackedArray:
      kind = "packed_array";
      break;
    case onnx::StructTypeProto::kTypeIndex:
      kind = "type_index";
      break;
    case onnx::StructTypeProto::KIND_NOT_SET:
      break;
  }
  o["kind"] = kind;
  for (const auto& m : type.metadata_props()) {
    if (m.key() == "format_version") o["format_version"] = m.value();
  }
  base::Json params = base::Json::array();
  for (const auto& d : type.dims_param()) params.push_back(d);
  o["dims_param"] = std::move(params);
  // Static byte size; null with dimension parameters or when the type is invalid.
  if (auto size = types::static_byte_size(model, type)) {
    o["byte_size"] = *size;
  } else {
    o["byte_size"] = nullptr;
  }
  return o;
}

}  // namespace onnx_prepack::engine
