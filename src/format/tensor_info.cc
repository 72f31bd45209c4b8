#include "format/tensor_info.h"

#include "format/data_type.h"
#include "format/model.h"

namespace onnx_prepack::format {

uint64_t tensor_byte_size(const onnx::TensorProto& t) {
  if (storage_of(t) == Storage::kExternal) {
    auto ref = parse_external_entries(t.external_data());
    if (ref.ok() && ref->length >= 0) return uint64_t(ref->length);
  }
  if (t.has_raw_data()) return t.raw_data().size();
  if (t.data_type() == onnx::TensorProto::STRING) {
    uint64_t n = 0;
    for (const auto& s : t.string_data()) n += s.size();
    return n;
  }
  auto count = element_count(t.dims().data(), t.dims_size());
  if (!count) return 0;
  return raw_byte_size(t.data_type(), *count).value_or(0);
}

std::string dims_string(const onnx::TensorProto& t) {
  std::string s = "[";
  for (int i = 0; i < t.dims_size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(t.dims(i));
  }
  return s + "]";
}

std::string type_string(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: {
      std::string s = "tensor(" + std::string(data_type_name(t.tensor_type().elem_type())) + ")";
      if (t.tensor_type().has_shape()) {
        s += "[";
        const auto& dims = t.tensor_type().shape().dim();
        for (int i = 0; i < dims.size(); ++i) {
          if (i) s += ", ";
          if (dims[i].has_dim_value())
            s += std::to_string(dims[i].dim_value());
          else if (dims[i].has_dim_param())
            s += "'" + dims[i].dim_param() + "'";
          else
            s += "?";
        }
        s += "]";
      }
      return s;
    }
    case onnx::TypeProto::kSequenceType:
      return "seq(" + type_string(t.sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return "map(" + std::string(data_type_name(t.map_type().key_type())) + ", " +
             type_string(t.map_type().value_type()) + ")";
    case onnx::TypeProto::kOptionalType:
      return "optional(" + type_string(t.optional_type().elem_type()) + ")";
    case onnx::TypeProto::kSparseTensorType:
      return "sparse_tensor(" + std::string(data_type_name(t.sparse_tensor_type().elem_type())) +
             ")";
    case onnx::TypeProto::kOpaqueType:
      return "opaque(" + t.opaque_type().name() + ")";
    case onnx::TypeProto::kStructType:
      return "struct";
    case onnx::TypeProto::VALUE_NOT_SET:
      return "?";
  }
  return "?";
}

}  // namespace onnx_prepack::format
