// The ONNX signature of a default-domain node: input and output counts and its attributes'
// names and types for the opset (op_signatures.inc, generated from the operator schemas by
// tools/difffuzz/schema_table.py). Checked before a builder runs, so that a node the ONNX
// checker refuses (an input too many, an attribute the version does not define, an INT
// where a STRING belongs) is refused here too instead of run as its nearest valid form.
#pragma once

#include <cstdint>
#include <span>

#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::runtime {

// OK when `node` (default domain, read at `opset`) fits its operator's signature, or when the
// operator has no signature here (other domains). `input_types` holds the element type of
// each input (TensorProto enum; 0 for an omitted optional input). Else an error naming the
// node, the op and version, and the rule: "node 'n' (Abs): 2 inputs, Abs-13 takes 1".
Status check_signature(const onnx::NodeProto& node, int opset,
                       std::span<const int32_t> input_types);

// The input whose element type output `output` of `node` has (they share a type parameter),
// -2 when its type comes from no input (a fixed type, an attribute), -1 when the operator has
// no signature here.
int output_type_input(const onnx::NodeProto& node, int opset, int output);

}  // namespace onnx_prepack::runtime
