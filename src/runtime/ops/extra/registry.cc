// The extra family's operator list (see kernel.h): losses, detection, signal
// processing, sampling. Each file of this folder contributes a list (common.h).
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/extra/common.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> extra_ops() {
  static const std::vector<OpEntry> ops = [] {
    std::vector<OpEntry> v;
    for (auto list :
         {extra::loss_ops(), extra::dropout_ops(), extra::misc_ops(), extra::detection_ops(),
          extra::sampling_ops(), extra::tfidf_ops(), extra::signal_ops(), extra::unpool_ops()})
      v.insert(v.end(), list.begin(), list.end());
    return v;
  }();
  return ops;
}

}  // namespace onnx_prepack::runtime
