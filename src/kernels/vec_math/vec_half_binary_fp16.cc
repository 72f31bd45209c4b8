// FEAT_FP16 variant of vec_half_binary.h: FADD/FSUB/FMUL/FDIV on eight half
// lanes (vaddq_f16 ...), tails through the ref twin. Signalling NaN inputs are
// quieted first (the quiet bit 0x200 set on a NaN lane), as widening to float
// does, so the NaN a lane returns is the one the float path returns.
#include <arm_neon.h>

#include "kernels/vec_math/vec_half_binary.h"

namespace onnx_prepack::kernels::vec {
namespace {

float16x8_t load_quiet(const uint16_t* p) {
  const uint16x8_t h = vld1q_u16(p);
  const uint16x8_t nan = vcgtq_u16(vandq_u16(h, vdupq_n_u16(0x7fff)), vdupq_n_u16(0x7c00));
  return vreinterpretq_f16_u16(vorrq_u16(h, vandq_u16(nan, vdupq_n_u16(0x200))));
}

float16x8_t dup_quiet(uint16_t h) {
  const bool nan = (h & 0x7fff) > 0x7c00;
  return vreinterpretq_f16_u16(vdupq_n_u16(nan ? uint16_t(h | 0x200) : h));
}

template <int op>
void run(const uint16_t* a, size_t sa, const uint16_t* b, size_t sb, uint16_t* o, size_t n) {
  const float16x8_t a0 = dup_quiet(a[0]), b0 = dup_quiet(b[0]);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t x = sa ? load_quiet(a + i) : a0;
    const float16x8_t y = sb ? load_quiet(b + i) : b0;
    float16x8_t r;
    if constexpr (op == kAdd) {
      r = vaddq_f16(x, y);
    } else if constexpr (op == kSub) {
      r = vsubq_f16(x, y);
    } else if constexpr (op == kMul) {
      r = vmulq_f16(x, y);
    } else {
      r = vdivq_f16(x, y);
    }
    vst1q_u16(o + i, vreinterpretq_u16_f16(r));
  }
  if (i < n) f16_binary_ref(op, a + i * sa, sa, b + i * sb, sb, o + i, n - i);
}

}  // namespace

void f16_binary_fp16(int op, const uint16_t* a, size_t sa, const uint16_t* b, size_t sb,
                     uint16_t* o, size_t n) {
  if (n == 0) return;
  switch (op) {
    case kAdd:
      return run<kAdd>(a, sa, b, sb, o, n);
    case kSub:
      return run<kSub>(a, sa, b, sb, o, n);
    case kMul:
      return run<kMul>(a, sa, b, sb, o, n);
    default:
      return run<kDiv>(a, sa, b, sb, o, n);
  }
}

}  // namespace onnx_prepack::kernels::vec
