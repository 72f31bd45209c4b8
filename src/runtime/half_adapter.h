// FLOAT16 and BFLOAT16 graphs: an operator whose builder does not take 16-bit
// floats is built with float descriptions instead and its kernel wrapped:
// 16-bit inputs are widened to float before it runs, float outputs narrowed
// back (round to nearest even) after, so each operator computes in float and
// rounds at its boundary, as ONNX Runtime's CPU provider does.
#pragma once

#include <memory>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

// Builds `op` for ctx's node: natively when its builder accepts the inputs'
// types, else (some input float16 / bfloat16) through float as above.
Result<std::unique_ptr<Kernel>> build_with_half_adapter(const OpEntry& op, BuildContext& ctx);

}  // namespace onnx_prepack::runtime
