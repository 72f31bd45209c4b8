#include "runtime/ops/norm/norm_rows.h"

#include <cmath>

#include "kernels/vec_math/vec_half.h"
#include "kernels/vec_math/vec_math.h"

namespace onnx_prepack::runtime::norm {

void normalize_rows(const float* x, const float* scale, const float* bias, float* y, float* mean,
                    float* inv, size_t rows, size_t len, float eps, bool rms) {
  if (!rms) {
    kernels::vec::host_vec_kernels().layer_norm_rows(x, scale, bias, y, mean, inv, rows, len, eps);
    return;
  }
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    double ss = 0.0;
    for (size_t j = 0; j < len; ++j) ss += double(xr[j]) * double(xr[j]);
    const float iv = float(1.0 / std::sqrt(ss / double(len) + double(eps)));
    if (inv) inv[r] = iv;
    if (bias) {
      for (size_t j = 0; j < len; ++j) yr[j] = std::fma(xr[j] * iv, scale[j], bias[j]);
    } else {
      for (size_t j = 0; j < len; ++j) yr[j] = xr[j] * iv * scale[j];
    }
  }
}

void f16_to_f32(const uint16_t* in, float* out, size_t n) {
  kernels::vec::host_half_convert().f16_to_f32(in, out, n);
}

void f32_to_f16(const float* in, uint16_t* out, size_t n) {
  kernels::vec::host_half_convert().f32_to_f16(in, out, n);
}

const float* as_floats(const void* p, bool half, size_t n, std::vector<float>& buf) {
  if (p == nullptr) return nullptr;
  if (!half) return static_cast<const float*>(p);
  buf.resize(n);
  f16_to_f32(static_cast<const uint16_t*>(p), buf.data(), n);
  return buf.data();
}

}  // namespace onnx_prepack::runtime::norm
