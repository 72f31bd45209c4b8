// Plan-time folding of the Transposes that NHWC exports (tf2onnx, Keras,
// MediaPipe converters) put around every Conv: Transpose(0,3,1,2) -> Conv ->
// Transpose(0,2,3,1), with Add / Relu / Mul / residual Adds / Concat in NHWC
// between the pairs. Each Transpose is a full pass over a feature map; the pass
// (Session::fold_transposes, transpose_folding.cc) pushes a Transpose down
// through operators that commute with it until it meets its inverse, and the
// pair cancels. A Transpose only moves values, and the operators it crosses
// compute each element alone, so the plan's results are bitwise equal with the
// pass on or off (docs/runtime.md, "Transpose folding").
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace onnx_prepack::runtime {

// ONNX Transpose's perm: output axis i is input axis perm[i].
using Perm = std::vector<int64_t>;

// The one perm that does `first`, then `second`.
Perm compose_perms(const Perm& first, const Perm& second);
Perm inverse_perm(const Perm& p);
bool is_identity_perm(const Perm& p);
// `shape` with its axes permuted by `p` (what a Transpose by `p` outputs).
std::vector<int64_t> permute_shape(const std::vector<int64_t>& shape, const Perm& p);

// How an operator of the default domain commutes with a Transpose of its data.
enum class LayoutRole {
  kNone,       // the pass stops at it
  kUnary,      // input 0 is data; other inputs must hold one value (Clip bounds, Q/DQ scales)
  kBroadcast,  // every input is data, broadcast to the output (Add, Mul, Where, PRelu, ...)
  kConcat,     // every input is data; the axis attribute is remapped
  kPad,        // input 0 is data; the pads (input or attribute) are remapped
};
LayoutRole layout_role(std::string_view domain, std::string_view op_type);

// ONNX_PREPACK_TRANSPOSE_FOLDING=0 turns the pass off (A/B runs, bisecting).
bool transpose_folding_disabled_by_env();

}  // namespace onnx_prepack::runtime
