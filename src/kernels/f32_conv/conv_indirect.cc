// The indirect Conv driver (f32_conv.h): pad the group's input once, then
// one task per (output row, panel of nr pixels), every filter block of the
// group multiplied by runs of the padded input read in place.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

// Pixels per epilogue run the drivers aim for (f32_conv.h, ConvOutputEpilogue).
constexpr int64_t kEpilogueRun = 512;

// Padded rows are stored split by column-stride phase: row r of a plane is
// `phase` runs of `len` floats, run ph holding padded columns ph, ph + phase, ...
// so that the input pixels of consecutive output columns are contiguous.
struct Padded {
  int64_t rows;   // padded rows the output reads
  int64_t phase;  // column stride
  int64_t len;    // floats per phase run
  int64_t width;  // floats per padded row: phase * len
};

Padded padded_of(const ConvGeometry& g) {
  Padded p;
  p.rows = (g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1;
  p.phase = g.stride[2];
  const int64_t cols = (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1;
  p.len = (cols + p.phase - 1) / p.phase;
  p.width = p.phase * p.len;
  return p;
}

void run_tasks(base::ThreadPool* pool, size_t n, const std::function<void(size_t, size_t)>& fn) {
  if (pool != nullptr && n > 1) {
    pool->parallel_for(n, fn);
  } else {
    for (size_t i = 0; i < n; ++i) fn(i, 0);
  }
}

}  // namespace

bool conv_indirect_applies(const ConvGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && !g.is_pointwise();
}

const ConvIndirectKernel* conv_indirect_select(size_t mr, device::IsaLevel level) {
  for (const ConvIndirectKernel& k : kConvIndirectKernels) {
    if (k.mr == mr && k.isa <= level) return &k;
  }
  return nullptr;
}

size_t conv_indirect_buffer_floats(const ConvGeometry& g, size_t nr) {
  const Padded p = padded_of(g);
  return size_t(g.cg() * p.rows * p.width) + nr;
}

void conv_indirect(const ConvGeometry& g, const ConvIndirectKernel& uk, const float* x,
                   const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                   const ConvScratch& scratch, const ConvOutputEpilogue* post) {
  const Padded p = padded_of(g);
  const int64_t Cg = g.cg(), H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t KH = g.kernel[1], KW = g.kernel[2], P = g.out_pixels();
  const size_t K = size_t(g.k()), Mg = size_t(g.mg()), NR = uk.nr, MR = uk.mr;
  float* buf = scratch.get(scratch.ctx, 0, conv_indirect_buffer_floats(g, NR));
  std::memset(buf + Cg * p.rows * p.width, 0, NR * sizeof(float));  // slack
  std::vector<ptrdiff_t> offs(K + kConvIndirectPrefetch);
  for (int64_t c = 0, k = 0; c < Cg; ++c) {
    for (int64_t i = 0; i < KH; ++i) {
      for (int64_t j = 0; j < KW; ++j, ++k) {
        const int64_t col = j * g.dilation[2];
        offs[size_t(k)] =
            (c * p.rows + i * g.dilation[1]) * p.width + (col % p.phase) * p.len + col / p.phase;
      }
    }
  }
  for (size_t k = K; k < offs.size(); ++k) offs[k] = offs[K - 1];
  const int64_t panels = (OW + int64_t(NR) - 1) / int64_t(NR);
  constexpr int64_t kBandRows = 32;
  const Stride2GatherFn gather2 = stride2_gather_select(device::host_isa_level());
  const int64_t bands = (p.rows + kBandRows - 1) / kBandRows;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const float* xg = x + (n * g.c + gi * Cg) * H * W;
      // Tasks of (channel, band of rows): a first layer has 3 channels, which
      // would leave a thread of two idle or the pair unbalanced.
      run_tasks(pool, size_t(Cg * bands), [&](size_t t, size_t) {
        const int64_t c = int64_t(t) / bands, r0 = (int64_t(t) % bands) * kBandRows;
        const float* xc = xg + c * H * W;
        float* dc = buf + c * p.rows * p.width;
        for (int64_t r = r0; r < std::min(p.rows, r0 + kBandRows); ++r) {
          float* d = dc + r * p.width;
          const int64_t ih = r - g.pad_begin[1];
          if (ih < 0 || ih >= H) {
            std::memset(d, 0, size_t(p.width) * sizeof(float));
            continue;
          }
          const float* src = xc + ih * W;
          for (int64_t ph = 0; ph < p.phase; ++ph) {
            // Run ph, column q reads iw = q * phase + ph - pad: valid for q in [lo, hi).
            float* dr = d + ph * p.len;
            const int64_t off = ph - g.pad_begin[2];
            const int64_t lo =
                std::min<int64_t>(off >= 0 ? 0 : (-off + p.phase - 1) / p.phase, p.len);
            const int64_t hi = std::clamp<int64_t>(
                W - off <= 0 ? 0 : (W - off + p.phase - 1) / p.phase, lo, p.len);
            for (int64_t q = 0; q < lo; ++q) dr[q] = 0.0f;
            if (p.phase == 1) {
              std::memcpy(dr + lo, src + off + lo, size_t(hi - lo) * sizeof(float));
            } else if (p.phase == 2) {  // the common stride: shuffles
              if (hi > lo) gather2(dr + lo, src + off + lo * 2, size_t(hi - lo));
            } else {
              for (int64_t q = lo; q < hi; ++q) dr[q] = src[off + q * p.phase];
            }
            for (int64_t q = hi; q < p.len; ++q) dr[q] = 0.0f;
          }
        }
      });
      const float* wg = packed_w + size_t(gi) * Mg * K;
      const float* bg = bias ? bias + gi * int64_t(Mg) : nullptr;
      float* yg = y + (n * g.m + gi * int64_t(Mg)) * P;
      auto tile = [&](int64_t oh, int64_t ow0, size_t m_begin, size_t m_end) {
        const size_t cols = size_t(std::min<int64_t>(int64_t(NR), OW - ow0));
        const float* base = buf + oh * g.stride[1] * p.width + ow0;
        for (size_t m0 = m_begin; m0 < m_end; m0 += MR) {
          const size_t rows = std::min(MR, Mg - m0);
          uk.fn(rows, cols, K, wg + m0 * K, base, offs.data(), bg ? bg + m0 : nullptr,
                yg + int64_t(m0) * P + oh * OW + ow0, size_t(P));
        }
      };
      if (post == nullptr) {
        run_tasks(pool, size_t(OH * panels), [&](size_t t, size_t) {
          tile(int64_t(t) / panels, (int64_t(t) % panels) * int64_t(NR), 0, Mg);
        });
        continue;
      }
      // With an epilogue, a task covers a band of whole output rows (contiguous
      // in each output plane) for a chunk of filter blocks, and hands each
      // channel's band to the epilogue in one run: runs of a panel's 16 or 32
      // pixels cost more in calls than the chain's arithmetic. Every output is
      // the same microkernel call as without it, so the same bits.
      const int64_t band = std::min<int64_t>(OH, (kEpilogueRun + OW - 1) / OW);
      const size_t bands = size_t((OH + band - 1) / band);
      const size_t blocks = (Mg + MR - 1) / MR;
      const size_t want = 4 * (pool != nullptr ? pool->size() : 1);
      const size_t per_chunk =
          bands >= want ? blocks
                        : (blocks + (want + bands - 1) / bands - 1) / ((want + bands - 1) / bands);
      const size_t chunks = (blocks + per_chunk - 1) / per_chunk;
      run_tasks(pool, bands * chunks, [&](size_t t, size_t) {
        const int64_t oh0 = int64_t(t / chunks) * band, oh1 = std::min(OH, oh0 + band);
        const size_t m_begin = (t % chunks) * per_chunk * MR;
        const size_t m_end = std::min(Mg, m_begin + per_chunk * MR);
        for (int64_t oh = oh0; oh < oh1; ++oh) {
          for (int64_t pi = 0; pi < panels; ++pi) tile(oh, pi * int64_t(NR), m_begin, m_end);
        }
        for (size_t m = m_begin; m < m_end; ++m) {
          post->fn(post->ctx, n, gi * int64_t(Mg) + int64_t(m), oh0 * OW, size_t((oh1 - oh0) * OW));
        }
      });
    }
  }
}

}  // namespace onnx_prepack::kernels
