// Portable twin of vec_requant_avx2.cc / vec_requant_avx512.cc / vec_requant_neon.cc
// (see vec_requant.h).
#include "kernels/vec_math/vec_requant.h"

namespace onnx_prepack::kernels::vec {

void requant_row_ref(const int32_t* c, const int32_t* bias, const float* mult, size_t n, int32_t zp,
                     bool y_signed, uint8_t* y) {
  const int32_t lo = y_signed ? -128 : 0, hi = y_signed ? 127 : 255;
  for (size_t j = 0; j < n; ++j) {
    const int32_t a = bias ? int32_t(uint32_t(c[j]) + uint32_t(bias[j])) : c[j];
    y[j] = uint8_t(requant_value(a, mult[j], zp, lo, hi));
  }
}

const RequantKernels& requant_kernels(device::IsaLevel level) {
  static const RequantKernels kRef = {"ref", requant_row_ref};
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  static const RequantKernels kAvx2 = {"avx2", requant_row_avx2};
  static const RequantKernels kAvx512 = {"avx512", requant_row_avx512};
  if (level >= device::IsaLevel::kAvx512) return kAvx512;
  if (level >= device::IsaLevel::kAvx2) return kAvx2;
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  static const RequantKernels kNeon = {"neon", requant_row_neon};
  if (level >= device::IsaLevel::kNeon) return kNeon;
#else
  (void)level;
#endif
  return kRef;
}

const RequantKernels& host_requant_kernels() { return requant_kernels(device::host_isa_level()); }

}  // namespace onnx_prepack::kernels::vec
