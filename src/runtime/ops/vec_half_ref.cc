// Portable twin of vec_half_avx2.cc (see vec_half.h).
#include "runtime/ops/vec_half.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime::vec {

void f16_to_f32_ref(const uint16_t* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    // A signalling NaN comes out quiet, as F16C converts it.
    y[i] =
        half_to_float((x[i] & 0x7c00) == 0x7c00 && (x[i] & 0x3ff) ? uint16_t(x[i] | 0x200) : x[i]);
  }
}
void f32_to_f16_ref(const float* x, uint16_t* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = float_to_half(x[i]);
}
void bf16_to_f32_ref(const uint16_t* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = bfloat16_to_float(x[i]);
}
void f32_to_bf16_ref(const float* x, uint16_t* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = float_to_bfloat16(x[i]);
}

const HalfConvert& half_convert(device::IsaLevel level) {
  static const HalfConvert kRef = {f16_to_f32_ref, f32_to_f16_ref, bf16_to_f32_ref,
                                   f32_to_bf16_ref};
  static const HalfConvert kAvx2 = {f16_to_f32_avx2, f32_to_f16_avx2, bf16_to_f32_avx2,
                                    f32_to_bf16_avx2};
  return level >= device::IsaLevel::kAvx2 ? kAvx2 : kRef;
}

const HalfConvert& host_half_convert() { return half_convert(device::host_isa_level()); }

}  // namespace onnx_prepack::runtime::vec
