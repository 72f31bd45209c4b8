// Portable twin of vec_half_binary_fp16.cc (see vec_half_binary.h), and the
// selector.
#include "kernels/vec_math/vec_half.h"
#include "kernels/vec_math/vec_half_binary.h"

namespace onnx_prepack::kernels::vec {
namespace {

// half_to_float after quieting a signalling NaN, as f16_to_f32_ref widens.
float widen(uint16_t h) {
  const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
  return half_to_float(nan ? uint16_t(h | 0x200) : h);
}

}  // namespace

void f16_binary_ref(int op, const uint16_t* a, size_t sa, const uint16_t* b, size_t sb, uint16_t* o,
                    size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float x = widen(a[i * sa]), y = widen(b[i * sb]);
    float r;
    switch (op) {
      case kAdd:
        r = x + y;
        break;
      case kSub:
        r = x - y;
        break;
      case kMul:
        r = x * y;
        break;
      default:
        r = x / y;
        break;
    }
    o[i] = float_to_half(r);
  }
}

HalfBinaryFn half_binary_select() {
#if defined(__aarch64__)  // the _fp16 units are built on aarch64 only (cmake/isa.cmake)
  // host_cpu_features() is capped like host_isa_level(): a neon cap clears fp16.
  if (device::host_cpu_features().fp16 && device::host_isa_level() >= device::IsaLevel::kNeon)
    return f16_binary_fp16;
#endif
  return nullptr;
}

}  // namespace onnx_prepack::kernels::vec
