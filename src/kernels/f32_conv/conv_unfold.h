// The unfold (im2col) step of the blocked Conv kernel (f32_conv.h), one
// variant per ISA; all write the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

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
void conv_segments(const ConvGeometry& g, int64_t p0, int64_t count, size_t nr,
                   std::vector<Segment>& out);

// Unfolds the tile's pixels for filter rows [k0, k0 + kc) of group input `x`
// (Cg planes): row k - k0 of each panel at buf + panel * kKc * nr + (k - k0) * nr.
using ConvUnfoldFn = void (*)(const ConvGeometry& g, const float* x, size_t k0, size_t kc,
                              const std::vector<Segment>& segs, int64_t p0, size_t nr, float* buf);
void conv_unfold_ref(const ConvGeometry& g, const float* x, size_t k0, size_t kc,
                     const std::vector<Segment>& segs, int64_t p0, size_t nr, float* buf);
void conv_unfold_avx2(const ConvGeometry& g, const float* x, size_t k0, size_t kc,
                      const std::vector<Segment>& segs, int64_t p0, size_t nr, float* buf);
void conv_unfold_avx512(const ConvGeometry& g, const float* x, size_t k0, size_t kc,
                        const std::vector<Segment>& segs, int64_t p0, size_t nr, float* buf);
ConvUnfoldFn conv_unfold_select(device::IsaLevel level);

}  // namespace onnx_prepack::kernels
