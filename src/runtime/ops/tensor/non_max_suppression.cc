// NonMaxSuppression: per batch and class, boxes above score_threshold in
// descending score order, each kept unless its IoU with a kept box exceeds
// iou_threshold, at most max_output_boxes_per_class. The output's length
// depends on the values, so boxes and scores must be known at plan time; the
// selection is computed then.
#include <algorithm>
#include <numeric>

#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

struct Box {
  float y1, x1, y2, x2;
};

Box corners(const float* b, bool center) {
  if (center) {  // [x_center, y_center, width, height]
    return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  }
  // [y1, x1, y2, x2], any diagonal pair of corners.
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// True when a and b overlap by more than `threshold` (intersection over union).
bool suppresses(const Box& a, const Box& b, float threshold) {
  float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return false;
  float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  float inter = ih * iw;
  return inter / (area_a + area_b - inter) > threshold;
}

Result<float> optional_scalar(BuildContext& ctx, int i, std::string_view what, float fallback) {
  if (!ctx.has_input(i) || shape_numel(ctx.input(i).shape) == 0) return fallback;
  OP_ASSIGN_OR_RETURN(const Tensor* t, value_for_shape(ctx, i, what));
  auto v = scalar_as_double(*t, what);
  if (!v.ok()) return ctx.error(v.status().message());
  return float(*v);
}

}  // namespace

BuildResult build_non_max_suppression(BuildContext& ctx) {
  const int64_t center_point_box = ctx.attr_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1)
    return ctx.error("center_point_box must be 0 or 1, got " + std::to_string(center_point_box));
  OP_ASSIGN_OR_RETURN(const Tensor* boxes, value_for_shape(ctx, 0, "boxes"));
  OP_ASSIGN_OR_RETURN(const Tensor* scores, value_for_shape(ctx, 1, "scores"));
  if (boxes->dtype != kFloat || scores->dtype != kFloat)
    return ctx.error("boxes and scores must be float");
  if (boxes->shape.size() != 3 || boxes->shape[2] != 4 || scores->shape.size() != 3 ||
      scores->shape[0] != boxes->shape[0] || scores->shape[2] != boxes->shape[1])
    return ctx.error("boxes " + shape_string(boxes->shape) + " and scores " +
                     shape_string(scores->shape) + " must be [B, N, 4] and [B, C, N]");
  int64_t max_out = 0;
  if (ctx.has_input(2) && shape_numel(ctx.input(2).shape) > 0) {
    OP_ASSIGN_OR_RETURN(auto v, ints_for_shape(ctx, 2, "max_output_boxes_per_class"));
    max_out = v.empty() ? 0 : std::max<int64_t>(v[0], 0);
  }
  OP_ASSIGN_OR_RETURN(float iou, optional_scalar(ctx, 3, "iou_threshold", 0.0f));
  bool has_score_threshold = ctx.has_input(4) && shape_numel(ctx.input(4).shape) > 0;
  OP_ASSIGN_OR_RETURN(float score_threshold, optional_scalar(ctx, 4, "score_threshold", 0.0f));
  bool center = center_point_box != 0;
  int64_t nb = boxes->shape[0], n = boxes->shape[1], nc = scores->shape[1];
  const float* bd = static_cast<const float*>(boxes->data);
  const float* sd = static_cast<const float*>(scores->data);
  std::vector<int64_t> selected;  // triples
  for (int64_t b = 0; b < nb; ++b) {
    std::vector<Box> bx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) bx[size_t(i)] = corners(bd + (b * n + i) * 4, center);
    for (int64_t c = 0; c < nc; ++c) {
      const float* s = sd + (b * nc + c) * n;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i) {
        if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t p, int64_t q) { return s[p] > s[q]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= max_out) break;
        bool drop = false;
        for (int64_t j : kept) {
          if (suppresses(bx[size_t(i)], bx[size_t(j)], iou)) {
            drop = true;
            break;
          }
        }
        if (!drop) kept.push_back(i);
      }
      for (int64_t i : kept) selected.insert(selected.end(), {b, c, i});
    }
  }
  int64_t count = int64_t(selected.size() / 3);
  auto t = HostTensor::allocate(kInt64, {count, 3});
  std::copy(selected.begin(), selected.end(), static_cast<int64_t*>(t.mutable_data()));
  ctx.set_output_value(0, std::move(t));
  return std::unique_ptr<Kernel>();
}

}  // namespace onnx_prepack::runtime::tensor_family
