// fp32 products whose B is not a prepared weight (activation x activation in
// attention, a Gemm/MatMul B computed at run time, and `--weights plain`): B is
// packed now into scratch with the kernels layer's pack routine
// (kernels::f32_pack_b, panels of the host's best width) and multiplied by the
// kernels layer's driver (kernels::f32_gemm). No GEMM micro-kernel of its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::runtime {

class Workspace;

// Panel width of the packed B on this host: that of the kernels layer's best
// kernel at device::host_isa_level() (32 with AVX-512, 16 with AVX2 or ref).
size_t gemm_panel_width();

// Floats of the scratch that holds B [k, n] packed in panels of `nr`.
size_t gemm_pack_floats(size_t k, size_t n, size_t nr);

// C[m, n] = A[m, k] * B (+ C when accumulate). A row-major with row stride lda,
// C with ldc; B [k, n] for kKN, [n, k] for kNK (a transposed B needs no copy), its
// rows ldb elements apart (0: contiguous). `pack` is scratch of gemm_pack_floats(k, n,
// gemm_panel_width()) floats, 4-byte aligned (64 preferred); `pool` splits the pack and the product
// (null: calling thread only). Results do not depend on the pool size (the
// driver never splits K). C must not overlap A or B.
void gemm_f32(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
              kernels::PackSourceLayout layout, float* c, size_t ldc, bool accumulate, float* pack,
              base::ThreadPool* pool, size_t ldb = 0);

// The same with scratch from `ws` slot `worker` (or a temporary buffer when
// `ws` is null).
void gemm_f32(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
              kernels::PackSourceLayout layout, float* c, size_t ldc, bool accumulate,
              Workspace* ws, size_t worker, base::ThreadPool* pool, size_t ldb = 0);

}  // namespace onnx_prepack::runtime
