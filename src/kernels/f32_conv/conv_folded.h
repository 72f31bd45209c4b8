// The batch-folded Conv kernel: the blocked kernel's GEMM with its columns
// running over the output pixels of every image of the batch (column j of
// group g is pixel j % P of image j / P), so that small maps fill the
// microkernel's nr-wide panels and one parallel_for covers the whole batch.
//
// Why: the blocked and indirect kernels cut columns per image (and the
// indirect one per output row), so a 7x7 map fills 49 of 64 columns and a
// 10x2 map of 34 images runs 34 x 10 panels of 2 useful columns out of 32,
// with two thread-pool rounds per image. Folding keeps every panel full and
// splits work over (group, column tile, output-channel chunk), so even one
// small image has tasks for every thread.
//
// Same bits as the path it replaces: each output element is one fused chain
// over the filter rows k in increasing order, the same packed filter blocks
// (pack_blocked_filter) and the same column values. `bias_first` starts the
// chain from the bias as the indirect kernel does; otherwise the chain starts
// from 0 and the bias is added after it, as in the blocked kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/f32_conv/f32_conv.h"

namespace onnx_prepack::kernels {

// Largest output-channel rows x tile columns of the per-worker output tile:
// beyond it (very wide layers) the folded kernel is not chosen.
inline constexpr size_t kFoldedMaxTileFloats = size_t(1) << 16;
// Largest zero-padded copy of the input rows one task reads (2-D filters
// other than 1x1); a task whose rows need more unfolds from the input with
// bounds checks instead (the same bytes).
inline constexpr size_t kFoldedMaxPaddedFloats = size_t(1) << 16;

// Fraction of the microkernel's columns that hold output pixels in the
// per-image path `g` takes now: P over P rounded up to nr (blocked, per image),
// or OW over OW rounded up to nr (indirect, per output row).
double conv_per_image_column_fill(const ConvGeometry& g, size_t nr, bool indirect);

// Whether the folded kernel is chosen over the per-image path (`indirect`
// says which one that is), given that the output tile fits
// kFoldedMaxTileFloats: for a batch (n > 1); for one image when that path
// fills under kFoldedMinFill of its columns and folding fills more, or when a
// 1x1 conv has fewer column tiles than kFoldedMinTasks. docs/decisions.md,
// "Conv on small maps and batches".
inline constexpr double kFoldedMinFill = 0.8;
inline constexpr size_t kFoldedMinTasks = 4;
bool conv_folded_applies(const ConvGeometry& g, const F32GemmKernel& k, bool indirect);

// Scratch floats per worker: the unfolded panels, the output tile and the
// padded rows.
size_t conv_folded_scratch_floats(const ConvGeometry& g, const F32GemmKernel& k);

// y = conv(x, w) + bias (bias may be null); `packed_w` is the blocked filter
// of k.mr rows. `scratch` returns conv_folded_scratch_floats for a worker.
void conv_folded(const ConvGeometry& g, const F32GemmKernel& k, bool bias_first, const float* x,
                 const float* packed_w, const float* bias, float* y, base::ThreadPool* pool,
                 const ConvScratch& scratch, const ConvOutputEpilogue* post = nullptr);

}  // namespace onnx_prepack::kernels
