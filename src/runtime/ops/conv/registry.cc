// The conv family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder.
#include "runtime/kernel.h"
#include "runtime/ops/conv/conv_ops.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> conv_ops() {
  static const OpEntry kOps[] = {
      kConvEntry,
      kConvTransposeEntry,
      kMaxPoolEntry,
      kAveragePoolEntry,
      kLpPoolEntry,
      kGlobalAveragePoolEntry,
      kGlobalMaxPoolEntry,
      kGlobalLpPoolEntry,
      kBatchNormalizationEntry,
      kInstanceNormalizationEntry,
      kGroupNormalizationEntry,
      kLrnEntry,
  };
  return kOps;
}

}  // namespace onnx_prepack::runtime
