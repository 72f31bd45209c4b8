// Requantizing int32 accumulators to 8 bits, the output stage of QLinearConv
// (runtime/ops/quant/integer_conv.cc): one translation unit per ISA
// (vec_requant_avx2.cc, vec_requant_avx512.cc, vec_requant_neon.cc) and a
// portable twin (vec_requant_ref.cc), all the bits of requant_value below.
//
// Each value is clamped to the output's range less the zero point before it is
// rounded: for a finite product that is round(v) + zp saturated (the rounding
// is monotone and the bounds are integers), and it is what vmaxps / vminps /
// vcvtps2dq compute lane by lane with no range check, NaN included (maxps
// returns its second operand when either is NaN, so NaN becomes lo).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels::vec {

// sat(nearbyint(float(acc) * mult) + zp) in [lo, hi] (rounding in the current
// mode: nearest even by default); zp lies in [lo, hi].
inline int32_t requant_value(int32_t acc, float mult, int32_t zp, int32_t lo, int32_t hi) {
  float v = float(acc) * mult;
  const float vlo = float(lo - zp), vhi = float(hi - zp);
  v = v > vlo ? v : vlo;  // = maxps(v, vlo)
  v = v < vhi ? v : vhi;  // = minps(v, vhi)
  return int32_t(std::nearbyint(v)) + zp;
}

// y[j] = requant_value(c[j] + bias[j], mult[j], zp, lo, hi) for j < n, the
// sum wrapping in int32 (bias null: 0), [lo, hi] = [-128, 127] when y_signed
// (y holds int8 bits) else [0, 255].
using RequantRowFn = void (*)(const int32_t* c, const int32_t* bias, const float* mult, size_t n,
                              int32_t zp, bool y_signed, uint8_t* y);

void requant_row_ref(const int32_t* c, const int32_t* bias, const float* mult, size_t n, int32_t zp,
                     bool y_signed, uint8_t* y);
void requant_row_avx2(const int32_t* c, const int32_t* bias, const float* mult, size_t n,
                      int32_t zp, bool y_signed, uint8_t* y);
void requant_row_avx512(const int32_t* c, const int32_t* bias, const float* mult, size_t n,
                        int32_t zp, bool y_signed, uint8_t* y);
void requant_row_neon(const int32_t* c, const int32_t* bias, const float* mult, size_t n,
                      int32_t zp, bool y_signed, uint8_t* y);

struct RequantKernels {
  const char* isa;
  RequantRowFn row;
};

// The variant for `level` (ref, avx2, avx512 or neon), and for device::host_isa_level() now.
const RequantKernels& requant_kernels(device::IsaLevel level);
const RequantKernels& host_requant_kernels();

}  // namespace onnx_prepack::kernels::vec
