// Detection operators: NonMaxSuppression (its output length depends on the
// values, so boxes and scores must be known at plan time: the CLI pins its
// inputs; computed then) and RoiAlign (bilinear sampling inside each region,
// average or max over the sampling grid, as the operator spec describes).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/ops/extra/common.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime::extra {
namespace {

Result<const Tensor*> known_value(BuildContext& ctx, int i, const char* what) {
  const Tensor* t = ctx.input_value(i);
  if (t == nullptr) {
    return ctx.error(std::string(what) + " (input " + std::to_string(i) + " '" + ctx.input(i).name +
                     "') decides the output's length, so it " + kNeedsValue +
                     ": a constant, computed from constants, or a pinned input");
  }
  return t;
}

Result<double> scalar_float(BuildContext& ctx, int i, const char* what, double fallback) {
  if (!ctx.has_input(i)) return fallback;
  OP_ASSIGN_OR_RETURN(const Tensor* t, known_value(ctx, i, what));
  if (checked_numel(t->shape) != 1 || (t->dtype != kFloat && t->dtype != kDouble))
    return ctx.error(std::string(what) + " must be a float scalar");
  return t->dtype == kFloat ? double(*t->as<float>()) : *t->as<double>();
}

struct Box {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
  float area() const { return (y2 - y1) * (x2 - x1); }
};

Box box_at(const float* b, bool center) {
  if (center) {
    float xc = b[0], yc = b[1], w = b[2], h = b[3];
    return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// True when the IoU of a and b passes the threshold (no suppression for empty boxes).
bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  float a1 = a.area(), a2 = b.area();
  if (a1 <= 0 || a2 <= 0) return false;
  float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  float inter = ih * iw;
  return inter / (a1 + a2 - inter) > iou_threshold;
}

Result<std::unique_ptr<Kernel>> build_nms(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const Tensor* boxes, known_value(ctx, 0, "boxes"));
  OP_ASSIGN_OR_RETURN(const Tensor* scores, known_value(ctx, 1, "scores"));
  if (boxes->dtype != kFloat || scores->dtype != kFloat)
    return ctx.error("boxes and scores must be float");
  if (boxes->shape.size() != 3 || boxes->shape[2] != 4 || scores->shape.size() != 3 ||
      scores->shape[0] != boxes->shape[0] || scores->shape[2] != boxes->shape[1])
    return ctx.error("boxes must be [B, N, 4] and scores [B, C, N]");
  int64_t max_out = 0;
  if (ctx.has_input(2)) {
    OP_ASSIGN_OR_RETURN(const Tensor* m, known_value(ctx, 2, "max_output_boxes_per_class"));
    OP_ASSIGN_OR_RETURN(std::vector<int64_t> mv, to_int64_vector(*m, "max_output_boxes_per_class"));
    if (mv.size() != 1) return ctx.error("max_output_boxes_per_class must be a scalar");
    max_out = std::max<int64_t>(mv[0], 0);
  }
  OP_ASSIGN_OR_RETURN(double iou, scalar_float(ctx, 3, "iou_threshold", 0));
  bool has_score_threshold = ctx.has_input(4);
  OP_ASSIGN_OR_RETURN(double score_threshold, scalar_float(ctx, 4, "score_threshold", 0));
  bool center = ctx.attr_int("center_point_box", 0) != 0;
  int64_t batches = boxes->shape[0], n = boxes->shape[1], classes = scores->shape[1];
  const float* bx = boxes->as<float>();
  const float* sc = scores->as<float>();
  std::vector<int64_t> selected;  // triples
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = sc + (b * classes + c) * n;
      order.clear();
      // A NaN score is never selected (and would break the sort's ordering).
      for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(s[i]) && (!has_score_threshold || double(s[i]) > score_threshold))
          order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t l, int64_t r) { return s[l] > s[r]; });
      kept.clear();
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= max_out) break;
        Box cand = box_at(bx + (b * n + i) * 4, center);
        bool drop = false;
        for (const Box& k : kept) {
          if (suppresses(k, cand, float(iou))) {
            drop = true;
            break;
          }
        }
        if (drop) continue;
        kept.push_back(cand);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  int64_t rows = int64_t(selected.size() / 3);
  OP_ASSIGN_OR_RETURN(HostTensor out,
                      HostTensor::try_allocate(kInt64, Shape{rows, 3}, "selected_indices"));
  if (rows > 0)
    std::copy(selected.begin(), selected.end(), static_cast<int64_t*>(out.mutable_data()));
  ctx.set_output_value(0, std::move(out));
  return std::unique_ptr<Kernel>();
}

struct RoiPlan {
  int64_t batches = 0, channels = 0, height = 0, width = 0, rois = 0, out_h = 1, out_w = 1;
  int64_t sampling = 0;
  float scale = 1;
  bool half_pixel = true;
  bool max_mode = false;
};

// Sampling points per bin along one axis when sampling_ratio is 0: ceil(bin
// size). Capped past twice the image's extent (a region that large only adds
// points in the padding) so that a hostile region cannot make the loop endless.
int64_t grid_points(float bin, int64_t extent) {
  if (!(bin > 0)) return 0;
  double cap = 2.0 * double(extent) + 2;
  return int64_t(std::min(double(std::ceil(bin)), cap));
}

