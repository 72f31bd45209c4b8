// The blocked convolution kernel: unfold a tile of output pixels into GEMM B
// panels, multiply by the packed filter blocks with the f32 GEMM microkernels.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

// K rows unfolded per step: a filter block slice (kc x 14 floats) stays in L1
// and the tile's panels (kTilePanels x kc x nr) in L2.
constexpr size_t kKc = 256;
constexpr size_t kTilePanels = 4;

// A run of tile pixels inside one output row and one panel.
struct Segment {
  size_t dst;  // panel * kKc * nr + column
  int64_t j;   // first pixel, relative to the tile
  int64_t od, oh, ow;
  size_t run;
};

// Splits tile pixels [p0, p0 + count) at output-row and panel boundaries.
void segments_of(const ConvGeometry& g, int64_t p0, int64_t count, size_t nr,
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

// Unfolds the tile's pixels for filter rows [k0, k0 + kc) of group input `x`
// (Cg planes): row k - k0 of each panel at buf + panel * kKc * nr + (k - k0) * nr.
void unfold(const ConvGeometry& g, const float* x, size_t k0, size_t kc,
            const std::vector<Segment>& segs, int64_t p0, size_t nr, float* buf) {
  const int64_t in_plane = g.in_pixels();
  if (g.is_pointwise()) {
    for (size_t k = 0; k < kc; ++k) {
      const float* row = x + int64_t(k0 + k) * in_plane + p0;
      for (const Segment& s : segs) {
        std::memcpy(buf + s.dst + k * nr, row + s.j, s.run * sizeof(float));
      }
    }
    return;
  }
  const int64_t KH = g.kernel[1], KW = g.kernel[2], KD = g.kernel[0];
  int64_t kw = int64_t(k0) % KW, kh = (int64_t(k0) / KW) % KH, kd = (int64_t(k0) / (KW * KH)) % KD;
  int64_t c = int64_t(k0) / (KW * KH * KD);
  const int64_t sw = g.stride[2], W = g.in[2];
  for (size_t kk = 0; kk < kc; ++kk) {
    const float* xc = x + c * in_plane;
    for (const Segment& s : segs) {
      float* out = buf + s.dst + kk * nr;
      const size_t run = s.run;
      const int64_t id = s.od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
      const int64_t ih = s.oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
      if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
        std::memset(out, 0, run * sizeof(float));
        continue;
      }
      const float* row = xc + (id * g.in[1] + ih) * W;
      const int64_t iw0 = s.ow * sw - g.pad_begin[2] + kw * g.dilation[2];
      // Valid t: 0 <= iw0 + t * sw < W.
      const int64_t lo = std::min<int64_t>(iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw, int64_t(run));
      const int64_t hi =
          std::clamp<int64_t>(W - iw0 <= 0 ? 0 : (W - iw0 + sw - 1) / sw, lo, int64_t(run));
      for (int64_t t = 0; t < lo; ++t) out[t] = 0.0f;
      if (sw == 1) {
        std::memcpy(out + lo, row + iw0 + lo, size_t(hi - lo) * sizeof(float));
      } else {
        const float* r = row + iw0;
        for (int64_t t = lo; t < hi; ++t) out[t] = r[t * sw];
      }
      for (int64_t t = hi; t < int64_t(run); ++t) out[t] = 0.0f;
    }
    if (++kw == KW) {
      kw = 0;
      if (++kh == KH) {
        kh = 0;
        if (++kd == KD) {
          kd = 0;
          ++c;
        }
      }
    }
  }
}

}  // namespace

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
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.isa <= level && k.isa != device::IsaLevel::kRef) return &k;
  }
  // Portable: the 6 x 16 tile (the AVX2 layout) read by its _ref twin.
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.isa == device::IsaLevel::kRef && k.mr == 6) return &k;
  }
  return nullptr;
}

size_t conv_blocked_scratch_floats(const ConvGeometry&, const F32GemmKernel& k) {
  return kTilePanels * kKc * k.nr;
}

void conv_blocked(const ConvGeometry& g, const F32GemmKernel& uk, const float* x,
                  const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                  const ConvScratch& scratch) {
  const size_t K = size_t(g.k()), Mg = size_t(g.mg()), NR = uk.nr, MR = uk.mr;
  const int64_t P = g.out_pixels(), Pin = g.in_pixels();
  const int64_t tile = int64_t(kTilePanels * NR);
  const int64_t tiles = (P + tile - 1) / tile;
  const size_t tasks = size_t(g.n * g.group * tiles);
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
    segments_of(g, p_begin, p_end - p_begin, NR, segs);
    for (size_t k0 = 0; k0 < K; k0 += kKc) {
      const size_t kc = std::min(kKc, K - k0);
      unfold(g, xg, k0, kc, segs, p_begin, NR, buf);
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
