// Portable twin of the pooling row kernels (f32_conv.h): the definition.
#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

void max_pool_cols_ref(float* out, size_t j0, size_t n, const float* const* src, size_t rows,
                       size_t kw, size_t stride) {
  for (size_t j = j0; j < n; ++j) {
    float best = src[0][j * stride];
    for (size_t r = 0; r < rows; ++r) {
      for (size_t k = 0; k < kw; ++k) {
        const float v = src[r][j * stride + k];
        if (v > best) best = v;
      }
    }
    out[j] = best;
  }
}

void avg_pool_cols_ref(float* out, size_t j0, size_t n, const float* const* src, size_t rows,
                       size_t kw, size_t stride, double div) {
  for (size_t j = j0; j < n; ++j) {
    double sum = 0;
    for (size_t r = 0; r < rows; ++r) {
      for (size_t k = 0; k < kw; ++k) sum += double(src[r][j * stride + k]);
    }
    out[j] = float(sum / div);
  }
}

void max_pool_row_ref(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                      size_t stride) {
  max_pool_cols_ref(out, 0, n, src, rows, kw, stride);
}

void avg_pool_row_ref(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                      size_t stride, double div) {
  avg_pool_cols_ref(out, 0, n, src, rows, kw, stride, div);
}

PoolRowKernels pool_row_select(device::IsaLevel level) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  if (level >= device::IsaLevel::kAvx512) return {max_pool_row_avx512, avg_pool_row_avx512};
  if (level >= device::IsaLevel::kAvx2) return {max_pool_row_avx2, avg_pool_row_avx2};
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  if (level >= device::IsaLevel::kNeon) return {max_pool_row_neon, avg_pool_row_neon};
#else
  (void)level;
#endif
  return {max_pool_row_ref, avg_pool_row_ref};
}

}  // namespace onnx_prepack::kernels
