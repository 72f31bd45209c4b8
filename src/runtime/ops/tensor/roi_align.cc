// RoiAlign (opsets 10/16): for each region of interest, an output_height x
// output_width grid of bins, each the average (or max) of sampling_ratio^2
// bilinear samples (adaptive: ceil(roi size / bins) when 0). half_pixel
// (opset 16's default) shifts coordinates by -0.5; output_half_pixel (opset
// 10's behaviour) keeps them and makes regions at least 1x1. Samples beyond
// one pixel outside the image are 0; max mode takes the largest weighted
// corner term, as ONNX Runtime does.
#include <cmath>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"
#include "runtime/run_limits.h"
#include "runtime/work_budget.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

struct RoiGeometry {
  int64_t c, h, w, rois, oh, ow;
  int64_t sampling;
  float scale;
  bool half_pixel, max_mode;
};

// The sampling grid of each bin: sampling_ratio, or ceil(roi size / bins).
template <typename T>
void roi_grid(const RoiGeometry& g, const T* roi, float* x1, float* y1, float* rw, float* rh,
              uint64_t* gh, uint64_t* gw) {
  const float offset = g.half_pixel ? 0.5f : 0.0f;
  *x1 = float(roi[0]) * g.scale - offset;
  *y1 = float(roi[1]) * g.scale - offset;
  *rw = float(roi[2]) * g.scale - offset - *x1;
  *rh = float(roi[3]) * g.scale - offset - *y1;
  if (!g.half_pixel) {
    *rw = std::max(*rw, 1.0f);
    *rh = std::max(*rh, 1.0f);
  }
  *gh = g.sampling > 0 ? uint64_t(g.sampling) : steps_of(std::ceil(*rh / float(g.oh)));
  *gw = g.sampling > 0 ? uint64_t(g.sampling) : steps_of(std::ceil(*rw / float(g.ow)));
}

// Samples the whole call takes (saturating), for the work bound.
template <typename T>
uint64_t roi_align_steps(const RoiGeometry& g, const T* rois) {
  uint64_t total = 0;
  for (int64_t r = 0; r < g.rois; ++r) {
    float x1, y1, rw, rh;
    uint64_t gh, gw;
    roi_grid(g, rois + r * 4, &x1, &y1, &rw, &rh, &gh, &gw);
    const uint64_t per = saturating_mul(
        saturating_mul(saturating_mul(gh, gw), uint64_t(g.oh) * uint64_t(g.ow)), uint64_t(g.c));
    total = per > kMaxOperatorSteps ? per : total + per;
    if (total > kMaxOperatorSteps) return total;
  }
  return total;
}

// False when `poll` says the run must stop (up to 2^32 samples: seconds).
template <typename T>
bool roi_align(const RoiGeometry& g, const T* x, const T* rois, const void* batch, bool batch64,
               int64_t n_images, T* y, StepPoller& poll) {
  for (int64_t r = 0; r < g.rois; ++r) {
    int64_t b = index_at(batch, batch64, r);
    if (b < 0 || b >= n_images) {
      std::fill(y + r * g.c * g.oh * g.ow, y + (r + 1) * g.c * g.oh * g.ow, T(0));
      continue;
    }
    float x1, y1, rw, rh;
    uint64_t ugh, ugw;
    roi_grid(g, rois + r * 4, &x1, &y1, &rw, &rh, &ugh, &ugw);  // bounded by roi_align_steps
    const int64_t gh = int64_t(ugh), gw = int64_t(ugw);
    float bin_h = rh / float(g.oh), bin_w = rw / float(g.ow);
    float count = float(std::max<int64_t>(gh * gw, 1));
    for (int64_t ch = 0; ch < g.c; ++ch) {
      const T* plane = x + (b * g.c + ch) * g.h * g.w;
      T* out = y + ((r * g.c + ch) * g.oh) * g.ow;
      for (int64_t ph = 0; ph < g.oh; ++ph) {
        for (int64_t pw = 0; pw < g.ow; ++pw) {
          float acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy) {
            float yy = y1 + float(ph) * bin_h + (float(iy) + 0.5f) * bin_h / float(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              float xx = x1 + float(pw) * bin_w + (float(ix) + 0.5f) * bin_w / float(gw);
              float terms[4] = {0, 0, 0, 0};
              if (!(yy < -1.0f || yy > float(g.h) || xx < -1.0f || xx > float(g.w))) {
                float sy = std::max(yy, 0.0f), sx = std::max(xx, 0.0f);
                int64_t y0 = int64_t(sy), x0 = int64_t(sx), y_hi, x_hi;
                if (y0 >= g.h - 1) {
                  y0 = y_hi = g.h - 1;
                  sy = float(y0);
                } else {
                  y_hi = y0 + 1;
                }
                if (x0 >= g.w - 1) {
                  x0 = x_hi = g.w - 1;
                  sx = float(x0);
                } else {
                  x_hi = x0 + 1;
                }
                float ly = sy - float(y0), lx = sx - float(x0), hy = 1 - ly, hx = 1 - lx;
                terms[0] = hy * hx * float(plane[y0 * g.w + x0]);
                terms[1] = hy * lx * float(plane[y0 * g.w + x_hi]);
                terms[2] = ly * hx * float(plane[y_hi * g.w + x0]);
                terms[3] = ly * lx * float(plane[y_hi * g.w + x_hi]);
              }
              if (g.max_mode) {
                float m = std::max(std::max(terms[0], terms[1]), std::max(terms[2], terms[3]));
                acc = first ? m : std::max(acc, m);
                first = false;
              } else {
                acc += terms[0] + terms[1] + terms[2] + terms[3];
              }
            }
            // Per grid row: one output element's grid alone may take seconds.
            if (poll.charge(uint64_t(gw))) return false;
          }
          out[ph * g.ow + pw] = T(g.max_mode ? acc : acc / count);
          if (poll.charge(1)) return false;
        }
      }
    }
  }
  return true;
}

}  // namespace

