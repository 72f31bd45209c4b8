// Window geometry shared by Conv, ConvTranspose and the pooling operators:
// kernel, strides, dilations and pads read per the node's attributes
// (auto_pad NOTSET / VALID / SAME_UPPER / SAME_LOWER), output sizes computed
// with overflow checks.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/f32_conv/f32_conv.h"
#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

struct Window {
  int rank = 0;  // spatial dims
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;
};

// Reads strides/dilations/pads/auto_pad for an input of shape x ([N, C,
// spatial...]) and the given kernel sizes; `ceil_mode` as pooling's.
// `dilations` false for operators without that attribute.
Result<Window> read_window(const BuildContext& ctx, const Shape& x,
                           const std::vector<int64_t>& kernel, bool ceil_mode,
                           bool has_dilations = true);

// The kernels layer's geometry (spatial dims right-aligned into 3).
kernels::ConvGeometry to_geometry(const Window& w, int64_t n, int64_t c, int64_t m, int64_t group);

// Splits [0, n) over the pool by task (fn(task, worker)); inline without a pool.
void for_each_task(base::ThreadPool* pool, size_t n, const std::function<void(size_t, size_t)>& fn);

}  // namespace onnx_prepack::runtime
