// Plan-time recognition of the standard-op forms that torch.onnx / Hugging Face
// optimum exports (opsets 14-18) write for LayerNorm, RMSNorm and GELU, run
// with the fused kernels (Session::fuse_patterns, norm_gelu_fusion.cc):
//
// - LayerNorm: ReduceMean(x) -> Sub(x, mean) -> Pow(d, 2) | Mul(d, d) ->
//   ReduceMean -> Add eps -> Sqrt -> Div(d, std) | Reciprocal + Mul [-> Mul
//   gamma] [-> Add beta], over the last axis or trailing axes (ReduceMean's
//   axes an attribute or, opset 18, an input) -> LayerNormalization's rows.
// - RMSNorm: Pow(x, 2) | Mul(x, x) -> ReduceMean -> Add eps -> Sqrt -> Div(x,
//   rms) | Reciprocal + Mul [-> Mul scale] -> the RMS rows
//   (SimplifiedLayerNormalization); the float core between the Casts of a
//   float16 export fuses the same way (its scale Mul stays in float16).
// - Gelu: Div(x, sqrt 2) | Mul(x, 1/sqrt 2) -> Erf -> Add 1, with x and 0.5
//   multiplied in any order -> the vectorised Gelu; FastGelu: x^3 (Pow 3 or
//   two Muls) -> Mul 0.044715 -> Add x -> Mul sqrt(2/pi) -> Tanh -> Add 1, the
//   same tail -> the vectorised tanh Gelu.
//
// A pattern fuses only when every intermediate value is read inside it alone
// (no other reader, no graph output, no storage shared), the constants are
// known at plan time with the canonical values (within float rounding), and
// the types (float) and shapes fit. Results differ from the unfused plan by
// rounding only (docs/runtime.md, "Pattern fusion": the measured bound).
#pragma once

namespace onnx_prepack::runtime {

// ONNX_PREPACK_PATTERN_FUSION=0 turns the pass off (A/B runs, bisecting).
bool pattern_fusion_disabled_by_env();

// |v - want| within float rounding of the canonical constant `want`.
bool near_constant(double v, double want);

}  // namespace onnx_prepack::runtime
