#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t ri = in.size() - 1 - i;
    size_t ro = out.size() - 1 - i;
    s[ro] = in[ri] == 1 ? 0 : stride;
    stride *= in[ri];
  }
  return s;
}

BroadcastPlan make_broadcast_plan(const std::vector<Shape>& inputs, const Shape& out) {
  BroadcastPlan p;
  p.total = shape_numel(out);  // dims-lint: ok (broadcast_shapes checked it)
  size_t n = inputs.size();
  std::vector<std::vector<int64_t>> strides;
  for (const auto& s : inputs) strides.push_back(broadcast_strides(s, out));
  // Collapse adjacent dims where every input is contiguous across them or
  // broadcast in both; drop size-1 dims.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(n);
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t i = 0; i < n && merge; ++i) {
      int64_t prev = st[i].back();
      int64_t cur = strides[i][d];
      // prev dim stride must equal cur * size(d) (contiguous), or both zero.
      if (!((prev == 0 && cur == 0) || (cur != 0 && prev == cur * out[d]))) merge = false;
    }
    if (merge) {
      dims.back() *= out[d];
      for (size_t i = 0; i < n; ++i) st[i].back() = strides[i][d];
    } else {
      dims.push_back(out[d]);
      for (size_t i = 0; i < n; ++i) st[i].push_back(strides[i][d]);
    }
  }
  p.inner_stride.assign(n, 0);
  if (dims.empty()) {
    p.inner = p.total == 0 ? 0 : 1;
    p.outer_strides.assign(n, {});
    return p;
  }
  p.inner = dims.back();
  bool unit = true;
  for (size_t i = 0; i < n; ++i) {
    if (st[i].back() > 1) unit = false;
  }
  if (unit) {
    for (size_t i = 0; i < n; ++i) p.inner_stride[i] = st[i].back();
    dims.pop_back();
    for (auto& v : st) v.pop_back();
  } else {
    // Some input is strided in the last dim (not possible with broadcasting
    // of contiguous tensors, kept for safety): iterate element by element.
    p.inner = 1;
    for (size_t i = 0; i < n; ++i) p.inner_stride[i] = 0;
  }
  p.outer_dims = dims;
  p.outer_strides = st;
  return p;
}

void BroadcastPlan::offsets(int64_t row, int64_t* off) const {
  size_t n = outer_strides.size();
  for (size_t i = 0; i < n; ++i) off[i] = 0;
  for (size_t d = outer_dims.size(); d-- > 0;) {
    int64_t idx = row % outer_dims[d];
    row /= outer_dims[d];
    for (size_t i = 0; i < n; ++i) off[i] += idx * outer_strides[i][d];
  }
}

void parallel_range(base::ThreadPool* pool, int64_t n, int64_t min_chunk,
                    const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  size_t threads = pool ? pool->size() : 1;
  int64_t chunks = std::min<int64_t>(int64_t(threads) * 4, (n + min_chunk - 1) / min_chunk);
  if (chunks <= 1 || threads <= 1) {
    fn(0, n);
    return;
  }
  int64_t per = (n + chunks - 1) / chunks;
  pool->parallel_for(size_t((n + per - 1) / per), [&](size_t t, size_t) {
    int64_t b = int64_t(t) * per;
    fn(b, std::min(n, b + per));
  });
}

}  // namespace onnx_prepack::runtime
