// The conv family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder (declared in conv_ops.h).
#include "runtime/kernel.h"
#include "runtime/ops/conv/conv_ops.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> conv_ops() {
  static const OpEntry kOps[] = {
      {"Conv", build_conv},
      {"ConvTranspose", build_conv_transpose},
      {"MaxPool", build_max_pool},
      {"AveragePool", build_average_pool},
      {"LpPool", build_lp_pool},
      {"GlobalAveragePool", build_global_average_pool},
      {"GlobalMaxPool", build_global_max_pool},
      {"GlobalLpPool", build_global_lp_pool},
  };
  return kOps;
}

}  // namespace onnx_prepack::runtime
