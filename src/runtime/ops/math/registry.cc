// The math family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder.
#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> math_ops() { return {}; }

}  // namespace onnx_prepack::runtime
