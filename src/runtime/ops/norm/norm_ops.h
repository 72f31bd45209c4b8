// Builders of the norm family (registry.cc lists them): LayerNormalization
// (layer_norm.cc) and the per-channel BatchNormalization, InstanceNormalization,
// GroupNormalization and LRN (channel_norm.cc), and the RMS and com.microsoft
// normalizations (rms_norm.cc, skip_layer_norm.cc, embed_layer_norm.cc; rows in norm_rows.h).
#pragma once

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

Result<std::unique_ptr<Kernel>> build_layer_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_batch_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_instance_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_group_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_lrn(BuildContext& ctx);
// rms_norm.cc: SimplifiedLayerNormalization, RMSNormalization.
Result<std::unique_ptr<Kernel>> build_simplified_layer_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_rms_norm(BuildContext& ctx);
// skip_layer_norm.cc, embed_layer_norm.cc: the com.microsoft fused normalizations.
Result<std::unique_ptr<Kernel>> build_skip_layer_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_skip_simplified_layer_norm(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_embed_layer_norm(BuildContext& ctx);

}  // namespace onnx_prepack::runtime
