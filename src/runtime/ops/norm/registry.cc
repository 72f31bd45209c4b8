// The norm family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder (declared in norm_ops.h).
#include "runtime/kernel.h"
#include "runtime/ops/norm/norm_ops.h"

namespace onnx_prepack::runtime {
namespace {

constexpr OpEntry kOps[] = {
    {"LayerNormalization", build_layer_norm},
    {"BatchNormalization", build_batch_norm},
    {"InstanceNormalization", build_instance_norm},
    {"GroupNormalization", build_group_norm},
    {"LRN", build_lrn},
    // FLOAT16 natively (computed in float), their statistics outputs float as ONNX Runtime's.
    {"SimplifiedLayerNormalization", build_simplified_layer_norm, "", true},
    {"SimplifiedLayerNormalization", build_simplified_layer_norm, "com.microsoft", true},
    {"RMSNormalization", build_rms_norm, "", true},
    {"SkipLayerNormalization", build_skip_layer_norm, "com.microsoft", true},
    {"SkipSimplifiedLayerNormalization", build_skip_simplified_layer_norm, "com.microsoft", true},
    {"EmbedLayerNormalization", build_embed_layer_norm, "com.microsoft", true},
};

}  // namespace

std::span<const OpEntry> norm_ops() { return kOps; }

}  // namespace onnx_prepack::runtime
