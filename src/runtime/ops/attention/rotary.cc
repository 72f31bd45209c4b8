#include "runtime/ops/attention/rotary.h"

namespace onnx_prepack::runtime::attention {

void rotate_head(const float* x, float* y, int64_t head_size, int64_t rot_dim, const float* cos,
                 const float* sin, bool interleaved) {
  const int64_t half = rot_dim / 2;
  if (interleaved) {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[2 * i], b = x[2 * i + 1], c = cos[i], s = sin[i];
      y[2 * i] = a * c - b * s;
      y[2 * i + 1] = b * c + a * s;
    }
  } else {
    for (int64_t i = 0; i < half; ++i) {
      const float a = x[i], b = x[i + half], c = cos[i], s = sin[i];
      y[i] = a * c - b * s;
      y[i + half] = b * c + a * s;
    }
  }
  if (y != x) {
    for (int64_t i = rot_dim; i < head_size; ++i) y[i] = x[i];
  }
}

}  // namespace onnx_prepack::runtime::attention
