// NEON stride-2 gather of the Conv drivers' phase-split rows (f32_conv.h): 8
// outputs a step from one de-interleaving vld2q_f32 pair (LD2 puts the even
// lanes in val[0]). A copy, so every level writes the same bytes.
#include <arm_neon.h>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void stride2_gather_neon(float* dst, const float* src, size_t n) {
  size_t q = 0;
  // A step reads src[2q .. 2q + 16); the last element needed is src[2(n - 1)],
  // so a step runs only while 2q + 15 <= 2(n - 1), i.e. q + 9 <= n.
  for (; q + 9 <= n; q += 8) {
    vst1q_f32(dst + q, vld2q_f32(src + 2 * q).val[0]);
    vst1q_f32(dst + q + 4, vld2q_f32(src + 2 * q + 8).val[0]);
  }
  for (; q < n; ++q) dst[q] = src[2 * q];
}

}  // namespace onnx_prepack::kernels
