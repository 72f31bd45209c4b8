// The math family's operator list (see kernel.h): elementwise math,
// activations, comparisons and logic, casts, reductions. Each file of this
// folder contributes a list (common.h).
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> math_ops() {
  static const std::vector<OpEntry> ops = [] {
    std::vector<OpEntry> v;
    for (auto list : {math::arithmetic_ops(), math::unary_ops(), math::activation_ops(),
                      math::binary_ops(), math::reduce_ops(), math::softmax_ops(), math::cast_ops(),
                      math::loss_ops(), math::misc_ops(), math::signal_ops()}) {
      v.insert(v.end(), list.begin(), list.end());
    }
    return v;
  }();
  return ops;
}

}  // namespace onnx_prepack::runtime
