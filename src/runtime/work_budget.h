// The work bound of one operator call. Counts that come from the model or its
// inputs (a RoiAlign sampling grid, the subscripts of a direct Einsum loop)
// could otherwise make one call run for hours; past kMaxOperatorSteps inner
// steps the builder (when the count is known at plan time) or the kernel (when
// it depends on a fed value) fails naming the node, the count and the bound.
// docs/runtime.md, "Work bounds".
#pragma once

#include <cstdint>
#include <limits>

#include "runtime/checked_math.h"  // saturating_mul

namespace onnx_prepack::runtime {

// About 2^32 inner steps: seconds on one core, never hours.
inline constexpr uint64_t kMaxOperatorSteps = uint64_t(1) << 32;

// A float count (ceil of a ratio that a fed value sets) as steps, saturating:
// NaN and values past 2^62 count as more than any bound.
inline uint64_t steps_of(float count) {
  if (!(count < 4.6e18f)) return std::numeric_limits<uint64_t>::max();
  return count < 1.0f ? 0 : uint64_t(count);
}

}  // namespace onnx_prepack::runtime
