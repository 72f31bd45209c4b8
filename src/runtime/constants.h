// TensorProto -> HostTensor for initializers and Constant nodes. Raw and
// external bytes are borrowed (no copy) when suitably aligned; typed fields
// are converted into owned storage.
#pragma once

#include <string_view>

#include "format/model.h"
#include "onnx_prepack.pb.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

// `model` resolves external data; may be null for tensors that cannot be
// external (Constant attributes). `keep_alive` keeps the proto's bytes alive.
Result<HostTensor> host_tensor_from_proto(const onnx::TensorProto& t, const format::Model* model,
                                          std::string_view context,
                                          std::shared_ptr<const void> keep_alive);

}  // namespace onnx_prepack::runtime
