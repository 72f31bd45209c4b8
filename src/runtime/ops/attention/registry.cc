// The attention family's operator list (see kernel.h); each operator's builder
// lives in a file of this folder (declared in attention_ops.h).
#include "runtime/kernel.h"
#include "runtime/ops/attention/attention_ops.h"

namespace onnx_prepack::runtime {
namespace {

// RotaryEmbedding, MultiHeadAttention and Attention of com.microsoft take float16 through
// the half adapter (computed in float, narrowed at the end); GroupQueryAttention has its own
// float16 path (its shared past/present buffer must not be rewritten whole).
constexpr OpEntry kOps[] = {
    {"Attention", build_attention_onnx},
    {"RotaryEmbedding", build_rotary_embedding},
    {"RotaryEmbedding", build_rotary_embedding_ms, "com.microsoft"},
    {"GroupQueryAttention", build_group_query_attention, "com.microsoft", true},
    {"MultiHeadAttention", build_multi_head_attention, "com.microsoft"},
    {"Attention", build_attention_ms, "com.microsoft"},
};

}  // namespace

std::span<const OpEntry> attention_ops() { return kOps; }

}  // namespace onnx_prepack::runtime
