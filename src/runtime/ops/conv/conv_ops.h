// Builders of the conv family (registry.cc lists them) and the filter
// preparation Conv and the BatchNormalization fold share.
#pragma once

#include <memory>
#include <vector>

#include "kernels/f32_conv/f32_conv.h"
#include "runtime/kernel.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {

Result<std::unique_ptr<Kernel>> build_conv(BuildContext& ctx);            // conv.cc
Result<std::unique_ptr<Kernel>> build_conv_transpose(BuildContext& ctx);  // conv_transpose.cc
Result<std::unique_ptr<Kernel>> build_max_pool(BuildContext& ctx);        // pool.cc
Result<std::unique_ptr<Kernel>> build_average_pool(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_lp_pool(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_global_average_pool(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_global_max_pool(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_global_lp_pool(BuildContext& ctx);

// The filter of input `index` (a known value) in the layout the kernel for
// `g` reads on this host: through the session's WeightPreparer when the filter
// is an initializer (hit or packed now), else packed here.
Result<std::shared_ptr<const PreparedConvFilter>> prepare_conv_filter(
    BuildContext& ctx, int index, const kernels::ConvGeometry& g);

// The blocked rows this host's kernel reads for `g` (0 for depthwise).
size_t conv_filter_rows(const kernels::ConvGeometry& g);

// A ConvTranspose filter (input 1, a known value [C, M/group, k...]) as the
// blocked operand of the grouped 1x1 convolution `gemm` that computes its
// columns (pack/conv_filter_format.h, transposed formats): through the
// WeightPreparer for an initializer, else packed here.
Result<std::shared_ptr<const PreparedConvFilter>> prepare_conv_transpose_filter(
    BuildContext& ctx, const kernels::ConvGeometry& gemm);
// Floats of a packed ConvTranspose filter of `dims`: the blocked operand the
// kernel reads (kernels::blocked_filter_floats(gemm)), then the format's shape trailer.
size_t conv_transpose_pack_floats(const std::vector<int64_t>& dims,
                                  const kernels::ConvGeometry& gemm);
// Packs a ConvTranspose filter `w` of `dims` for `gemm` into `dst`
// (conv_transpose_pack_floats floats).
Status pack_conv_transpose_filter(const float* w, const std::vector<int64_t>& dims,
                                  const kernels::ConvGeometry& gemm, float* dst);

// The kernels' per-worker scratch from the session's workspace (a thread-local
// buffer when there is none).
kernels::ConvScratch conv_scratch(Workspace* ws);

}  // namespace onnx_prepack::runtime