template <typename T>
void roi_align(const RoiPlan& p, const T* x, const T* rois, const int64_t* batch, T* y) {
  for (int64_t r = 0; r < p.rois; ++r) {
    const T* roi = rois + r * 4;
    float off = p.half_pixel ? 0.5f : 0.0f;
    float sw = float(roi[0]) * p.scale - off, sh = float(roi[1]) * p.scale - off;
    float ew = float(roi[2]) * p.scale - off, eh = float(roi[3]) * p.scale - off;
    float rw = ew - sw, rh = eh - sh;
    if (!p.half_pixel) {
      rw = std::max(rw, 1.0f);
      rh = std::max(rh, 1.0f);
    }
    float bin_h = rh / float(p.out_h), bin_w = rw / float(p.out_w);
    int64_t gh = p.sampling > 0 ? p.sampling : grid_points(rh / float(p.out_h), p.height);
    int64_t gw = p.sampling > 0 ? p.sampling : grid_points(rw / float(p.out_w), p.width);
    float count = float(std::max<int64_t>(gh * gw, 1));
    int64_t bi = batch[r];
    for (int64_t c = 0; c < p.channels; ++c) {
      const T* plane = x + (bi * p.channels + c) * p.height * p.width;
      for (int64_t ph = 0; ph < p.out_h; ++ph) {
        for (int64_t pw = 0; pw < p.out_w; ++pw) {
          float acc = 0;
          bool have = false;
          for (int64_t iy = 0; iy < gh; ++iy) {
            float yy = sh + float(ph) * bin_h + (float(iy) + 0.5f) * bin_h / float(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              float xx = sw + float(pw) * bin_w + (float(ix) + 0.5f) * bin_w / float(gw);
              float v = 0;
              // Written so that NaN coordinates count as outside.
              if (yy >= -1.0f && yy <= float(p.height) && xx >= -1.0f && xx <= float(p.width)) {
                float ys = std::max(yy, 0.0f), xs = std::max(xx, 0.0f);
                int64_t y0 = int64_t(ys), x0 = int64_t(xs), y1, x1;
                if (y0 >= p.height - 1) {
                  y0 = y1 = p.height - 1;
                  ys = float(y0);
                } else {
                  y1 = y0 + 1;
                }
                if (x0 >= p.width - 1) {
                  x0 = x1 = p.width - 1;
                  xs = float(x0);
                } else {
                  x1 = x0 + 1;
                }
                float ly = ys - float(y0), lx = xs - float(x0), hy = 1 - ly, hx = 1 - lx;
                float v1 = hy * hx * float(plane[y0 * p.width + x0]);
                float v2 = hy * lx * float(plane[y0 * p.width + x1]);
                float v3 = ly * hx * float(plane[y1 * p.width + x0]);
                float v4 = ly * lx * float(plane[y1 * p.width + x1]);
                v = p.max_mode ? std::max(std::max(v1, v2), std::max(v3, v4)) : v1 + v2 + v3 + v4;
              }
              if (p.max_mode) {
                acc = have ? std::max(acc, v) : v;
                have = true;
              } else {
                acc += v;
              }
            }
          }
          y[((r * p.channels + c) * p.out_h + ph) * p.out_w + pw] =
              T(p.max_mode ? acc : acc / count);
        }
      }
    }
  }
}

Result<std::unique_ptr<Kernel>> build_roi_align(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* rois, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(2));
  if (x->shape.size() != 4) return ctx.error("X must be [N, C, H, W]");
  if (rois->shape.size() != 2 || rois->shape[1] != 4 || rois->dtype != x->dtype)
    return ctx.error("rois must be [num_rois, 4] of X's type");
  if (idx->dtype != kInt64 || idx->shape.size() != 1 || idx->shape[0] != rois->shape[0])
    return ctx.error("batch_indices must be int64 [num_rois]");
  RoiPlan p;
  p.batches = x->shape[0];
  p.channels = x->shape[1];
  p.height = x->shape[2];
  p.width = x->shape[3];
  p.rois = rois->shape[0];
  p.out_h = ctx.attr_int("output_height", 1);
  p.out_w = ctx.attr_int("output_width", 1);
  p.sampling = ctx.attr_int("sampling_ratio", 0);
  p.scale = ctx.attr_float("spatial_scale", 1.0f);
  std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.error("mode '" + mode + "' is not avg or max");
  p.max_mode = mode == "max";
  std::string ct = ctx.attr_string("coordinate_transformation_mode",
                                   ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ct != "half_pixel" && ct != "output_half_pixel")
    return ctx.error("coordinate_transformation_mode '" + ct + "' is not supported");
  p.half_pixel = ct == "half_pixel";
  if (p.out_h <= 0 || p.out_w <= 0 || p.sampling < 0 || p.sampling > 4096)
    return ctx.error("output_height/output_width must be positive, sampling_ratio in [0, 4096]");
  Shape out{p.rois, p.channels, p.out_h, p.out_w};
  OP_ASSIGN_OR_RETURN(int64_t n, checked_elements(ctx, out));
  (void)n;
  ctx.set_output(0, x->dtype, out);
  if (p.rois > 0 && (p.batches == 0 || p.height == 0 || p.width == 0))
    return ctx.error("X must have a non-empty image for each region");
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([p](const KernelIO& io) {
          const int64_t* bi = static_cast<const int64_t*>(io.in[2]);
          // A batch index out of range is undefined; it reads batch 0 rather than out of bounds.
          std::vector<int64_t> safe(bi, bi + p.rois);
          for (auto& v : safe) v = std::clamp<int64_t>(v, 0, p.batches - 1);
          roi_align(p, static_cast<const T*>(io.in[0]), static_cast<const T*>(io.in[1]),
                    safe.data(), static_cast<T*>(io.out[0]));
        });
      }))
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return k;
}

constexpr OpEntry kOps[] = {
    {"NonMaxSuppression", build_nms},
    {"RoiAlign", build_roi_align},
};

}  // namespace

std::span<const OpEntry> detection_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
