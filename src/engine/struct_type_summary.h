// One JSON object describing a struct type for `inspect`: name, kind,
// format_version and the byte size when it is static.
#pragma once

#include "base/json.h"
#include "onnx_prepack.pb.h"

namespace onnx_prepack::engine {

base::Json struct_type_summary(const onnx::ModelProto& model, const onnx::StructTypeProto& type);

}  // namespace onnx_prepack::engine
