// GridSample (opset 16, 4-D): samples X [N, C, H, W] at the normalised
// coordinates of grid [N, Ho, Wo, 2] (x then y, -1..1) with bilinear, nearest
// (round half to even) or bicubic (A = -0.75) interpolation; padding_mode
// zeros, border (clamp) or reflection; align_corners maps -1/1 to the corner
// pixels' centres instead of their outer edges. Output rows run in parallel.
#include <cmath>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

enum class Sampling { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridGeometry {
  int64_t n, c, h, w, ho, wo;
  Sampling sampling;
  Padding padding;
  bool align_corners;
};

// Reflects x into [lo, hi] (repeatedly, as a mirror at both ends).
float reflect(float x, float lo, float hi) {
  float range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    float d = lo - x;
    int k = int(d / range);
    float r = d - float(k) * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    float d = x - hi;
    int k = int(d / range);
    float r = d - float(k) * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coefficients(float t, float out[4]) {
  const float a = -0.75f;
  float t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  out[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  out[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  out[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  out[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

template <typename T>
void sample_rows(const GridGeometry& g, const T* x, const T* grid, T* y, int64_t r0, int64_t r1) {
  // Bounds of valid coordinates (pixel centres or edges).
  float x_min = g.align_corners ? 0.0f : -0.5f, y_min = x_min;
  float x_max = g.align_corners ? float(g.w - 1) : float(g.w) - 0.5f;
  float y_max = g.align_corners ? float(g.h - 1) : float(g.h) - 0.5f;
  auto pixel = [&](const T* plane, int64_t r, int64_t col) -> float {
    switch (g.padding) {
      case Padding::kZeros:
        if (col < 0 || col >= g.w || r < 0 || r >= g.h) return 0.0f;
        break;
      case Padding::kBorder:
        col = std::clamp<int64_t>(col, 0, g.w - 1);
        r = std::clamp<int64_t>(r, 0, g.h - 1);
        break;
      case Padding::kReflection:
        col = std::clamp<int64_t>(int64_t(reflect(float(col), x_min, x_max)), 0, g.w - 1);
        r = std::clamp<int64_t>(int64_t(reflect(float(r), y_min, y_max)), 0, g.h - 1);
        break;
    }
    return float(plane[r * g.w + col]);
  };
  for (int64_t row = r0; row < r1; ++row) {  // row = (n, oy)
    int64_t b = row / g.ho, oy = row % g.ho;
    const T* gp = grid + (b * g.ho + oy) * g.wo * 2;
    for (int64_t ox = 0; ox < g.wo; ++ox) {
      float nx = float(gp[2 * ox]), ny = float(gp[2 * ox + 1]);
      float px = g.align_corners ? (nx + 1) / 2 * float(g.w - 1) : ((nx + 1) * float(g.w) - 1) / 2;
      float py = g.align_corners ? (ny + 1) / 2 * float(g.h - 1) : ((ny + 1) * float(g.h) - 1) / 2;
      if (g.sampling == Sampling::kNearest) {
        px = std::nearbyint(px);
        py = std::nearbyint(py);
      }
      if (px < x_min || px > x_max || py < y_min || py > y_max) {
        // Bicubic keeps the coordinate and clamps each tap (as ONNX Runtime).
        if (g.padding == Padding::kBorder && g.sampling != Sampling::kBicubic) {
          px = std::clamp(px, 0.0f, float(g.w - 1));
          py = std::clamp(py, 0.0f, float(g.h - 1));
        } else if (g.padding == Padding::kReflection) {
          px = reflect(px, x_min, x_max);
          py = reflect(py, y_min, y_max);
        }
      }
      // A fed coordinate far outside (1e30) or NaN must not reach the int64
      // casts below (undefined behaviour). Past 4 pixels beyond the edge
      // every tap is outside (zeros) or clamps to the edge (border, and the
      // cubic weights sum to 1), so bounding there changes no result; NaN
      // reads as outside.
      const float xb = float(g.w) + 4, yb = float(g.h) + 4;
      px = std::isnan(px) ? -xb : std::clamp(px, -xb, xb);
      py = std::isnan(py) ? -yb : std::clamp(py, -yb, yb);
      for (int64_t ch = 0; ch < g.c; ++ch) {
        const T* plane = x + (b * g.c + ch) * g.h * g.w;
        float v;
        if (g.sampling == Sampling::kNearest) {
          v = pixel(plane, int64_t(py), int64_t(px));
        } else if (g.sampling == Sampling::kBilinear) {
          float fx = std::floor(px), fy = std::floor(py);
          int64_t x0 = int64_t(fx), y0 = int64_t(fy);
          float dx = px - fx, dy = py - fy;
          float top = (1 - dx) * pixel(plane, y0, x0) + dx * pixel(plane, y0, x0 + 1);
          float bottom = (1 - dx) * pixel(plane, y0 + 1, x0) + dx * pixel(plane, y0 + 1, x0 + 1);
          v = (1 - dy) * top + dy * bottom;
        } else {
          float fx = std::floor(px), fy = std::floor(py);
          int64_t x0 = int64_t(fx) - 1, y0 = int64_t(fy) - 1;
          float cx[4], cy[4];
          cubic_coefficients(px - fx, cx);
          cubic_coefficients(py - fy, cy);
          v = 0;
          for (int i = 0; i < 4; ++i) {
            float r = 0;
            for (int j = 0; j < 4; ++j) r += cx[j] * pixel(plane, y0 + i, x0 + j);
            v += cy[i] * r;
          }
        }
        y[((b * g.c + ch) * g.ho + oy) * g.wo + ox] = T(v);
      }
    }
  }
}

}  // namespace

BuildResult build_grid_sample(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* grid, ctx.require_input(1));
  if (x->shape.size() != 4 || grid->shape.size() != 4 || grid->shape[3] != 2 ||
      grid->shape[0] != x->shape[0])
    return ctx.error("X " + shape_string(x->shape) + " and grid " + shape_string(grid->shape) +
                     " must be [N, C, H, W] and [N, Ho, Wo, 2]");
  if ((x->dtype != kFloat && x->dtype != kDouble) || grid->dtype != x->dtype)
    return ctx.error("X and grid must both be float or double");
  GridGeometry g{x->shape[0],         x->shape[1],     x->shape[2],
                 x->shape[3],         grid->shape[1],  grid->shape[2],
                 Sampling::kBilinear, Padding::kZeros, ctx.attr_int("align_corners", 0) != 0};
  std::string mode = ctx.attr_string("mode", "bilinear");
  if (mode == "bilinear" || mode == "linear")
    g.sampling = Sampling::kBilinear;
  else if (mode == "nearest")
    g.sampling = Sampling::kNearest;
  else if (mode == "bicubic" || mode == "cubic")
    g.sampling = Sampling::kBicubic;
  else
    return ctx.error("mode '" + mode + "' is not supported");
  std::string pad = ctx.attr_string("padding_mode", "zeros");
  if (pad == "zeros")
    g.padding = Padding::kZeros;
  else if (pad == "border")
    g.padding = Padding::kBorder;
  else if (pad == "reflection")
    g.padding = Padding::kReflection;
  else
    return ctx.error("padding_mode '" + pad + "' is not supported");
  if ((g.h == 0 || g.w == 0) && g.ho * g.wo * g.c > 0 && g.padding != Padding::kZeros)
    return ctx.error("cannot sample an empty image with padding_mode '" + pad + "'");
  ctx.set_output(0, x->dtype, {g.n, g.c, g.ho, g.wo});
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([g](const KernelIO& io) {
      const T* xd = static_cast<const T*>(io.in[0]);
      const T* gd = static_cast<const T*>(io.in[1]);
      T* yd = static_cast<T*>(io.out[0]);
      if (g.h == 0 || g.w == 0) {  // zeros padding of an empty image
        std::fill(yd, yd + g.n * g.c * g.ho * g.wo, T(0));
        return;
      }
      parallel_range(io.pool, g.n * g.ho, 4,
                     [&](int64_t r0, int64_t r1) { sample_rows<T>(g, xd, gd, yd, r0, r1); });
    });
  };
  if (x->dtype == kFloat)
    make(TypeTag<float>{});
  else
    make(TypeTag<double>{});
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
