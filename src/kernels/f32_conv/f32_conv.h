// Single-precision convolution on a packed filter (docs/formats.md, "Conv filters").
//
// Shapes are NC + up to 3 spatial dims; lower ranks use 1 for the missing
// leading dims (a 1-D conv is D = H = 1). Two kernels:
//
// Blocked (every group count): per group, Y[Mg, P] = W[Mg, K] * col(X)[K, P]
// with K = Cg * kd * kh * kw and P the output pixels. The filter is packed in
// blocks of `mr` output channels (the GEMM microkernel's row count): block b of
// group g holds K rows of min(mr, Mg - b * mr) values, a[k * rows + i] =
// W[g * Mg + b * mr + i][k], and blocks follow each other (group-major). The
// input is unfolded per task into panels of `nr` pixels (the microkernel's B
// panel) and the output is written NCHW in place. 1x1 convolutions with unit
// stride and no padding unfold by copying rows.
//
// Depthwise (group == C == M, 2-D): a direct kernel over a zero-padded copy of
// each channel plane whose columns are split by stride phase, so every tap is a
// contiguous row read. The filter is [C][kh * kw] taps (no packing needed
// beyond the source order; see pack/conv_filter_format.h).
//
// Threads: work is split over (image, group, pixel tiles) for the blocked
// kernel and over (image, channel) for depthwise. Each output element is one
// chain over K in a fixed order, so results do not depend on the thread count;
// the same packed bytes give the same results (hit == miss).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {

struct ConvGeometry {
  int64_t n = 1;         // batch
  int64_t c = 0, m = 0;  // input, output channels
  int64_t group = 1;
  int64_t in[3] = {1, 1, 1};      // input spatial (D, H, W)
  int64_t out[3] = {1, 1, 1};     // output spatial
  int64_t kernel[3] = {1, 1, 1};  // filter spatial
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};

  int64_t cg() const { return c / group; }
  int64_t mg() const { return m / group; }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t k() const { return cg() * taps(); }
  int64_t in_pixels() const { return in[0] * in[1] * in[2]; }
  int64_t out_pixels() const { return out[0] * out[1] * out[2]; }
  bool is_depthwise() const { return group == c && group == m && in[0] == 1 && out[0] == 1; }
  bool is_pointwise() const;  // 1x1(x1), unit stride, no padding
};

// A step applied to finished output values while they are in cache (the
// runtime's fused residual Add / activation chain, docs/runtime.md "Conv
// epilogue"): fn(ctx, n, m, p0, len) is called exactly once for every run
// y[(n * M + m) * P + p0, + len) of final values (P the output pixels), by
// the worker that wrote them, after they are written; runs never overlap and
// together cover y. Null: none.
struct ConvOutputEpilogue {
  void (*fn)(const void* ctx, int64_t n, int64_t m, int64_t p0, size_t len) = nullptr;
  const void* ctx = nullptr;
};

// ---- blocked filter ----

// Floats of a blocked filter: group * Mg * K (blocks are tight, no padding).
inline size_t blocked_filter_floats(const ConvGeometry& g) {
  return size_t(g.group) * size_t(g.mg()) * size_t(g.k());
}
// Packs W [M, Cg, kd, kh, kw] (float) into blocks of `mr` rows. Deterministic.
void pack_blocked_filter(const float* w, const ConvGeometry& g, size_t mr, float* dst);

// The microkernel a filter is blocked for at `level` (its mr is the block
// height): the first native GEMM kernel (14 x 32 AVX-512, 6 x 16 AVX2, 8 x 12
// NEON on aarch64), the portable 6 x 16 one at ref.
const F32GemmKernel* conv_gemm_kernel(device::IsaLevel level);
// The microkernel for blocks of `mr` rows at `level`: the native one of those
// rows, else its portable twin (a filter packed for another level's kernel
// runs unchanged; nullptr when no kernel has `mr` rows).
const F32GemmKernel* conv_gemm_kernel_rows(size_t mr, device::IsaLevel level);

// Scratch floats per worker for conv_blocked.
size_t conv_blocked_scratch_floats(const ConvGeometry& g, const F32GemmKernel& k);

// y = conv(x, w) + bias (bias may be null). `scratch` returns at least
// conv_blocked_scratch_floats for a worker (64-byte aligned).
struct ConvScratch {
  void* ctx;
  float* (*get)(void* ctx, size_t worker, size_t floats);
};
void conv_blocked(const ConvGeometry& g, const F32GemmKernel& k, const float* x,
                  const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                  const ConvScratch& scratch, const ConvOutputEpilogue* post = nullptr);

// ---- indirect (unit stride along the row, no unfold) ----
//
// For 1-D/2-D filters other than 1x1 (any stride, dilation or padding): the
// group's input planes are copied once into a zero-padded buffer whose rows
// are split by column-stride phase, and filter row k = (c, kh, kw) of an
// output-row panel of nr pixels is the contiguous run at base + offs[k],
// offs[k] = (c * rows + kh * dh) * width + (kw * dw % sw) * len + kw * dw / sw.
// The microkernel reads those runs in place (no unfold):
//   c[i][j] = bias[i] + sum_k a[k * mr + i] * (base + offs[k])[j], one fused
//   chain per element in k order, for i < mr, j < nr; all NR columns of a run
//   are readable (the buffer has NR floats of slack).
// `a` is the same blocked filter as the blocked kernel's. `offs` has
// kConvIndirectPrefetch readable entries past k (prefetch hints).
inline constexpr size_t kConvIndirectPrefetch = 12;
using ConvIndirectUkernel = void (*)(size_t mr, size_t nr, size_t k, const float* a,
                                     const float* base, const ptrdiff_t* offs, const float* bias,
                                     float* c, size_t ldc);
