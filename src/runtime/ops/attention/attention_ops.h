// Builders of the attention family (registry.cc lists them): the transformer
// attention operators of ONNX and com.microsoft, and rotary embeddings.
#pragma once

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {}  // namespace onnx_prepack::runtime
