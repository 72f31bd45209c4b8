// The extra family's operator list (see kernel.h): losses, detection, signal
// processing, sampling. Each operator's builder lives in a file of this folder.
#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

std::span<const OpEntry> extra_ops() { return {}; }

}  // namespace onnx_prepack::runtime
