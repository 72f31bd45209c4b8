// GridSample (opsets 16 and 20) on 4-D input: X [N, C, H, W] sampled at the
// normalised (x, y) of grid [N, Ho, Wo, 2]. Modes bilinear/linear, nearest
// (round half to even) and bicubic/cubic (A = -0.75); padding zeros, border
// or reflection; align_corners maps -1/1 to the corner pixels' centres
// instead of the image edges. Padding applies to the pixels the
// interpolation reads (as ONNX Runtime does): outside the image they are 0,
// the nearest edge pixel, or the pixel reflected at the image's extent.
#include <cmath>

#include "runtime/ops/extra/common.h"

namespace onnx_prepack::runtime::extra {
namespace {

enum class Mode { kLinear, kNearest, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridPlan {
  int64_t n = 0, c = 0, h = 0, w = 0, ho = 0, wo = 0;
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

double denormalize(double v, int64_t size, bool align_corners) {
  return align_corners ? (v + 1) / 2 * double(size - 1) : ((v + 1) * double(size) - 1) / 2;
}

// Reflects v into [lo, hi] as a mirror does, repeatedly.
double reflect(double v, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return lo;
  if (v < lo) {
    double d = lo - v;
    double k = std::floor(d / range);
    double r = d - k * range;
    return std::fmod(k, 2.0) == 0 ? lo + r : hi - r;
  }
  if (v > hi) {
    double d = v - hi;
    double k = std::floor(d / range);
    double r = d - k * range;
    return std::fmod(k, 2.0) == 0 ? hi - r : lo + r;
  }
  return v;
}

// Reflection repeats every 2 (hi - lo) pixels (an integer): a point far
// outside moves by whole periods next to the image, which changes no tap.
double reflect_far(double v, double lo, double hi) {
  double period = 2 * (hi - lo);
  if (period <= 0) return lo;
  if (v >= lo - period && v <= hi + period) return v;
  double shifted = std::fmod(v - lo, period);
  if (shifted < 0) shifted += period;
  return lo + shifted;
}

template <typename T>
struct Sampler {
  const GridPlan& p;
  const T* plane;
  double lo_x, hi_x, lo_y, hi_y;  // the image's extent in pixel coordinates

  double pixel(int64_t y, int64_t x) const {
    if (p.padding == Padding::kZeros) {
      if (x < 0 || x >= p.w || y < 0 || y >= p.h) return 0;
    } else if (p.padding == Padding::kBorder) {
      x = std::clamp<int64_t>(x, 0, p.w - 1);
      y = std::clamp<int64_t>(y, 0, p.h - 1);
    } else {
      x = int64_t(reflect(double(x), lo_x, hi_x));
      y = int64_t(reflect(double(y), lo_y, hi_y));
      x = std::clamp<int64_t>(x, 0, p.w - 1);
      y = std::clamp<int64_t>(y, 0, p.h - 1);
    }
    return double(plane[y * p.w + x]);
  }

  static void cubic_coeffs(double t, double* c) {
    constexpr double A = -0.75;
    double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
    c[0] = ((A * t1 - 5 * A) * t1 + 8 * A) * t1 - 4 * A;
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    c[2] = ((A + 2) * t2 - (A + 3)) * t2 * t2 + 1;
    c[3] = ((A * t3 - 5 * A) * t3 + 8 * A) * t3 - 4 * A;
  }

