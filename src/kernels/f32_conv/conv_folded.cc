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

// ---- unfold from zero-padded rows (2-D filters other than 1x1) ----
//
// The generic unfold bounds-checks every (filter row, run) and copies runs of
// a few floats through memcpy / memset calls; on batches of tiny maps that was
// 30 % of the folded time. A task instead copies the input rows its pieces
// read once into a zero-padded buffer (Cg planes of `rows` x `width`), so that
// every run is a plain copy. Same bytes as the generic unfold.

bool padded_unfold_applies(const ConvGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && !g.is_pointwise();
}

int64_t padded_width(const ConvGeometry& g) {
  return (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1;
}

// Output rows [first, last] of a piece and the padded input rows they read.
struct PieceRows {
  int64_t first;
  int64_t rows;
};

PieceRows piece_rows(const ConvGeometry& g, const Piece& pc) {
  const int64_t first = pc.p0 / g.out[2], last = (pc.p0 + pc.count - 1) / g.out[2];
  return {first, (last - first) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1};
}

// Padded rows first * sh + [0, rows) of the Cg planes of `xg` into dst.
void pad_rows(const ConvGeometry& g, const float* xg, PieceRows pr, int64_t width, float* dst) {
  const int64_t H = g.in[1], W = g.in[2], left = g.pad_begin[2];
  // Padded column q holds input column q - left: valid for q in [lo, hi).
  const int64_t lo = std::clamp<int64_t>(left, 0, width);
  const int64_t hi = std::clamp<int64_t>(left + W, lo, width);
  for (int64_t c = 0; c < g.cg(); ++c) {
    for (int64_t r = 0; r < pr.rows; ++r) {
      float* d = dst + (c * pr.rows + r) * width;
      const int64_t ih = pr.first * g.stride[1] + r - g.pad_begin[1];
      if (ih < 0 || ih >= H) {
        std::fill_n(d, width, 0.0f);
        continue;
      }
      const float* src = xg + (c * H + ih) * W;
      std::fill_n(d, lo, 0.0f);
      if (hi > lo) std::copy(src + (lo - left), src + (hi - left), d + lo);
      std::fill_n(d + hi, width - hi, 0.0f);
    }
  }
}

// The generic unfold's panel rows [k0, k0 + kc) for one piece, read from its padded rows.
void unfold_padded(const ConvGeometry& g, const float* pad, PieceRows pr, int64_t width, size_t k0,
                   size_t kc, const std::vector<Segment>& segs, size_t nr, float* buf) {
  const int64_t KH = g.kernel[1], KW = g.kernel[2], sh = g.stride[1], sw = g.stride[2];
  int64_t kw = int64_t(k0) % KW, kh = int64_t(k0) / KW % KH, c = int64_t(k0) / (KW * KH);
  for (size_t kk = 0; kk < kc; ++kk) {
    const float* base = pad + (c * pr.rows + kh * g.dilation[1]) * width + kw * g.dilation[2];
    for (const Segment& s : segs) {
      const float* src = base + (s.oh - pr.first) * sh * width + s.ow * sw;
      float* out = buf + s.dst + kk * nr;
      if (sw == 1 && s.run == nr && nr == 16) {
        std::memcpy(out, src, 16 * sizeof(float));
      } else if (sw == 1 && s.run == nr && nr == 32) {
        std::memcpy(out, src, 32 * sizeof(float));
      } else if (sw == 1) {
        for (size_t t = 0; t < s.run; ++t) out[t] = src[t];
      } else {
        for (size_t t = 0; t < s.run; ++t) out[t] = src[int64_t(t) * sw];
      }
    }
    if (++kw == KW) {
      kw = 0;
      if (++kh == KH) {
        kh = 0;
        ++c;
      }
    }
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
  return kTilePanels * kKc * k.nr + round_up(size_t(g.mg()), k.mr) * kTilePanels * k.nr +
         (padded_unfold_applies(g) ? kFoldedMaxPaddedFloats : 0);
}

void conv_folded(const ConvGeometry& g, const F32GemmKernel& uk, bool bias_first, const float* x,
                 const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                 const ConvScratch& scratch, const ConvOutputEpilogue* post) {
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
    float* pad = out + round_up(Mg, MR) * ldc;  // the pieces' padded rows
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
    // Padded rows when every piece's fit the buffer (else the generic unfold: same bytes).
    thread_local std::vector<PieceRows> prs;
    thread_local std::vector<size_t> pad_at;
    const int64_t width = padded_width(g);
    bool padded = padded_unfold_applies(g);
    prs.clear();
    pad_at.clear();
    for (size_t i = 0, used = 0; padded && i < pieces.size(); ++i) {
      prs.push_back(piece_rows(g, pieces[i]));
      pad_at.push_back(used);
      used += size_t(g.cg() * prs.back().rows * width);
      padded = used <= kFoldedMaxPaddedFloats;
    }
    if (padded) {
      for (size_t i = 0; i < pieces.size(); ++i) {
        pad_rows(g, x + (pieces[i].n * g.c + gi * g.cg()) * Pin, prs[i], width, pad + pad_at[i]);
      }
    }
    for (size_t k0 = 0; k0 < K; k0 += kKc) {
      const size_t kc = std::min(kKc, K - k0);
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (padded) {
          unfold_padded(g, pad + pad_at[i], prs[i], width, k0, kc, segs[i], NR, buf);
        } else {
          const float* xg = x + (pieces[i].n * g.c + gi * g.cg()) * Pin;
          unfold(g, xg, k0, kc, segs[i], pieces[i].p0, NR, buf);  // host ISA's copy
        }
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
        if (post != nullptr) {
          post->fn(post->ctx, pc.n, gi * int64_t(Mg) + int64_t(m), pc.p0, size_t(pc.count));
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
