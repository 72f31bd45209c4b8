// FLOAT16 and BFLOAT16 graphs: an operator whose builder does not take 16-bit
// floats is built with float descriptions instead and its kernel wrapped:
// 16-bit inputs are widened to float before it runs, float outputs narrowed
// back (round to nearest even) after, so each operator computes in float and
// rounds at its boundary, as ONNX defines the graph (ONNX Runtime's CPU
// provider keeps float between such operators: HalfCarry below).
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

// FLOAT16 values kept in float between nodes that compute in float
// (SessionOptions::float16_float_chains, session_float16_chains.cc): what the
// session tells the build of one node, and what the build tells the session.
struct HalfCarry {
  // Per input: a FLOAT16 value held as float (its description says kFloat).
  std::vector<bool> float_inputs;
  // Per output: a FLOAT16 output left in float (every reader computes in float).
  std::vector<bool> float_outputs;
  // Set by the build: the kernel computes in float on widened inputs.
  bool through_float = false;
};

// Builds `op` for ctx's node: natively when its builder accepts the inputs'
// types, else (some input float16 / bfloat16) through float as above. With
// `carry`, its float inputs count as FLOAT16 ones already widened and its
// float outputs are not narrowed; every other FLOAT16 output is.
Result<std::unique_ptr<Kernel>> build_with_half_adapter(const OpEntry& op, BuildContext& ctx,
                                                        HalfCarry* carry = nullptr);

}  // namespace onnx_prepack::runtime
