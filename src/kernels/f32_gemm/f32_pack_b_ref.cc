// Portable B packing (see f32_gemm.h for the panel layout) and the exact
// binary16 widening it uses.
#include <cstring>

#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {

float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf / nan
    if (man != 0) bits |= 0x00400000u;        // quiet, as vcvtph2ps does
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while ((man & 0x400) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void f32_pack_b_ref(const F32PackBArgs* args, size_t panel_begin, size_t panel_end) {
  const size_t k_total = args->k, n = args->n, nr = args->nr;
  const bool kn = args->layout == PackSourceLayout::kKN;
  const size_t ld = args->ld != 0 ? args->ld : kn ? n : k_total;
  const float* f32 = static_cast<const float*>(args->src);
  const uint16_t* f16 = static_cast<const uint16_t*>(args->src);
  for (size_t p = panel_begin; p < panel_end; ++p) {
    float* dst = args->dst + p * k_total * nr;
    const size_t j0 = p * nr;
    const size_t cols = n - j0 < nr ? n - j0 : nr;
    for (size_t k = 0; k < k_total; ++k) {
      for (size_t j = 0; j < cols; ++j) {
        const size_t idx = kn ? k * ld + j0 + j : (j0 + j) * ld + k;
        dst[k * nr + j] =
            args->type == PackSourceType::kFloat ? f32[idx] : f16_bits_to_f32(f16[idx]);
      }
      for (size_t j = cols; j < nr; ++j) dst[k * nr + j] = 0.0f;
    }
  }
}

}  // namespace onnx_prepack::kernels
