// Builders of the attention family (registry.cc lists them): the transformer
// attention operators of ONNX and com.microsoft, and rotary embeddings.
#pragma once

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

// ONNX opset 23
Result<std::unique_ptr<Kernel>> build_rotary_embedding(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_attention_onnx(BuildContext& ctx);
// com.microsoft
Result<std::unique_ptr<Kernel>> build_rotary_embedding_ms(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_group_query_attention(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_multi_head_attention(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_attention_ms(BuildContext& ctx);

}  // namespace onnx_prepack::runtime
