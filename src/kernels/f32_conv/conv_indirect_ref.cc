// Portable twins of the indirect Conv microkernels (f32_conv.h): the same
// chain per output (bias, then one fused multiply-add per filter row).
#include <cmath>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

void tile(size_t mr, size_t nr, size_t k, const float* a, const float* base, const ptrdiff_t* offs,
          const float* bias, float* c, size_t ldc) {
  for (size_t i = 0; i < mr; ++i) {
    for (size_t j = 0; j < nr; ++j) {
      float acc = bias ? bias[i] : 0.0f;
      for (size_t kk = 0; kk < k; ++kk)
        acc = std::fma(a[kk * mr + i], base[offs[kk] + ptrdiff_t(j)], acc);
      c[i * ldc + j] = acc;
    }
  }
}

}  // namespace

void conv_indirect_14x32_ref(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                             const ptrdiff_t* offs, const float* bias, float* c, size_t ldc) {
  tile(mr, nr, k, a, base, offs, bias, c, ldc);
}

void conv_indirect_6x16_ref(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                            const ptrdiff_t* offs, const float* bias, float* c, size_t ldc) {
  tile(mr, nr, k, a, base, offs, bias, c, ldc);
}

}  // namespace onnx_prepack::kernels
