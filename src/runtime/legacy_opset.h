// Default-domain opsets 1 to 6. Most operators kept their meaning since then
// (their old `consumed_inputs` attribute is an optimisation hint, ignored);
// the forms that meant something else are refused by name here, before any
// builder reads them with today's meaning.
#pragma once

#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::runtime {

// The oldest default-domain opset a model may import.
inline constexpr int kMinDefaultOpset = 1;
// The newest (docs/runtime.md: 22 to 24 only widened types, besides the new operators and
// Attention-24's nonpad_kv_seqlen).
inline constexpr int kMaxDefaultOpset = 24;

// OK unless `node`, read at default-domain `opset`, is in an old form the
// runtime does not implement (e.g. legacy broadcasting along `axis`).
Status check_legacy_form(const onnx::NodeProto& node, int opset);

}  // namespace onnx_prepack::runtime
