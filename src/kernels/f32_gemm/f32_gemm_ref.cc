// Portable twins of the per-ISA microkernels: the oracle of the tests and the
// path of hosts without AVX2 or NEON. std::fma keeps the single rounding per step that
// the SIMD kernels get from their FMA instructions, so the results agree bit
// for bit.
#include <cmath>

#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {
namespace {

template <size_t MR, size_t NR>
void gemm_ref(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c, size_t ldc,
              uint32_t flags, const F32GemmEpilogue* ep) {
  float acc[MR][NR];
  for (size_t i = 0; i < mr; ++i) {
    for (size_t j = 0; j < nr; ++j) acc[i][j] = (flags & kGemmAccumulate) ? c[i * ldc + j] : 0.0f;
  }
  for (size_t k = 0; k < kc; ++k) {
    for (size_t i = 0; i < mr; ++i) {
      const float av = a[k * mr + i];
      for (size_t j = 0; j < nr; ++j) acc[i][j] = std::fma(av, b[k * NR + j], acc[i][j]);
    }
  }
  for (size_t i = 0; i < mr; ++i) {
    for (size_t j = 0; j < nr; ++j) {
      float v = acc[i][j];
      if (flags & kGemmFinal) {
        if (ep->alpha != 1.0f) v = ep->alpha * v;
        if (ep->bias != nullptr) {
          v = std::fma(ep->beta, ep->bias[ptrdiff_t(i) * ep->bias_rs + ptrdiff_t(j) * ep->bias_cs],
                       v);
        }
      }
      c[i * ldc + j] = v;
    }
  }
}

}  // namespace

void f32_gemm_6x16_ref(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                       size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  gemm_ref<6, 16>(mr, nr, kc, a, b, c, ldc, flags, ep);
}

void f32_gemm_14x32_ref(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                        size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  gemm_ref<14, 32>(mr, nr, kc, a, b, c, ldc, flags, ep);
}

void f32_gemm_8x12_ref(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                       size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  gemm_ref<8, 12>(mr, nr, kc, a, b, c, ldc, flags, ep);
}

}  // namespace onnx_prepack::kernels
