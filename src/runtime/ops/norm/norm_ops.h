// Builders of the norm family (registry.cc lists them): LayerNormalization
// (layer_norm.cc) and the per-channel BatchNormalization, InstanceNormalization,
// GroupNormalization and LRN (channel_norm.cc).
#pragma once

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

Result<std::unique_ptr<Kernel>> build_layer_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_batch_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_instance_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_group_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_lrn(BuildContext& ctx);

}  // namespace onnx_prepack::runtime
