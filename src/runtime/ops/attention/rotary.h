// The rotation of rotary position embeddings (RoPE), shared by RotaryEmbedding
// (com.microsoft and ONNX opset 23) and GroupQueryAttention's do_rotary.
#pragma once

#include <cstdint>

namespace onnx_prepack::runtime::attention {

// Rotates the first `rot_dim` values of one head vector `x` (head_size values)
// by the angles whose cosines and sines are cos[0, rot_dim / 2) and
// sin[0, rot_dim / 2), writing y; values [rot_dim, head_size) are copied.
// Non-interleaved: pairs (i, i + rot_dim / 2); interleaved: pairs (2i, 2i + 1).
// For a pair (a, b) at angle t: (a cos t - b sin t, b cos t + a sin t).
// y may equal x (in place).
void rotate_head(const float* x, float* y, int64_t head_size, int64_t rot_dim, const float* cos,
                 const float* sin, bool interleaved);

}  // namespace onnx_prepack::runtime::attention
