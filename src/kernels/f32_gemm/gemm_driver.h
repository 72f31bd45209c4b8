// The f32 GEMM driver: C = alpha * A B (+ beta * bias) with B pre-packed in
// panels (f32_gemm.h). Cache blocking over K and M, A packed per block, work
// split over M and N (never K) on a base::ThreadPool, so the result is the
// same for every thread count and blocking.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "kernels/f32_gemm/f32_gemm.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::kernels {

// A view of packed B: ceil(n / nr) panels of k x nr floats.
struct PackedBView {
  const float* data = nullptr;
  size_t k = 0;
  size_t n = 0;
  size_t nr = 0;
};

inline size_t packed_b_panels(size_t n, size_t nr) { return (n + nr - 1) / nr; }
inline size_t packed_b_floats(size_t k, size_t n, size_t nr) {
  return packed_b_panels(n, nr) * k * nr;
}

struct F32GemmArgs {
  size_t m = 0;
  const float* a = nullptr;  // m x k, row stride lda
  size_t lda = 0;
  PackedBView b;
  float* c = nullptr;  // m x n, row stride ldc; written, never read
  size_t ldc = 0;
  float alpha = 1.0f;
  float beta = 1.0f;
  // Optional bias broadcast to m x n: element (i, j) at bias[i * bias_rs + j * bias_cs];
  // bias_cs is 0 or 1.
  const float* bias = nullptr;
  ptrdiff_t bias_rs = 0;
  ptrdiff_t bias_cs = 0;
};

struct F32GemmOptions {
  // nullptr runs on the calling thread only.
  base::ThreadPool* pool = nullptr;
  // nullptr picks f32_gemm_select(b.nr, host ISA level).
  const F32GemmKernel* kernel = nullptr;
  // K block; 0 = automatic.
  size_t kc = 0;
};

Status f32_gemm(const F32GemmArgs& args, const F32GemmOptions& options = {});

// Packs B from its source into `dst` (packed_b_floats(k, n, nr) floats), with
// the best pack routine of the host (layout bytes do not depend on it);
// panels are split over `pool` when given. `max_level` caps the routine (tests).
Status f32_pack_b(const F32PackBArgs& args, base::ThreadPool* pool = nullptr,
                  device::IsaLevel max_level = device::IsaLevel::kAvx512);

}  // namespace onnx_prepack::kernels