  double sample(double x, double y) const {
    if (!std::isfinite(x) || !std::isfinite(y)) return 0;
    // Far outside, every tap reads padding of the same value (zero, the edge
    // pixel, or a reflection of a far point): bounding the point keeps the
    // integer casts below in range. Reflection is periodic, so its points are
    // first brought into one period.
    if (p.padding == Padding::kReflection) {
      x = reflect_far(x, lo_x, hi_x);
      y = reflect_far(y, lo_y, hi_y);
    }
    x = std::clamp(x, -double(p.w) - 8, 2.0 * double(p.w) + 8);
    y = std::clamp(y, -double(p.h) - 8, 2.0 * double(p.h) + 8);
    if (p.mode == Mode::kNearest)
      return pixel(int64_t(std::nearbyint(y)), int64_t(std::nearbyint(x)));
    if (p.mode == Mode::kLinear) {
      double x0 = std::floor(x), y0 = std::floor(y);
      double dx = x - x0, dy = y - y0;
      int64_t ix = int64_t(x0), iy = int64_t(y0);
      return (1 - dy) * ((1 - dx) * pixel(iy, ix) + dx * pixel(iy, ix + 1)) +
             dy * ((1 - dx) * pixel(iy + 1, ix) + dx * pixel(iy + 1, ix + 1));
    }
    double x0 = std::floor(x), y0 = std::floor(y);
    double cx[4], cy[4];
    cubic_coeffs(x - x0, cx);
    cubic_coeffs(y - y0, cy);
    int64_t ix = int64_t(x0) - 1, iy = int64_t(y0) - 1;
    double acc = 0;
    for (int i = 0; i < 4; ++i) {
      double row = 0;
      for (int j = 0; j < 4; ++j) row += cx[j] * pixel(iy + i, ix + j);
      acc += cy[i] * row;
    }
    return acc;
  }
};

template <typename T>
void grid_sample(const GridPlan& p, const T* x, const T* grid, T* y) {
  double lo_x = p.align_corners ? 0 : -0.5, hi_x = p.align_corners ? double(p.w - 1) : p.w - 0.5;
  double lo_y = p.align_corners ? 0 : -0.5, hi_y = p.align_corners ? double(p.h - 1) : p.h - 0.5;
  for (int64_t b = 0; b < p.n; ++b) {
    const T* g = grid + b * p.ho * p.wo * 2;
    for (int64_t ch = 0; ch < p.c; ++ch) {
      Sampler<T> s{p, x + (b * p.c + ch) * p.h * p.w, lo_x, hi_x, lo_y, hi_y};
      T* out = y + (b * p.c + ch) * p.ho * p.wo;
      for (int64_t i = 0; i < p.ho * p.wo; ++i) {
        double gx = denormalize(double(g[2 * i]), p.w, p.align_corners);
        double gy = denormalize(double(g[2 * i + 1]), p.h, p.align_corners);
        out[i] = T(s.sample(gx, gy));
      }
    }
  }
}

Result<std::unique_ptr<Kernel>> build_grid_sample(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* grid, ctx.require_input(1));
  if (x->shape.size() != 4)
    return ctx.error("only 4-D input (2 spatial dimensions) is supported, got rank " +
                     std::to_string(x->shape.size()));
  if (grid->shape.size() != 4 || grid->shape[0] != x->shape[0] || grid->shape[3] != 2 ||
      grid->dtype != x->dtype)
    return ctx.error("grid must be [N, H_out, W_out, 2] of X's type");
  GridPlan p;
  p.n = x->shape[0];
  p.c = x->shape[1];
  p.h = x->shape[2];
  p.w = x->shape[3];
  p.ho = grid->shape[1];
  p.wo = grid->shape[2];
  std::string mode = ctx.attr_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear" || mode == "linear")
    p.mode = Mode::kLinear;
  else if (mode == "nearest")
    p.mode = Mode::kNearest;
  else if (mode == "bicubic" || mode == "cubic")
    p.mode = Mode::kCubic;
  else
    return ctx.error("mode '" + mode + "' is not supported");
  std::string pad = ctx.attr_string("padding_mode", "zeros");
  if (pad == "zeros")
    p.padding = Padding::kZeros;
  else if (pad == "border")
    p.padding = Padding::kBorder;
  else if (pad == "reflection")
    p.padding = Padding::kReflection;
  else
    return ctx.error("padding_mode '" + pad + "' is not supported");
  p.align_corners = ctx.attr_int("align_corners", 0) != 0;
  Shape out{p.n, p.c, p.ho, p.wo};
  OP_ASSIGN_OR_RETURN(int64_t count, checked_elements(ctx, out));
  ctx.set_output(0, x->dtype, out);
  if (count > 0 && (p.h == 0 || p.w == 0)) return ctx.error("X must have a non-empty image");
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([p](const KernelIO& io) {
          grid_sample(p, static_cast<const T*>(io.in[0]), static_cast<const T*>(io.in[1]),
                      static_cast<T*>(io.out[0]));
        });
      }))
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return k;
}

constexpr OpEntry kOps[] = {
    {"GridSample", build_grid_sample},
};

}  // namespace

std::span<const OpEntry> sampling_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
