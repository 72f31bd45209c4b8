// The batch-folded Conv driver (conv_folded.h): per task, unfold a tile of
// columns that may span several images into GEMM panels, multiply one chunk
// of filter blocks into an output tile, then copy the tile's rows out to each
// image's NCHW planes.
#include "kernels/f32_conv/conv_folded.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/f32_conv/conv_unfold.h"

namespace onnx_prepack::kernels {
namespace {

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

// The part of a tile's columns that lies in one image: pixels [p0, p0 + count)
// of image n, starting at tile column col.
struct Piece {
  int64_t n;
  int64_t p0;
  int64_t count;
  size_t col;
};

// Cuts tile columns [c0, c1) of the folded (image, pixel) order into pieces.
void pieces_of(int64_t c0, int64_t c1, int64_t P, std::vector<Piece>& out) {
  out.clear();
  for (int64_t c = c0; c < c1;) {
    const int64_t n = c / P, p = c % P;
    const int64_t count = std::min(c1 - c, P - p);
    out.push_back({n, p, count, size_t(c - c0)});
    c += count;
  }
}

// The unfold's segments of one piece: runs inside one output row and one panel,
// `j` relative to the piece's first pixel, `dst` at its tile column.
void piece_segments(const ConvGeometry& g, const Piece& pc, size_t nr, std::vector<Segment>& out) {
  out.clear();
  const int64_t OH = g.out[1], OW = g.out[2];
  for (int64_t j = 0; j < pc.count;) {
    const int64_t p = pc.p0 + j;
    const int64_t ow = p % OW, oh = (p / OW) % OH, od = p / (OW * OH);
    const size_t col = pc.col + size_t(j);
    const int64_t run = std::min({pc.count - j, OW - ow, int64_t(nr - col % nr)});
    out.push_back({col / nr * kKc * nr + col % nr, j, od, oh, ow, size_t(run)});
    j += run;
  }
}

}  // namespace

double conv_per_image_column_fill(const ConvGeometry& g, size_t nr, bool indirect) {
  const size_t cols = size_t(indirect ? g.out[2] : g.out_pixels());
  return cols == 0 ? 1.0 : double(cols) / double(round_up(cols, nr));
}

bool conv_folded_applies(const ConvGeometry& g, const F32GemmKernel& k, bool indirect) {
  if (g.n <= 0 || g.out_pixels() <= 0 || g.k() <= 0 || g.mg() <= 0) return false;
  if (size_t(g.mg()) * kTilePanels * k.nr > kFoldedMaxTileFloats) return false;
  // A batch: one parallel_for over packed panels instead of per-image rounds;
  // the packed-panel GEMM also ran every batch-34 layer of the suite faster
  // than the indirect kernel's unaligned runs (docs/benchmarks.md).
  if (g.n > 1) return true;
  const size_t cols = size_t(g.out_pixels());
  const double folded_fill = double(cols) / double(round_up(cols, k.nr));
  const double fill = conv_per_image_column_fill(g, k.nr, indirect);
  if (fill < kFoldedMinFill && folded_fill > fill) return true;
  if (indirect || !g.is_pointwise()) return false;
  // A 1x1 conv on a small map: too few per-image tiles to give every thread work.
  const size_t tile = kTilePanels * k.nr;
  const size_t tiles = size_t(g.n * g.group) * ((size_t(g.out_pixels()) + tile - 1) / tile);
  return tiles < kFoldedMinTasks;
}

size_t conv_folded_scratch_floats(const ConvGeometry& g, const F32GemmKernel& k) {
  return kTilePanels * kKc * k.nr + round_up(size_t(g.mg()), k.mr) * kTilePanels * k.nr;
}

void conv_folded(const ConvGeometry& g, const F32GemmKernel& uk, bool bias_first, const float* x,
                 const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                 const ConvScratch& scratch) {
  const size_t K = size_t(g.k()), Mg = size_t(g.mg()), NR = uk.nr, MR = uk.mr;
  const int64_t P = g.out_pixels(), Pin = g.in_pixels();
  const size_t ldc = kTilePanels * NR;  // the output tile's row stride
  const int64_t tile = int64_t(ldc);
  const int64_t cols = g.n * P;
  const size_t tiles = size_t((cols + tile - 1) / tile);
  // Output-channel chunks (whole microkernel blocks) when the column tiles
  // alone leave threads idle; the chain of every element stays the same.
  const size_t blocks = (Mg + MR - 1) / MR;
  const size_t threads = pool != nullptr ? pool->size() : 1;
  size_t chunks = 1;
  if (threads > 1 && size_t(g.group) * tiles < 2 * threads) {
    chunks =
        std::min(blocks, (2 * threads + size_t(g.group) * tiles - 1) / (size_t(g.group) * tiles));
  }
  const size_t blocks_per_chunk = (blocks + chunks - 1) / chunks;
  chunks = (blocks + blocks_per_chunk - 1) / blocks_per_chunk;
  const size_t tasks = size_t(g.group) * tiles * chunks;
  const ConvUnfoldFn unfold = conv_unfold_select(device::host_isa_level());
  auto work = [&](size_t task, size_t worker) {
    const size_t chunk = task % chunks;
    const int64_t t = int64_t(task / chunks % tiles);
    const int64_t gi = int64_t(task / (chunks * tiles));
    const size_t m_begin = chunk * blocks_per_chunk * MR;
    const size_t m_end = std::min(Mg, m_begin + blocks_per_chunk * MR);
    const int64_t c0 = t * tile, c1 = std::min(cols, c0 + tile);
    const size_t panels = size_t((c1 - c0 + int64_t(NR) - 1) / int64_t(NR));
    float* buf = scratch.get(scratch.ctx, worker, conv_folded_scratch_floats(g, uk));
    float* out = buf + kTilePanels * kKc * NR;  // rows m_begin.. of the output tile
    const float* wg = packed_w + size_t(gi) * Mg * K;
    const float* bg = bias ? bias + gi * int64_t(Mg) : nullptr;
    if (bias_first) {
      for (size_t m = m_begin; m < m_end; ++m) {
        std::fill_n(out + (m - m_begin) * ldc, ldc, bg ? bg[m] : 0.0f);
      }
    }
    thread_local std::vector<Piece> pieces;
    thread_local std::vector<std::vector<Segment>> segs;
    pieces_of(c0, c1, P, pieces);
    if (segs.size() < pieces.size()) segs.resize(pieces.size());
    for (size_t i = 0; i < pieces.size(); ++i) piece_segments(g, pieces[i], NR, segs[i]);
    for (size_t k0 = 0; k0 < K; k0 += kKc) {
      const size_t kc = std::min(kKc, K - k0);
      for (size_t i = 0; i < pieces.size(); ++i) {
        const float* xg = x + (pieces[i].n * g.c + gi * g.cg()) * Pin;
        unfold(g, xg, k0, kc, segs[i], pieces[i].p0, NR, buf);  // host ISA's copy
      }
      uint32_t flags = bias_first || k0 > 0 ? kGemmAccumulate : 0;
      if (k0 + kc == K) flags |= kGemmFinal;
      for (size_t m0 = m_begin; m0 < m_end; m0 += MR) {
        const size_t rows = std::min(MR, Mg - m0);
        const float* a = wg + m0 * K + k0 * rows;
        F32GemmEpilogue ep;
        if (bg != nullptr && !bias_first) {
          ep.bias = bg + m0;
          ep.bias_rs = 1;
          ep.bias_cs = 0;
        }
        for (size_t pi = 0; pi < panels; ++pi) {
          const size_t ncols = std::min<size_t>(NR, size_t(c1 - c0) - pi * NR);
          uk.fn(rows, ncols, kc, a, buf + pi * kKc * NR, out + (m0 - m_begin) * ldc + pi * NR, ldc,
                flags, &ep);
        }
      }
    }
    for (const Piece& pc : pieces) {
      float* yn = y + (pc.n * g.m + gi * int64_t(Mg)) * P + pc.p0;
      for (size_t m = m_begin; m < m_end; ++m) {
        std::memcpy(yn + int64_t(m) * P, out + (m - m_begin) * ldc + pc.col,
                    size_t(pc.count) * sizeof(float));
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
