// The depthwise kernel's driver: per (image, channel) a zero-padded,
// stride-phase-split copy of the input plane, then one row kernel call per
// output row (f32_conv.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {
namespace {

struct DwPlan {
  int64_t rows;   // padded rows needed
  int64_t cols;   // padded columns needed
  int64_t phase;  // column stride (phases)
  int64_t len;    // columns per phase row
};

DwPlan plan(const ConvGeometry& g) {
  DwPlan p;
  p.rows = (g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1;
  p.cols = (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1;
  p.phase = g.stride[2];
  p.len = (p.cols + p.phase - 1) / p.phase;
  return p;
}

}  // namespace

Stride2GatherFn stride2_gather_select(device::IsaLevel level) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  if (level >= device::IsaLevel::kAvx2) return stride2_gather_avx2;
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  if (level >= device::IsaLevel::kNeon) return stride2_gather_neon;
#else
  (void)level;
#endif
  return stride2_gather_ref;
}

DwRowFn dw_row_select(device::IsaLevel level) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  if (level >= device::IsaLevel::kAvx512) return dw_row_avx512;
  if (level >= device::IsaLevel::kAvx2) return dw_row_avx2;
#elif defined(__aarch64__)  // the _neon units: aarch64 only
  if (level >= device::IsaLevel::kNeon) return dw_row_neon;
#else
  (void)level;
#endif
  return dw_row_ref;
}

size_t conv_depthwise_scratch_floats(const ConvGeometry& g) {
  const DwPlan p = plan(g);
  return size_t(((g.kernel[1] - 1) * g.dilation[1] + 1) * p.phase * p.len);
}

void conv_depthwise(const ConvGeometry& g, DwRowFn row, const float* x, const float* w,
                    const float* bias, float* y, base::ThreadPool* pool, const ConvScratch& scratch,
                    const ConvOutputEpilogue* post) {
  const DwPlan p = plan(g);
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t KH = g.kernel[1], KW = g.kernel[2], taps = KH * KW;
  const size_t tasks = size_t(g.n * g.c);
  const int64_t ring = (KH - 1) * g.dilation[1] + 1;
  const Stride2GatherFn gather2 = stride2_gather_select(device::host_isa_level());
  auto work = [&](size_t task, size_t worker) {
    const int64_t c = int64_t(task) % g.c;
    const float* xc = x + int64_t(task) * H * W;
    float* yc = y + int64_t(task) * OH * OW;
    // A ring of the padded rows one output row reads (L1-sized), built as the
    // window moves down: slot r % ring holds padded row r, its columns split by
    // stride phase: slot[ph * len + q] = padded[r][q * phase + ph].
    float* buf = scratch.get(scratch.ctx, worker, size_t(ring * p.phase * p.len));
    auto build = [&](int64_t r) {
      const int64_t ih = r - g.pad_begin[1];
      float* dst = buf + (r % ring) * p.phase * p.len;
      if (ih < 0 || ih >= H) {
        std::memset(dst, 0, size_t(p.phase * p.len) * sizeof(float));
        return;
      }
      const float* src = xc + ih * W;
      if (p.phase == 1) {
        const int64_t lo = std::min<int64_t>(g.pad_begin[2], p.len);
        const int64_t hi = std::clamp<int64_t>(g.pad_begin[2] + W, lo, p.len);
        if (lo > 0) std::memset(dst, 0, size_t(lo) * sizeof(float));
        if (hi > lo) std::memcpy(dst + lo, src + (lo - g.pad_begin[2]), size_t(hi - lo) * 4);
        if (p.len > hi) std::memset(dst + hi, 0, size_t(p.len - hi) * sizeof(float));
      } else {
        for (int64_t ph = 0; ph < p.phase; ++ph) {
          // Column q reads iw = q * phase + ph - pad; valid for q in [lo, hi).
          float* d = dst + ph * p.len;
          const int64_t off = ph - g.pad_begin[2];
          const int64_t lo =
              std::min<int64_t>(off >= 0 ? 0 : (-off + p.phase - 1) / p.phase, p.len);
          const int64_t hi =
              std::clamp<int64_t>(W - off <= 0 ? 0 : (W - off + p.phase - 1) / p.phase, lo, p.len);
          for (int64_t q = 0; q < lo; ++q) d[q] = 0.0f;
          const float* s = src + off;
          if (p.phase == 2) {  // the common stride: shuffles (the driver's cost otherwise)
            if (hi > lo) gather2(d + lo, s + lo * 2, size_t(hi - lo));
          } else {
            for (int64_t q = lo; q < hi; ++q) d[q] = s[q * p.phase];
          }
          for (int64_t q = hi; q < p.len; ++q) d[q] = 0.0f;
        }
      }
    };
    int64_t built = 0;  // padded rows [0, built) were built (the last `ring` are in the ring)
    thread_local std::vector<const float*> srcs;
    srcs.resize(size_t(taps));
    // Where tap column j starts in a ring slot, computed once: per output row
    // the divisions by the phase cost more than a short row's FMAs.
    thread_local std::vector<int64_t> col_off;
    col_off.resize(size_t(KW));
    for (int64_t j = 0; j < KW; ++j) {
      const int64_t col = j * g.dilation[2];
      col_off[size_t(j)] = (col % p.phase) * p.len + col / p.phase;
    }
    const float* wc = w + c * taps;
    const float bc = bias ? bias[c] : 0.0f;
    int64_t posted = 0;  // rows [0, posted) went to the epilogue
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t last = oh * g.stride[1] + (KH - 1) * g.dilation[1];
      for (int64_t r = std::max(built, oh * g.stride[1]); r <= last; ++r) build(r);
      built = last + 1;
      for (int64_t i = 0; i < KH; ++i) {
        const float* slot = buf + ((oh * g.stride[1] + i * g.dilation[1]) % ring) * p.phase * p.len;
        for (int64_t j = 0; j < KW; ++j) srcs[size_t(i * KW + j)] = slot + col_off[size_t(j)];
      }
      row(yc + oh * OW, size_t(OW), srcs.data(), wc, size_t(taps), bc);
      // The epilogue takes bands of rows of at least 512 pixels (fewer, longer runs).
      if (post != nullptr && ((oh + 1 - posted) * OW >= 512 || oh + 1 == OH)) {
        post->fn(post->ctx, int64_t(task) / g.c, c, posted * OW, size_t((oh + 1 - posted) * OW));
        posted = oh + 1;
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
