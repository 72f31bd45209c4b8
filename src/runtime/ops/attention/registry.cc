// The attention family's operator list (see kernel.h); each operator's builder
// lives in a file of this folder (declared in attention_ops.h).
#include "runtime/kernel.h"
#include "runtime/ops/attention/attention_ops.h"

namespace onnx_prepack::runtime {

// Filled as the attention operators land (GroupQueryAttention, RotaryEmbedding,
// MultiHeadAttention, Attention).
std::span<const OpEntry> attention_ops() { return {}; }

}  // namespace onnx_prepack::runtime
