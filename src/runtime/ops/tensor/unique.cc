// Unique: the distinct elements (or slices along `axis`), sorted or in order of
// first occurrence, with first indices, inverse indices and counts. The output
// size depends on the values, so the input must be known at plan time; all
// outputs are computed then. NaNs form one group sorted last; -0.0 and 0.0
// one group (the first occurrence's bits are output).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <type_traits>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_unique(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const Tensor* x, value_for_shape(ctx, 0, "input"));
  int32_t dt = x->dtype == kBool ? kUint8 : x->dtype;
  if (!dispatch_numeric(dt, [](auto) {}))
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  const int64_t sorted_v = ctx.attr_int("sorted", 1);
  if (sorted_v != 0 && sorted_v != 1)
    return ctx.error("sorted must be 0 or 1, got " + std::to_string(sorted_v));
  bool sorted = sorted_v == 1;
  const auto* a = ctx.typed_attr("axis", onnx::AttributeProto::INT);
  Shape view = a ? x->shape : Shape{x->numel()};
  int64_t rank = int64_t(view.size());
  int64_t axis = 0;
  if (a) {
    OP_ASSIGN_OR_RETURN(axis, normalize_axis(a->i(), rank, ctx));
  }
  int64_t outer = dims_product(view, 0, size_t(axis));
  int64_t dim = view[size_t(axis)];
  int64_t inner = dims_product(view, size_t(axis) + 1, view.size());
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), 0);
  // Three-way comparison of slices p and q (elements in (outer, inner) order).
  std::function<int(int64_t, int64_t)> cmp;
  dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = static_cast<const T*>(x->data);
    cmp = [=](int64_t p, int64_t q) {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          T u = d[(o * dim + p) * inner + i], v = d[(o * dim + q) * inner + i];
          if constexpr (std::is_floating_point_v<T>) {
            // NaNs are one value, after every number (as numpy.unique, the
            // ONNX reference); -0.0 and 0.0 are one value.
            bool un = std::isnan(u), vn = std::isnan(v);
            if (un || vn) {
              if (un != vn) return un ? 1 : -1;
              continue;
            }
          }
          if (u < v) return -1;
          if (v < u) return 1;
        }
      }
      return 0;
    };
  });
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
  // Groups of equal slices; the first member of each is the first occurrence.
  std::vector<int64_t> group_of(static_cast<size_t>(dim));
  std::vector<int64_t> first, counts;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || cmp(order[i - 1], order[i]) != 0) {
      first.push_back(order[i]);
      counts.push_back(0);
    }
    group_of[size_t(order[i])] = int64_t(first.size() - 1);
    ++counts.back();
  }
  int64_t u = int64_t(first.size());
  std::vector<int64_t> rank_of(static_cast<size_t>(u));  // group -> output position
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(static_cast<size_t>(u));
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t g, int64_t h) { return first[size_t(g)] < first[size_t(h)]; });
    for (int64_t pos = 0; pos < u; ++pos) rank_of[size_t(by_first[size_t(pos)])] = pos;
  }
  Shape yshape = view;
  yshape[size_t(axis)] = u;
  auto y = HostTensor::allocate(x->dtype, yshape);
  auto idx = HostTensor::allocate(kInt64, {u});
  auto inv = HostTensor::allocate(kInt64, {dim});
  auto cnt = HostTensor::allocate(kInt64, {u});
  size_t w = dtype_size(x->dtype);
  auto* yd = static_cast<uint8_t*>(y.mutable_data());
  const auto* xd = static_cast<const uint8_t*>(x->data);
  for (int64_t g = 0; g < u; ++g) {
    int64_t pos = rank_of[size_t(g)];
    static_cast<int64_t*>(idx.mutable_data())[pos] = first[size_t(g)];
    static_cast<int64_t*>(cnt.mutable_data())[pos] = counts[size_t(g)];
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(yd + size_t((o * u + pos) * inner) * w,
                  xd + size_t((o * dim + first[size_t(g)]) * inner) * w, size_t(inner) * w);
    }
  }
  for (int64_t j = 0; j < dim; ++j)
    static_cast<int64_t*>(inv.mutable_data())[j] = rank_of[size_t(group_of[size_t(j)])];
  ctx.set_output_value(0, std::move(y));
  ctx.set_output_value(1, std::move(idx));
  ctx.set_output_value(2, std::move(inv));
  ctx.set_output_value(3, std::move(cnt));
  return std::unique_ptr<Kernel>();
}

}  // namespace onnx_prepack::runtime::tensor_family
