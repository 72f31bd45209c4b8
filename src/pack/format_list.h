// The pack layer's catalogue: every persisted format, best first, which the
// runtime and `compile` iterate; the resolver's view of it; and the GEMM entry
// point on a packed B. format.md §6 (format names and versions), 4.4 (exactness).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "pack/gemm_b_format.h"
#include "resolve/resolver.h"

namespace onnx_prepack::pack {

// Every GEMM B format, best first: 32-column (AVX-512) before 16-column (AVX2),
// then the aarch64 12-column (NEON) ones.
std::span<const GemmBFormat* const> gemm_b_formats();
const GemmBFormat* find_gemm_b_format(std::string_view name);

// Formats that pack a B of this layout and element type, best first, whose
// kernel runs natively at `level` (all of them for compile: level kAvx512).
std::vector<const GemmBFormat*> gemm_b_formats_for(kernels::PackSourceLayout layout,
                                                   int32_t source_type, device::IsaLevel level);

// What the runtime packs into on a cache miss at `level`: the best native
// format (12-column on an aarch64 NEON host), or the 16-column one (read by the
// portable kernel) on a host without AVX2 or NEON. nullptr for an element type other than
// FLOAT/FLOAT16.
const GemmBFormat* gemm_b_runtime_format(kernels::PackSourceLayout layout, int32_t source_type,
                                         device::IsaLevel level);

// A packed B: payload of `format` for a k x n operand (a cache hit's bytes or
// a fresh pack). Must stay alive and 4-byte aligned during run_gemm.
struct PackedGemmB {
  const GemmBFormat* format = nullptr;
  std::span<const uint8_t> payload;
  size_t k = 0;
  size_t n = 0;
};

// C[m, n] = alpha * A[m, k] B + beta * bias, bias broadcast by strides (see
// kernels::F32GemmArgs). The same bytes give bit-identical C whether they were
// packed now or mapped from a compiled tensor, for every thread count.
struct GemmCall {
  size_t m = 0;
  const float* a = nullptr;
  size_t lda = 0;
  float* c = nullptr;
  size_t ldc = 0;
  float alpha = 1.0f;
  float beta = 1.0f;
  const float* bias = nullptr;
  ptrdiff_t bias_rs = 0;
  ptrdiff_t bias_cs = 0;
};

Status run_gemm(const PackedGemmB& b, const GemmCall& call, base::ThreadPool* pool = nullptr);

}  // namespace onnx_prepack::pack
