// The unfold (im2col) of the blocked Conv kernel, included by one
// translation unit per ISA (conv_unfold_avx512.cc, conv_unfold_avx2.cc,
// conv_unfold_ref.cc) so that its copies are compiled for that ISA. Every
// variant writes the same bytes.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/f32_conv/conv_unfold.h"

namespace onnx_prepack::kernels {
// Internal linkage: each ISA translation unit keeps its own copy.
namespace {

// A full panel row: fixed sizes so that the copy is inlined.
inline void copy_row(float* dst, const float* src, size_t nr) {
  if (nr == 32) {
    std::memcpy(dst, src, 32 * sizeof(float));
  } else if (nr == 16) {
    std::memcpy(dst, src, 16 * sizeof(float));
  } else {
    std::memcpy(dst, src, nr * sizeof(float));
  }
}

// Unfolds the tile's pixels for filter rows [k0, k0 + kc) of group input `x`
// (Cg planes): row k - k0 of each panel at buf + panel * kKc * nr + (k - k0) * nr.
inline void unfold(const ConvGeometry& g, const float* x, size_t k0, size_t kc,
                   const std::vector<Segment>& segs, int64_t p0, size_t nr, float* buf) {
  const int64_t in_plane = g.in_pixels();
  if (g.is_pointwise()) {
    for (size_t k = 0; k < kc; ++k) {
      const float* row = x + int64_t(k0 + k) * in_plane + p0;
      for (const Segment& s : segs) {
        if (s.run == nr) {
          copy_row(buf + s.dst + k * nr, row + s.j, nr);
        } else {
          std::memcpy(buf + s.dst + k * nr, row + s.j, s.run * sizeof(float));
        }
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
      if (sw == 1) {
        // Valid t: 0 <= iw0 + t < W (no division on this, the common path).
        const int64_t lo = std::clamp<int64_t>(-iw0, 0, int64_t(run));
        const int64_t hi = std::clamp<int64_t>(W - iw0, lo, int64_t(run));
        if (lo == 0 && hi == int64_t(run) && run == nr) {
          copy_row(out, row + iw0, nr);
          continue;
        }
        for (int64_t t = 0; t < lo; ++t) out[t] = 0.0f;
        std::memcpy(out + lo, row + iw0 + lo, size_t(hi - lo) * sizeof(float));
        for (int64_t t = hi; t < int64_t(run); ++t) out[t] = 0.0f;
        continue;
      }
      // Valid t: 0 <= iw0 + t * sw < W.
      const int64_t lo = std::min<int64_t>(iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw, int64_t(run));
      const int64_t hi =
          std::clamp<int64_t>(W - iw0 <= 0 ? 0 : (W - iw0 + sw - 1) / sw, lo, int64_t(run));
      for (int64_t t = 0; t < lo; ++t) out[t] = 0.0f;
      const float* r = row + iw0;
      if (sw == 2) {  // a constant stride the compiler vectorises
        for (int64_t t = lo; t < hi; ++t) out[t] = r[t * 2];
      } else {
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
}  // namespace onnx_prepack::kernels
