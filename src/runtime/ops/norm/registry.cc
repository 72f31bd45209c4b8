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
};

}  // namespace

std::span<const OpEntry> norm_ops() { return kOps; }

}  // namespace onnx_prepack::runtime