void conv_indirect_14x32_avx512(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                                const ptrdiff_t* offs, const float* bias, float* c, size_t ldc);
void conv_indirect_6x16_avx2(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                             const ptrdiff_t* offs, const float* bias, float* c, size_t ldc);
void conv_indirect_14x32_ref(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                             const ptrdiff_t* offs, const float* bias, float* c, size_t ldc);
void conv_indirect_6x16_ref(size_t mr, size_t nr, size_t k, const float* a, const float* base,
                            const ptrdiff_t* offs, const float* bias, float* c, size_t ldc);

struct ConvIndirectKernel {
  const char* name;
  device::IsaLevel isa;
  uint32_t mr;
  uint32_t nr;
  ConvIndirectUkernel fn;
};

// Native kernels first (x86-64 builds only: cmake/isa.cmake), then the _ref twins.
// No 8-row one: the NEON tile's filter blocks (aarch64) run the blocked or
// folded driver.
inline constexpr ConvIndirectKernel kConvIndirectKernels[] = {
#if defined(__x86_64__)
    {"conv_indirect_14x32_avx512", device::IsaLevel::kAvx512, 14, 32, conv_indirect_14x32_avx512},
    {"conv_indirect_6x16_avx2", device::IsaLevel::kAvx2, 6, 16, conv_indirect_6x16_avx2},
#endif
    {"conv_indirect_14x32_ref", device::IsaLevel::kRef, 14, 32, conv_indirect_14x32_ref},
    {"conv_indirect_6x16_ref", device::IsaLevel::kRef, 6, 16, conv_indirect_6x16_ref},
};

// Whether the indirect kernel applies: rank <= 2 spatial, not pointwise (that
// one unfolds by plain row copies).
bool conv_indirect_applies(const ConvGeometry& g);
// The indirect kernel for blocks of `mr` rows at `level` (nullptr: none).
const ConvIndirectKernel* conv_indirect_select(size_t mr, device::IsaLevel level);
// Floats of the padded-input buffer (one image and group at a time).
size_t conv_indirect_buffer_floats(const ConvGeometry& g, size_t nr);
// y = conv(x, w) + bias; `scratch` slot 0 holds the padded input (taken
// before any task runs; tasks use no scratch).
void conv_indirect(const ConvGeometry& g, const ConvIndirectKernel& k, const float* x,
                   const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                   const ConvScratch& scratch, const ConvOutputEpilogue* post = nullptr);

// ---- depthwise ----

// out[0..n) = bias + sum_t w[t] * src[t][0..n): one output row of a depthwise conv.
using DwRowFn = void (*)(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                         float bias);
void dw_row_ref(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                float bias);
void dw_row_avx2(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                 float bias);
void dw_row_avx512(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                   float bias);
void dw_row_neon(float* out, size_t n, const float* const* src, const float* w, size_t taps,
                 float bias);
DwRowFn dw_row_select(device::IsaLevel level);

// ---- stride-2 phase split ----

// dst[q] = src[2q] for q in [0, n): a column phase of a stride-2 row, as the
// depthwise and indirect drivers lay out their padded input (reads no element
// past src[2(n - 1)]). The AVX2 one runs at AVX2 and above (a copy gains little
// from wider vectors); every level writes the same bytes.
using Stride2GatherFn = void (*)(float* dst, const float* src, size_t n);
void stride2_gather_ref(float* dst, const float* src, size_t n);
void stride2_gather_avx2(float* dst, const float* src, size_t n);
void stride2_gather_neon(float* dst, const float* src, size_t n);
Stride2GatherFn stride2_gather_select(device::IsaLevel level);

// ---- pooling rows ----

// One row of a 2-D pool's interior outputs (windows inside the input): out[j],
// j in [0, n), reduces src[r][j * stride + k] for r in [0, rows), k in [0, kw),
// visiting the taps in that (r, k) order.
// Max: the first tap, then every later tap that compares greater (a first NaN
// stays, later NaNs are skipped, the first of equal zeros is kept).
using MaxPoolRowFn = void (*)(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                              size_t stride);
// Average: a double sum from +0 in tap order, divided by `div`, rounded to float.
using AvgPoolRowFn = void (*)(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                              size_t stride, double div);
void max_pool_row_ref(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                      size_t stride);
void max_pool_row_avx2(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride);
void max_pool_row_avx512(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                         size_t stride);
void avg_pool_row_ref(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                      size_t stride, double div);
void avg_pool_row_avx2(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride, double div);
void avg_pool_row_avx512(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                         size_t stride, double div);
void max_pool_row_neon(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride);
void avg_pool_row_neon(float* out, size_t n, const float* const* src, size_t rows, size_t kw,
                       size_t stride, double div);
// The ref loops over outputs [j0, n) only: the scalar tails of the SIMD rows,
// so every variant's tail is the ref definition itself.
void max_pool_cols_ref(float* out, size_t j0, size_t n, const float* const* src, size_t rows,
                       size_t kw, size_t stride);
void avg_pool_cols_ref(float* out, size_t j0, size_t n, const float* const* src, size_t rows,
                       size_t kw, size_t stride, double div);
struct PoolRowKernels {
  MaxPoolRowFn max;
  AvgPoolRowFn avg;
};
// Every level gives the same bits.
PoolRowKernels pool_row_select(device::IsaLevel level);

size_t conv_depthwise_scratch_floats(const ConvGeometry& g);
// w is [C][kh * kw].
void conv_depthwise(const ConvGeometry& g, DwRowFn row, const float* x, const float* w,
                    const float* bias, float* y, base::ThreadPool* pool, const ConvScratch& scratch,
                    const ConvOutputEpilogue* post = nullptr);

}  // namespace onnx_prepack::kernels
