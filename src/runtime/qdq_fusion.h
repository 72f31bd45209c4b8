// Plan-time recognition of QDQ units (docs/runtime.md, "QDQ units"), the
// shared reading of compile and the session:
//
//   weight-only  DequantizeLinear of a constant int8 / uint8 2-D weight W,
//                per tensor or per output column, read only as B (input 1)
//                of one MatMul or Gemm (A float);
//   full MatMul  DequantizeLinear(a_q) and DequantizeLinear(W constant) ->
//                MatMul -> QuantizeLinear(y): activations quantized too;
//   full Conv    DequantizeLinear(x_q), DequantizeLinear(W constant),
//                [DequantizeLinear(bias int32 constant)] -> Conv ->
//                QuantizeLinear(y).
//
// The session runs a unit one of two ways (SessionOptions::qdq):
//
//   exact    the graph's semantics: the weight's dequantize is folded once at
//            plan time and the float GEMM packs its result (never
//            dequantized or packed per run);
//   integer  the unit becomes one integer node: com.microsoft
//            DynamicQuantizeMatMul(A, W, scale, zero point, bias) for a
//            weight-only unit (A quantized on the fly, per row: the session
//            builds it so, session_qdq.cc), QLinearMatMul /
//            QLinearConv (through its builder) for a full one; a MatMul W's
//            panels come from the i8_gemm_b pack family, so
//            `compile --qdq integer` persists one entry per W (`weight_input`
//            of `integer_node` names the use) and runs hit it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::runtime {

// What the recognition needs to know of a name: its element type and dims
// when it is a constant initializer (not overridden by a graph input).
struct ConstantInfo {
  int32_t dtype = 0;
  std::vector<int64_t> dims;
};
using ConstantLookup = std::function<std::optional<ConstantInfo>(const std::string& name)>;

struct QdqUnit {
  enum class Kind { kWeightOnly, kFullMatMul, kFullConv };
  Kind kind = Kind::kWeightOnly;
  std::vector<int> nodes;  // node indices, in dependency order; `at` last
  int at = -1;             // the node whose output the integer node writes
  int weight_dq = -1;      // the weight's DequantizeLinear
  int consumer = -1;       // the MatMul / Gemm
  // Gemm transB 1: W is [N, K]; the integer node reads `transposed_name`, a
  // transposed copy the session makes at plan time (not persisted: the
  // i8_gemm_b pack is of a [K, N] source).
  bool transposed = false;
  std::string transposed_name;
  // DynamicQuantizeMatMul(A, W, scale, zero point or "", bias or "") or
  // QLinearMatMul(a_q, a_scale, a_zp, W, w_scale, w_zp, y_scale, y_zp),
  // named as the consumer and writing `at`'s output.
  onnx::NodeProto integer_node;
  int weight_input = 1;  // W's input of integer_node
  // Full Conv with a bias: {bias scale, x scale, w scale}; the unit holds only
  // when bias scale == x scale * w scale (per channel), a check on values.
  std::vector<std::string> bias_scale_check;
};

// Every unit of `graph` (its top-level nodes), full units first. A value a
// unit absorbs (a DequantizeLinear's or the MatMul's output) must be read by
// the unit alone: no other node, no subgraph, no graph output.
std::vector<QdqUnit> find_qdq_units(const onnx::GraphProto& graph, const ConstantLookup& constant);

}  // namespace onnx_prepack::runtime
