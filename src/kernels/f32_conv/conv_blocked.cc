// The blocked convolution kernel: unfold a tile of output pixels into GEMM B
// panels, multiply by the packed filter blocks with the f32 GEMM microkernels.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/f32_conv/conv_unfold.h"

namespace onnx_prepack::kernels {
// Splits tile pixels [p0, p0 + count) at output-row and panel boundaries.
void conv_segments(const ConvGeometry& g, int64_t p0, int64_t count, size_t nr,
                   std::vector<Segment>& out) {
  out.clear();
  const int64_t OH = g.out[1], OW = g.out[2];
  int64_t j = 0;
  while (j < count) {
    const int64_t p = p0 + j;
    const int64_t ow = p % OW, oh = (p / OW) % OH, od = p / (OW * OH);
    const int64_t col = j % int64_t(nr);
    const int64_t run = std::min({count - j, OW - ow, int64_t(nr) - col});
    out.push_back({size_t(j / int64_t(nr)) * kKc * nr + size_t(col), j, od, oh, ow, size_t(run)});
    j += run;
  }
}

ConvUnfoldFn conv_unfold_select(device::IsaLevel level) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  if (level >= device::IsaLevel::kAvx512) return conv_unfold_avx512;
  if (level >= device::IsaLevel::kAvx2) return conv_unfold_avx2;
#else
  (void)level;
#endif
  return conv_unfold_ref;
}

bool ConvGeometry::is_pointwise() const {
  for (int i = 0; i < 3; ++i) {
    if (kernel[i] != 1 || stride[i] != 1 || pad_begin[i] != 0 || pad_end[i] != 0) return false;
  }
  return true;
}

void pack_blocked_filter(const float* w, const ConvGeometry& g, size_t mr, float* dst) {
  const size_t K = size_t(g.k()), Mg = size_t(g.mg());
  for (int64_t gi = 0; gi < g.group; ++gi) {
    const float* wg = w + size_t(gi) * Mg * K;
    float* dg = dst + size_t(gi) * Mg * K;
    for (size_t m0 = 0; m0 < Mg; m0 += mr) {
      const size_t rows = std::min(mr, Mg - m0);
      float* blk = dg + m0 * K;
      for (size_t k = 0; k < K; ++k) {
        for (size_t i = 0; i < rows; ++i) blk[k * rows + i] = wg[(m0 + i) * K + k];
      }
    }
  }
}

const F32GemmKernel* conv_gemm_kernel(device::IsaLevel level) {
  // The first native kernel at `level`: 14 x 32 (AVX-512), 6 x 16 (AVX2) or,
  // on aarch64, 8 x 12 (NEON; the f32_conv_filter_m8 layout, read in place).
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.isa <= level && k.isa != device::IsaLevel::kRef) return &k;
  }
  // Portable: the 6 x 16 tile (the AVX2 layout) read by its _ref twin.
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.isa == device::IsaLevel::kRef && k.mr == 6) return &k;
  }
  return nullptr;
}

const F32GemmKernel* conv_gemm_kernel_rows(size_t mr, device::IsaLevel level) {
  const F32GemmKernel* twin = nullptr;
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.mr != mr) continue;
    if (k.isa != device::IsaLevel::kRef && k.isa <= level) return &k;
    if (k.isa == device::IsaLevel::kRef) twin = &k;
  }
  return twin;
}

size_t conv_blocked_scratch_floats(const ConvGeometry&, const F32GemmKernel& k) {
  return kTilePanels * kKc * k.nr;
}

void conv_blocked(const ConvGeometry& g, const F32GemmKernel& uk, const float* x,
                  const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                  const ConvScratch& scratch, const ConvOutputEpilogue* post) {
  const size_t K = size_t(g.k()), Mg = size_t(g.mg()), NR = uk.nr, MR = uk.mr;
  const int64_t P = g.out_pixels(), Pin = g.in_pixels();
  const int64_t tile = int64_t(kTilePanels * NR);
  const int64_t tiles = (P + tile - 1) / tile;
  const size_t tasks = size_t(g.n * g.group * tiles);
  const ConvUnfoldFn unfold = conv_unfold_select(device::host_isa_level());
  auto work = [&](size_t task, size_t worker) {
    const int64_t t = int64_t(task) % tiles;
    const int64_t gi = (int64_t(task) / tiles) % g.group;
    const int64_t ni = int64_t(task) / (tiles * g.group);
    const float* xg = x + (ni * g.c + gi * g.cg()) * Pin;
    const float* wg = packed_w + size_t(gi) * Mg * K;
    float* yg = y + (ni * g.m + gi * int64_t(Mg)) * P;
    const float* bg = bias ? bias + gi * int64_t(Mg) : nullptr;
    const int64_t p_begin = t * tile;
    const int64_t p_end = std::min(P, p_begin + tile);
    const size_t panels = size_t((p_end - p_begin + int64_t(NR) - 1) / int64_t(NR));
    float* buf = scratch.get(scratch.ctx, worker, kTilePanels * kKc * NR);
    thread_local std::vector<Segment> segs;
    conv_segments(g, p_begin, p_end - p_begin, NR, segs);
    for (size_t k0 = 0; k0 < K; k0 += kKc) {
      const size_t kc = std::min(kKc, K - k0);
      unfold(g, xg, k0, kc, segs, p_begin, NR, buf);  // host ISA's copy
      uint32_t flags = k0 > 0 ? kGemmAccumulate : 0;
      if (k0 + kc == K) flags |= kGemmFinal;
      for (size_t m0 = 0; m0 < Mg; m0 += MR) {
        const size_t rows = std::min(MR, Mg - m0);
        const float* a = wg + m0 * K + k0 * rows;
        F32GemmEpilogue ep;
        if (bg != nullptr) {
          ep.bias = bg + m0;
          ep.bias_rs = 1;
          ep.bias_cs = 0;
        }
        for (size_t pi = 0; pi < panels; ++pi) {
          const int64_t p0 = p_begin + int64_t(pi * NR);
          const size_t cols = size_t(std::min<int64_t>(int64_t(NR), p_end - p0));
          uk.fn(rows, cols, kc, a, buf + pi * kKc * NR, yg + int64_t(m0) * P + p0, size_t(P), flags,
                &ep);
        }
        if (post != nullptr && (flags & kGemmFinal) != 0) {  // rows m0.. of the tile are final
          for (size_t i = 0; i < rows; ++i) {
            post->fn(post->ctx, ni, gi * int64_t(Mg) + int64_t(m0 + i), p_begin,
                     size_t(p_end - p_begin));
          }
        }
      }
    }
  };
  if (pool != nullptr && tasks > 1) {
    pool->parallel_for(tasks, work);
  } else {
    for (size_t i = 0; i < tasks; ++i) work(i, 0);
  }
}

}  // namespace onnx_prepack::kernels
