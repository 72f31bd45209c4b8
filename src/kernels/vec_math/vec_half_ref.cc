// Portable twin of vec_half_avx2.cc and vec_half_neon.cc (see vec_half.h).
#include <cstring>

#include "kernels/vec_math/vec_half.h"

namespace onnx_prepack::kernels::vec {

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while ((man & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp - 15 + 127) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx > 0x7f800000u) return uint16_t(sign | 0x7e00 | ((absx >> 13) & 0x3ff));  // NaN
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00);                          // rounds to inf
  if (absx < 0x38800000u) {  // subnormal or zero in half
    if (absx < 0x33000000u) return uint16_t(sign);
    uint32_t e = absx >> 23;
    uint32_t man = (absx & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e;  // 14 + (113 - e) - ... : result = man >> (shift - 10 + ...)
    // value = man * 2^(e-150); half subnormal unit = 2^-24 -> q = man >> (126 - e)
    uint32_t q = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    return uint16_t(sign | q);
  }
  uint32_t bits = absx - 0x38000000u;  // rebias exponent 127 -> 15
  uint32_t q = bits >> 13;
  uint32_t rem = bits & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;
  return uint16_t(sign | q);
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return uint16_t((x + rounding) >> 16);
}

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

const HalfConvert& half_convert(device::IsaLevel level, bool bf16) {
  static const HalfConvert kRef = {f16_to_f32_ref, f32_to_f16_ref, bf16_to_f32_ref,
                                   f32_to_bf16_ref};
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  static const HalfConvert kAvx2 = {f16_to_f32_avx2, f32_to_f16_avx2, bf16_to_f32_avx2,
                                    f32_to_bf16_avx2};
  if (level >= device::IsaLevel::kAvx2) return kAvx2;
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  static const HalfConvert kNeon = {f16_to_f32_neon, f32_to_f16_neon, bf16_to_f32_neon,
                                    f32_to_bf16_neon};
  static const HalfConvert kNeonBf16 = {f16_to_f32_neon, f32_to_f16_neon, bf16_to_f32_neon,
                                        f32_to_bf16_bfcvt};
  if (level >= device::IsaLevel::kNeon) return bf16 ? kNeonBf16 : kNeon;
#else
  (void)level;
#endif
  (void)bf16;
  return kRef;
}

const HalfConvert& host_half_convert() {
  const device::CpuFeatures f = device::host_cpu_features();
  return half_convert(device::isa_level_of(f), f.bf16);
}

}  // namespace onnx_prepack::kernels::vec
