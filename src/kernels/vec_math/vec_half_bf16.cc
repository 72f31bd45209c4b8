// FEAT_BF16 variant of f32 -> bfloat16 (vec_half.h): BFCVTN / BFCVTN2 narrow 8
// floats a step. BFCVT honours the FPCR like any single-precision operation:
// with Linux's default FPCR (round to nearest even, FZ and DN clear) it rounds
// to nearest even, keeps subnormals and signed zeros, and turns a NaN into its
// top 16 bits with the quiet bit set, which is float_to_bfloat16's definition,
// so the bits are the ref's (tests/kernels/vec_neon_test.cc, every variant).
// Chosen only when the host reports bf16 (HWCAP2_BF16) and the cap keeps it.
#include <arm_neon.h>

#include "kernels/vec_math/vec_half.h"

namespace onnx_prepack::kernels::vec {

void f32_to_bf16_bfcvt(const float* x, uint16_t* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const bfloat16x8_t lo = vcvtq_low_bf16_f32(vld1q_f32(x + i));
    vst1q_u16(y + i, vreinterpretq_u16_bf16(vcvtq_high_bf16_f32(lo, vld1q_f32(x + i + 4))));
  }
  f32_to_bf16_ref(x + i, y + i, n - i);
}

}  // namespace onnx_prepack::kernels::vec
