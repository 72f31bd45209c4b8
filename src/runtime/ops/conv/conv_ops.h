// The conv family's operator entries (registry.cc lists them) and the filter
// preparation Conv and the BatchNormalization fold share.
#pragma once

#include <memory>

#include "kernels/f32_conv/f32_conv.h"
#include "runtime/kernel.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {

extern const OpEntry kConvEntry;
extern const OpEntry kConvTransposeEntry;
extern const OpEntry kMaxPoolEntry;
extern const OpEntry kAveragePoolEntry;
extern const OpEntry kLpPoolEntry;
extern const OpEntry kGlobalAveragePoolEntry;
extern const OpEntry kGlobalMaxPoolEntry;
extern const OpEntry kGlobalLpPoolEntry;
extern const OpEntry kBatchNormalizationEntry;
extern const OpEntry kInstanceNormalizationEntry;
extern const OpEntry kGroupNormalizationEntry;
extern const OpEntry kLrnEntry;

// The filter of input `index` (a known value) in the layout the kernel for
// `g` reads on this host: through the session's WeightPreparer when the filter
// is an initializer (hit or packed now), else packed here.
Result<std::shared_ptr<const PreparedConvFilter>> prepare_conv_filter(
    BuildContext& ctx, int index, const kernels::ConvGeometry& g);

// The blocked rows this host's kernel reads for `g` (0 for depthwise).
size_t conv_filter_rows(const kernels::ConvGeometry& g);

}  // namespace onnx_prepack::runtime
