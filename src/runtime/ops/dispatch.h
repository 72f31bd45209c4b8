// Type dispatch, the broadcast helpers and the parallel loop shared by the operator files
// of every family (ops/README.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/thread_pool.h"
#include "runtime/kernel.h"
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

// Elements per task below which an elementwise op runs on one thread.
constexpr int64_t kMinChunk = 16384;

// The broadcast shape of inputs [first, first + count), all required.
inline Result<Shape> broadcast_inputs(const BuildContext& ctx, int first, int count) {
  Shape out;
  for (int i = first; i < first + count; ++i) {
    OP_ASSIGN_OR_RETURN(const ValueDesc* d, ctx.require_input(i));
    auto r = broadcast_shapes(out, d->shape);
    if (!r.ok()) return ctx.error(r.status().message());
    out = *r;
  }
  return out;
}

// Runs inner(out_base, offsets[], count) over each inner run of the plan, on
// the pool when large. Elementwise: the split never changes a result.
template <typename Inner>
void run_broadcast(const BroadcastPlan& plan, base::ThreadPool* pool, Inner&& inner) {
  int64_t rows = plan.outer_count();
  int64_t min_rows = std::max<int64_t>(1, kMinChunk / std::max<int64_t>(1, plan.inner));
  parallel_range(pool, rows, min_rows, [&](int64_t r0, int64_t r1) {
    int64_t off[3] = {0, 0, 0};
    for (int64_t r = r0; r < r1; ++r) {
      plan.offsets(r, off);
      inner(r * plan.inner, off, plan.inner);
    }
  });
}

}  // namespace onnx_prepack::runtime
