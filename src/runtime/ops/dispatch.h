// Type dispatch and the broadcasting iterator shared by the operator files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/thread_pool.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) for the numeric types; returns false for others.
template <typename Fn>
bool dispatch_numeric(int32_t dtype, Fn&& fn) {
  switch (dtype) {
    case kFloat:
      fn(TypeTag<float>{});
      return true;
    case kDouble:
      fn(TypeTag<double>{});
      return true;
    case kInt32:
      fn(TypeTag<int32_t>{});
      return true;
    case kInt64:
      fn(TypeTag<int64_t>{});
      return true;
    case kInt8:
      fn(TypeTag<int8_t>{});
      return true;
    case kInt16:
      fn(TypeTag<int16_t>{});
      return true;
    case kUint8:
      fn(TypeTag<uint8_t>{});
      return true;
    case kUint16:
      fn(TypeTag<uint16_t>{});
      return true;
    case kUint32:
      fn(TypeTag<uint32_t>{});
      return true;
    case kUint64:
      fn(TypeTag<uint64_t>{});
      return true;
    default:
      return false;
  }
}

// Same, by element width only (for ops that move bytes).
template <typename Fn>
bool dispatch_width(size_t width, Fn&& fn) {
  switch (width) {
    case 1:
      fn(TypeTag<uint8_t>{});
      return true;
    case 2:
      fn(TypeTag<uint16_t>{});
      return true;
    case 4:
      fn(TypeTag<uint32_t>{});
      return true;
    case 8:
      fn(TypeTag<uint64_t>{});
      return true;
    default:
      return false;
  }
}

// Element strides of an input of shape `in` broadcast to `out` (0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// A broadcast of up to 3 inputs onto an output, collapsed to [outer..., inner]
// so that the inner loop runs with unit or zero strides.
struct BroadcastPlan {
  int64_t total = 0;
  int64_t inner = 1;                                // innermost run length
  std::vector<int64_t> outer_dims;                  // collapsed outer dims
  std::vector<std::vector<int64_t>> outer_strides;  // per input
  std::vector<int64_t> inner_stride;                // per input: 0 or 1
  int64_t outer_count() const { return inner == 0 ? 0 : total / inner; }
  // Element offset of each input for outer row `row`.
  void offsets(int64_t row, int64_t* off) const;
};
BroadcastPlan make_broadcast_plan(const std::vector<Shape>& inputs, const Shape& out);

// Runs fn(begin, end) over [0, n) in chunks on the pool when n is large.
void parallel_range(base::ThreadPool* pool, int64_t n, int64_t min_chunk,
                    const std::function<void(int64_t, int64_t)>& fn);

}  // namespace onnx_prepack::runtime
