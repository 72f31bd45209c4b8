// Row kernels shared by the normalization operators of this folder: LayerNormalization's
// vectorised rows (kernels/vec_math) and the RMS rows of SimplifiedLayerNormalization /
// RMSNormalization, used by LayerNormalization-like operators that normalize a sum first
// (SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnx_prepack::runtime::norm {

// Normalizes `rows` rows of `len` floats from x into y (y may be x): with `rms`,
// y = x * inv * scale with inv = 1 / sqrt(mean(x^2) + eps) (the sum of squares in double),
// and `mean` is not written; otherwise LayerNormalization's vectorised rows,
// y = (x - mean) * inv * scale (+ bias). `bias`, `mean` and `inv` may be null.
void normalize_rows(const float* x, const float* scale, const float* bias, float* y, float* mean,
                    float* inv, size_t rows, size_t len, float eps, bool rms);

// FLOAT16 <-> float through kernels/vec_math's converters.
void f16_to_f32(const uint16_t* in, float* out, size_t n);
void f32_to_f16(const float* in, uint16_t* out, size_t n);
// `n` floats of a float (`half` false) or FLOAT16 input: the data itself, or widened into `buf`.
const float* as_floats(const void* p, bool half, size_t n, std::vector<float>& buf);

}  // namespace onnx_prepack::runtime::norm