BuildResult build_roi_align(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* rois, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(const ValueDesc* batch, ctx.require_input(2));
  if ((x->dtype != kFloat && x->dtype != kDouble) || rois->dtype != x->dtype)
    return ctx.error("X and rois must both be float or double");
  OP_RETURN_IF_ERROR(require_index_type(ctx, batch->dtype, "batch_indices"));
  if (x->shape.size() != 4 || rois->shape.size() != 2 || rois->shape[1] != 4 ||
      batch->shape.size() != 1 || batch->shape[0] != rois->shape[0])
    return ctx.error("X, rois and batch_indices must be [N, C, H, W], [R, 4] and [R]");
  std::string ctm = ctx.attr_string("coordinate_transformation_mode",
                                    ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return ctx.error("coordinate_transformation_mode '" + ctm + "' is not supported");
  std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.error("mode '" + mode + "' is not avg or max");
  RoiGeometry g{x->shape[1],
                x->shape[2],
                x->shape[3],
                rois->shape[0],
                ctx.attr_int("output_height", 1),
                ctx.attr_int("output_width", 1),
                ctx.attr_int("sampling_ratio", 0),
                ctx.attr_float("spatial_scale", 1.0f),
                ctm == "half_pixel",
                mode == "max"};
  if (g.oh <= 0 || g.ow <= 0 || g.sampling < 0)
    return ctx.error("output size must be positive and sampling_ratio non-negative");
  if (g.sampling > 0) {
    const uint64_t s = uint64_t(g.sampling);
    const uint64_t steps = saturating_mul(
        saturating_mul(saturating_mul(s, s), saturating_mul(uint64_t(g.oh), uint64_t(g.ow))),
        saturating_mul(uint64_t(g.c), uint64_t(std::max<int64_t>(g.rois, 0))));
    if (steps > kMaxOperatorSteps) {
      return ctx.error("sampling_ratio " + std::to_string(g.sampling) + " with " +
                       std::to_string(g.rois) + " rois of " + std::to_string(g.c) +
                       " channels and " + std::to_string(g.oh) + "x" + std::to_string(g.ow) +
                       " bins takes more than the work bound of 2^32 samples");
    }
  }
  ctx.set_output(0, x->dtype, {g.rois, g.c, g.oh, g.ow});
  int64_t n_images = x->shape[0];
  bool batch64 = batch->dtype == kInt64;
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::string where = ctx.where();
    k = std::make_unique<FnKernel>([=](const KernelIO& io) {
      const uint64_t steps = roi_align_steps(g, static_cast<const T*>(io.in[1]));
      if (steps > kMaxOperatorSteps) {
        std::fill(static_cast<T*>(io.out[0]),
                  static_cast<T*>(io.out[0]) + g.rois * g.c * g.oh * g.ow, T(0));
        report_failure(io, out_of_range(where + ": the rois' adaptive sampling grids take " +
                                        (steps == UINT64_MAX ? std::string("more than 2^64")
                                                             : std::to_string(steps)) +
                                        " samples, over the work bound of 2^32"));
        return;
      }
      if (g.h == 0 || g.w == 0) {
        std::fill(static_cast<T*>(io.out[0]),
                  static_cast<T*>(io.out[0]) + g.rois * g.c * g.oh * g.ow, T(0));
        return;
      }
      StepPoller poll(io.limits);
      if (!roi_align<T>(g, static_cast<const T*>(io.in[0]), static_cast<const T*>(io.in[1]),
                        io.in[2], batch64, n_images, static_cast<T*>(io.out[0]), poll))
        report_failure(io, io.limits->stop_status(where));
    });
  };
  if (x->dtype == kFloat)
    make(TypeTag<float>{});
  else
    make(TypeTag<double>{});
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
