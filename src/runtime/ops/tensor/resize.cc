// Resize (opsets 10-19) and Upsample (7-9). At plan time every axis gets a tap
// table: for each output coordinate, the input indices (clamped to the edge)
// and weights of the interpolation, as onnx's reference computes them
// (separable: nearest, linear, cubic with cubic_coeff_a, exclude_outside,
// antialias, every coordinate_transformation_mode; tf_crop_and_resize marks
// coordinates outside the roi for extrapolation_value). Zero-weight taps are
// dropped and taps clamped to one edge pixel merged, so nearest and integer
// positions cost one load. That changes nothing for finite inputs, but the
// spec's arithmetic multiplies an inf beside the sample point by its weight of
// 0 (NaN) and adds the edge taps one by one (inf - inf): for an input holding
// inf or NaN the kernel uses a second, exact table of every raw tap. The
// kernel produces rows of the innermost axis in parallel; each row combines
// the taps of the outer axes with those of the innermost one.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "runtime/memory_account.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"
#include "runtime/work_budget.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
enum class Transform {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};

struct ResizeOptions {
  Mode mode = Mode::kNearest;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  Transform transform = Transform::kHalfPixel;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  bool legacy = false;  // Upsample and Resize-10: asymmetric; nearest floors, ceils when shrinking
};

// Taps of one axis: `taps` (index, weight) pairs per output coordinate;
// outside[x] marks tf_crop_and_resize coordinates that take the extrapolation value.
struct AxisTaps {
  int64_t taps = 1;
  std::vector<int64_t> index;  // out * taps, element offsets along the axis
  std::vector<float> weight;   // out * taps
  std::vector<uint8_t> outside;
  bool any_outside = false;
  std::shared_ptr<MemoryReservation> reserved;  // the tables against the memory budget
};

// In float, as ONNX Runtime computes it (ties of nearest rounding and the
// tf_crop_and_resize bounds depend on it). align_corners and tf_crop_and_resize
// divide by (scale * in - 1) as onnx's reference does; ONNX Runtime uses the
// integer output length, which differs only when scale * in is not an integer.
float original_coordinate(const ResizeOptions& o, int64_t x_int, int64_t in, int64_t out,
                          double scale_d, double roi_start_d, double roi_end_d) {
  float x = float(x_int), scale = float(scale_d);
  float roi_start = float(roi_start_d), roi_end = float(roi_end_d);
  float out_width = scale * float(in);
  float last = float(in - 1);
  switch (o.transform) {
    case Transform::kHalfPixel:
      return (x + 0.5f) / scale - 0.5f;
    case Transform::kHalfPixelSymmetric: {
      float adjustment = float(out) / (scale * float(in));
      float center = float(in) / 2;
      float offset = center * (1 - adjustment);
      return offset + (x + 0.5f) / scale - 0.5f;
    }
    case Transform::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case Transform::kAlignCorners:
      return out_width == 1 ? 0.0f : x * last / (out_width - 1);
    case Transform::kAsymmetric:
      return x / scale;
    case Transform::kTfHalfPixelForNn:
      return (x + 0.5f) / scale;
    case Transform::kTfCropAndResize:
      if (out_width == 1) return 0.5f * (roi_start + roi_end) * last;
      return roi_start * last + (x * (roi_end - roi_start) * last) / (out_width - 1);
  }
  return 0;
}

double kernel_weight(const ResizeOptions& o, double d) {
  d = std::fabs(d);
  if (o.mode == Mode::kLinear) return std::max(0.0, 1 - d);
  double a = o.cubic_a;
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// The kernel's footprint on the input axis, the same for every output point:
// sample scale `s` and the raw taps [base + start, base + start + n) read
// before clamping (a wide antialias kernel on a strong downscale reads many).
// `n` saturates at INT64_MAX, which no work bound admits.
struct KernelSpan {
  double s = 1.0;
  int64_t start = 0;
  int64_t n = 1;
};

KernelSpan kernel_span(const ResizeOptions& o, double scale) {
  KernelSpan k;
  if (o.mode == Mode::kNearest) return k;
  const double support = o.mode == Mode::kLinear ? 1 : 2;
  k.s = o.antialias ? std::min(scale, 1.0) : 1.0;
  const double start = std::floor(-support / k.s) + 1;
  if (!(start > -4.6e18)) {
    k.n = std::numeric_limits<int64_t>::max();
    return k;
  }
  k.start = int64_t(start);
  k.n = 2 - 2 * k.start;
  return k;
}

// `exact`: every raw tap in order, zero weights and edge repeats included
// (the non-finite path); otherwise the compact table.
Result<AxisTaps> axis_taps(const BuildContext& ctx, const ResizeOptions& o, int64_t in, int64_t out,
                           double scale, double roi_start, double roi_end, bool exact) {
  AxisTaps t;
  // The tables hold at most min(raw taps, in) taps per output point; building
  // them visits every raw tap. Both are bounded before anything is built.
  const KernelSpan span = kernel_span(o, scale);
  const uint64_t raw_taps = uint64_t(span.n);
  const uint64_t steps = saturating_mul(uint64_t(out), raw_taps);
  if (steps > kMaxOperatorSteps) {
    return ctx.error("an axis of " + std::to_string(in) + " -> " + std::to_string(out) +
                     " points with " + std::to_string(raw_taps) +
                     " taps each takes more than the work bound of 2^32 taps");
  }
  const uint64_t kept =
      exact ? raw_taps : std::min<uint64_t>(raw_taps, uint64_t(std::max<int64_t>(in, 1)));
  const uint64_t bytes = saturating_mul(uint64_t(out), saturating_mul(kept, 16 + 8 + 4) + 1);
  OP_ASSIGN_OR_RETURN(MemoryReservation r,
                      reserve_memory(bytes, ctx.where() + (exact ? ": Resize exact tap tables"
                                                                 : ": Resize tap tables")));
  t.reserved = std::make_shared<MemoryReservation>(std::move(r));
  std::vector<std::vector<std::pair<int64_t, double>>> all(static_cast<size_t>(out));
  t.outside.assign(size_t(out), 0);
  for (int64_t x = 0; x < out; ++x) {
    double xo = original_coordinate(o, x, in, out, scale, roi_start, roi_end);
    auto& taps = all[size_t(x)];
    if (o.transform == Transform::kTfCropAndResize && (xo < 0 || xo > double(in - 1))) {
      t.outside[size_t(x)] = 1;
      taps.push_back({0, 0.0});
      continue;
    }
    // The reference prefers the pixel left of xo: ratio in (0, 1].
    double fl = std::floor(xo);
    int64_t base = int64_t(fl);
    double ratio = xo - fl;
    if (ratio == 0) {
      base -= 1;
      ratio = 1;
    }
    auto clamp = [&](int64_t p) { return std::clamp<int64_t>(p, 0, in - 1); };
    if (o.mode == Mode::kNearest) {
      bool up;
      if (ratio == 1) {
        up = true;
      } else {
        switch (o.nearest) {
          case NearestMode::kRoundPreferFloor:
            up = ratio > 0.5;
            break;
          case NearestMode::kRoundPreferCeil:
            up = ratio >= 0.5;
            break;
          case NearestMode::kFloor:
            up = false;
            break;
          default:
            up = true;
            break;
        }
      }
      taps.push_back({clamp(up ? base + 1 : base), 1.0});
      continue;
    }
    std::vector<std::pair<int64_t, double>> raw;
    double sum = 0;
    for (int64_t i = 0; i < span.n; ++i) {
      int64_t p = base + span.start + i;
      double w = kernel_weight(o, (double(p) - xo) * span.s);
      if (o.exclude_outside && (p < 0 || p >= in)) w = 0;
      raw.push_back({p, w});
      sum += w;
    }
    bool normalize = o.antialias || o.exclude_outside;
    for (auto& [p, w] : raw) {
      double wn = normalize && sum != 0 ? w / sum : w;
      if (exact) {
        taps.push_back({clamp(p), wn});
        continue;
      }
      if (wn == 0) continue;
      // Points past an edge read the edge: one tap (a wide antialias kernel
      // would otherwise repeat it thousands of times).
      if (!taps.empty() && taps.back().first == clamp(p))
        taps.back().second += wn;
      else
        taps.push_back({clamp(p), wn});
    }
    if (taps.empty()) taps.push_back({clamp(base + 1), 0.0});
  }
  for (const auto& v : all) t.taps = std::max<int64_t>(t.taps, int64_t(v.size()));
  for (uint8_t f : t.outside) t.any_outside = t.any_outside || f;
  t.index.assign(size_t(out * t.taps), 0);
  t.weight.assign(size_t(out * t.taps), 0.0f);
  for (int64_t x = 0; x < out; ++x) {
    const auto& v = all[size_t(x)];
    for (size_t k = 0; k < v.size(); ++k) {
      t.index[size_t(x * t.taps) + k] = v[k].first;
      t.weight[size_t(x * t.taps) + k] = float(v[k].second);
    }
    for (size_t k = v.size(); k < size_t(t.taps); ++k)
      t.index[size_t(x * t.taps) + k] = v.empty() ? 0 : v[0].first;
  }
  return t;
}

// Element conversions for the interpolating modes.
template <typename T>
struct Io {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static Acc load(T v) { return Acc(v); }
  static T store(Acc v) {
    if constexpr (std::is_integral_v<T>) {
      float r = std::nearbyint(v);
      if (r <= float(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
      if (r >= float(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return T(r);
    } else {
      return T(v);
    }
  }
};
struct Half16 {
  uint16_t v;
};
bool is_nonfinite(Half16 h) { return (h.v & 0x7c00) == 0x7c00; }
template <>
struct Io<Half16> {
  using Acc = float;
  static float load(Half16 h) { return half_to_float(h.v); }
  static Half16 store(float v) { return Half16{float_to_half(v)}; }
};

struct ResizePlan {
  Shape in_shape, out_shape;
  std::vector<std::shared_ptr<const AxisTaps>> axes;
  // Every raw tap (interpolating modes of floating types); empty when the
  // compact tables drop and merge nothing.
  std::vector<std::shared_ptr<const AxisTaps>> exact_axes;  // identity axes shared
  std::vector<int64_t> in_strides;
};

// Whether an axis's compact table maps every output coordinate onto its own
// input pixel with weight 1: the axis is not resampled.
bool is_identity(const AxisTaps& a, int64_t in, int64_t out) {
  if (in != out || a.taps != 1 || a.any_outside) return false;
  for (int64_t x = 0; x < out; ++x) {
    if (a.index[size_t(x)] != x || a.weight[size_t(x)] != 1.0f) return false;
  }
  return true;
}

// Whether the compact and exact tables of an axis hold the same taps.
bool same_taps(const AxisTaps& a, const AxisTaps& b) {
  return a.taps == b.taps && a.index == b.index && a.weight == b.weight;
}

template <typename T>
bool is_nonfinite(T v) {
  if constexpr (std::is_floating_point_v<T>) return !std::isfinite(v);
  return false;
}

// Whether `in` holds an inf or NaN (only floating types can).
template <typename T>
bool any_nonfinite(const T* in, int64_t n) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    bool any = false;
    for (int64_t i = 0; i < n; ++i) any |= is_nonfinite(in[i]);
    return any;
  }
}

// One row of the innermost axis: combos (offset, weight) of the outer axes.
// `axes`: the plan's compact tables, or its exact ones (then zero weights are
// multiplied like any other, as the spec's arithmetic does).
template <typename T>
void run_rows(const ResizePlan& p, const std::vector<std::shared_ptr<const AxisTaps>>& axes,
              bool exact, const T* in, T* out, T extrapolation, bool interpolate, int64_t r0,
              int64_t r1) {
  size_t rank = p.out_shape.size();
  const AxisTaps& last = *axes[rank - 1];
  int64_t width = p.out_shape[rank - 1];
  std::vector<int64_t> offs, offs_next;
  std::vector<float> ws, ws_next;
  std::vector<int64_t> coord(rank, 0);
  using Acc = typename Io<T>::Acc;
  std::vector<Acc> acc;
  struct RowCache {
    int64_t off = -1;
    std::vector<Acc> row;
  };
  std::vector<RowCache> cache;
  size_t next_slot = 0;
  int64_t prev_off = -1;  // nearest: source offset of the previous row, -1 when none
  for (int64_t r = r0; r < r1; ++r) {
    T* dst = out + r * width;
    int64_t rem = r;
    for (size_t d = rank - 1; d-- > 0;) {
      coord[d] = rem % p.out_shape[d];
      rem /= p.out_shape[d];
    }
    offs.assign(1, 0);
    ws.assign(1, 1.0f);
    bool outside = false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      const AxisTaps& a = *axes[d];
      int64_t c = coord[d];
      if (a.outside[size_t(c)]) {
        outside = true;
        break;
      }
      if (a.taps == 1) {
        int64_t add = a.index[size_t(c)] * p.in_strides[d];
        float wt = a.weight[size_t(c)];
        for (size_t k = 0; k < offs.size(); ++k) {
          offs[k] += add;
          ws[k] *= wt;
        }
        continue;
      }
      offs_next.clear();
      ws_next.clear();
      for (size_t k = 0; k < offs.size(); ++k) {
        for (int64_t t = 0; t < a.taps; ++t) {
          float wt = a.weight[size_t(c * a.taps + t)];
          if (wt == 0 && !exact) continue;
          offs_next.push_back(offs[k] + a.index[size_t(c * a.taps + t)] * p.in_strides[d]);
          ws_next.push_back(ws[k] * wt);
        }
      }
      offs.swap(offs_next);
      ws.swap(ws_next);
    }
    if (outside) {
      std::fill(dst, dst + width, extrapolation);
      prev_off = -1;
      continue;
    }
    const int64_t* li = last.index.data();
    const float* lw = last.weight.data();
    if (!interpolate) {                     // nearest: one tap per axis, weight 1
      if (r > r0 && offs[0] == prev_off) {  // same source row as the row above (upsampling)
        std::memcpy(dst, dst - width, size_t(width) * sizeof(T));
        continue;
      }
      prev_off = offs[0];
      const T* src = in + offs[0];
      if (last.any_outside) {
        for (int64_t x = 0; x < width; ++x)
          dst[x] = last.outside[size_t(x)] ? extrapolation : src[li[x]];
      } else {
        for (int64_t x = 0; x < width; ++x) dst[x] = src[li[x]];
      }
      continue;
    }
    int64_t lt = last.taps;
    // A source row interpolated along the innermost axis is kept: the next
    // output rows mostly blend the same source rows.
    auto interpolated = [&](int64_t off) -> const Acc* {
      for (const RowCache& c : cache) {
        if (c.off == off) return c.row.data();
      }
      if (cache.size() < std::max<size_t>(8, offs.size())) cache.emplace_back();
      RowCache& c = cache[next_slot++ % cache.size()];
      c.off = off;
      c.row.resize(size_t(width));
      const T* src = in + off;
      if (lt == 2) {
        for (int64_t x = 0; x < width; ++x) {
          c.row[size_t(x)] = Acc(lw[2 * x]) * Io<T>::load(src[li[2 * x]]) +
                             Acc(lw[2 * x + 1]) * Io<T>::load(src[li[2 * x + 1]]);
        }
      } else {
        for (int64_t x = 0; x < width; ++x) {
          Acc v = 0;
          for (int64_t t = 0; t < lt; ++t)
            v += Acc(lw[x * lt + t]) * Io<T>::load(src[li[x * lt + t]]);
          c.row[size_t(x)] = v;
        }
      }
      return c.row.data();
    };
    acc.assign(size_t(width), Acc(0));
    for (size_t k = 0; k < offs.size(); ++k) {
      const Acc* h = interpolated(offs[k]);
      Acc wk = ws[k];
      Acc* a = acc.data();
      for (int64_t x = 0; x < width; ++x) a[x] += wk * h[x];
    }
    for (int64_t x = 0; x < width; ++x)
      dst[x] = last.outside[size_t(x)] ? extrapolation : Io<T>::store(acc[size_t(x)]);
  }
}

Result<Transform> transform_of(BuildContext& ctx, const std::string& name) {
  if (name == "half_pixel") return Transform::kHalfPixel;
  if (name == "half_pixel_symmetric") return Transform::kHalfPixelSymmetric;
  if (name == "pytorch_half_pixel") return Transform::kPytorchHalfPixel;
  if (name == "align_corners") return Transform::kAlignCorners;
  if (name == "asymmetric") return Transform::kAsymmetric;
  if (name == "tf_half_pixel_for_nn") return Transform::kTfHalfPixelForNn;
  if (name == "tf_crop_and_resize") return Transform::kTfCropAndResize;
  return ctx.error("coordinate_transformation_mode '" + name + "' is not supported");
}

// Optional float input (roi, scales): absent or empty means not given.
Result<std::vector<double>> optional_floats(BuildContext& ctx, int i, std::string_view what) {
  if (!ctx.has_input(i) || shape_numel(ctx.input(i).shape) == 0) return std::vector<double>();
  OP_ASSIGN_OR_RETURN(const Tensor* t, value_for_shape(ctx, i, what));
  auto v = float_values(*t, what);
  if (!v.ok()) return ctx.error(v.status().message());
  return v;
}

BuildResult build_resize_common(BuildContext& ctx, bool upsample) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  int64_t rank = int64_t(x->shape.size());
  if (rank == 0) return ctx.error("input must have rank >= 1");
  int opset = ctx.opset();
  bool legacy = upsample || opset < 11;  // Upsample and Resize-10
  ResizeOptions o;
  std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "nearest") {
    o.mode = Mode::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    o.mode = Mode::kLinear;
  } else if (mode == "cubic" && !legacy) {
    o.mode = Mode::kCubic;
  } else {
    return ctx.error("mode '" + mode + "' is not supported");
  }
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes, axes;
  if (legacy) {
    o.transform = Transform::kAsymmetric;
    o.nearest = NearestMode::kFloor;
    o.legacy = true;
    if (upsample && opset < 9) {
      auto a = ctx.typed_attr("scales", onnx::AttributeProto::FLOATS);
      if (a == nullptr) return ctx.error("scales are required");
      scales.assign(a->floats().begin(), a->floats().end());
    } else {
      OP_ASSIGN_OR_RETURN(scales, optional_floats(ctx, 1, "scales"));
    }
  } else {
    OP_ASSIGN_OR_RETURN(
        o.transform,
        transform_of(ctx, ctx.attr_string("coordinate_transformation_mode", "half_pixel")));
    std::string nm = ctx.attr_string("nearest_mode", "round_prefer_floor");
    if (nm == "round_prefer_floor")
      o.nearest = NearestMode::kRoundPreferFloor;
    else if (nm == "round_prefer_ceil")
      o.nearest = NearestMode::kRoundPreferCeil;
    else if (nm == "floor")
      o.nearest = NearestMode::kFloor;
    else if (nm == "ceil")
      o.nearest = NearestMode::kCeil;
    else
      return ctx.error("nearest_mode '" + nm + "' is not supported");
    o.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
    const int64_t exclude = ctx.attr_int("exclude_outside", 0);
    if (exclude != 0 && exclude != 1)  // a flag: ORT refuses other values too
      return ctx.error("exclude_outside must be 0 or 1, got " + std::to_string(exclude));
    o.exclude_outside = exclude == 1;
    o.antialias = opset >= 18 && ctx.attr_int("antialias", 0) != 0 && o.mode != Mode::kNearest;
    if (o.transform == Transform::kTfCropAndResize) {
      OP_ASSIGN_OR_RETURN(roi, optional_floats(ctx, 1, "roi"));
    }
    OP_ASSIGN_OR_RETURN(scales, optional_floats(ctx, 2, "scales"));
    if (ctx.has_input(3) && shape_numel(ctx.input(3).shape) > 0) {
      OP_ASSIGN_OR_RETURN(sizes, ints_for_shape(ctx, 3, "sizes"));
    }
    if (opset >= 18) {
      if (auto a = ctx.attr_ints("axes")) axes = *a;
    }
  }
  if (scales.empty() == sizes.empty())
    return ctx.error("exactly one of scales and sizes must be given");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  std::vector<bool> seen(size_t(rank), false);
  for (auto& a : axes) {
    OP_ASSIGN_OR_RETURN(a, normalize_axis(a, rank, ctx));
    if (seen[size_t(a)]) return ctx.error("axis " + std::to_string(a) + " is repeated");
    seen[size_t(a)] = true;
  }
  size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size())
    return ctx.error(std::string(scales.empty() ? "sizes" : "scales") + " has " +
                     std::to_string(given) + " entries for " + std::to_string(axes.size()) +
                     " axes");
  std::vector<double> scale(size_t(rank), 1.0);
  Shape out = x->shape;
  if (!scales.empty()) {
    for (size_t i = 0; i < axes.size(); ++i) {
      double s = scales[i];
      if (!(s > 0)) return ctx.error("scales must be positive");
      // Upsample only enlarges: its scales "take values greater than or equal to 1".
      if (upsample && !(s >= 1))
        return ctx.error("Upsample scales must be >= 1, got " + std::to_string(s));
      double o_dim = std::floor(s * double(x->shape[size_t(axes[i])]));
      if (o_dim > double(int64_t(1) << 40)) return ctx.error("output too large");
      scale[size_t(axes[i])] = s;
      out[size_t(axes[i])] = int64_t(o_dim);
    }
  } else {
    std::string policy = opset >= 18 ? ctx.attr_string("keep_aspect_ratio_policy", "stretch")
                                     : std::string("stretch");
    for (size_t i = 0; i < axes.size(); ++i) {
      if (sizes[i] < 0) return ctx.error("sizes must be non-negative");
    }
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t in_d = x->shape[size_t(axes[i])];
        out[size_t(axes[i])] = sizes[i];
        // In float, as ONNX Runtime computes it (nearest ties depend on it).
        scale[size_t(axes[i])] = in_d ? double(float(sizes[i]) / float(in_d)) : 1.0;
      }
    } else if (policy == "not_larger" || policy == "not_smaller") {
      double s = policy == "not_larger" ? INFINITY : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t in_d = x->shape[size_t(axes[i])];
        if (in_d == 0) continue;
        double r = double(sizes[i]) / double(in_d);
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      if (!std::isfinite(s) || s <= 0) s = 1;
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t in_d = x->shape[size_t(axes[i])];
        out[size_t(axes[i])] = int64_t(std::floor(s * double(in_d) + 0.5));
        scale[size_t(axes[i])] = s;
      }
    } else {
      return ctx.error("keep_aspect_ratio_policy '" + policy + "' is not supported");
    }
  }
  if (checked_numel(out) < 0 ||
      uint64_t(checked_numel(out)) * dtype_size(x->dtype) > (uint64_t(64) << 30))
    return ctx.error("output " + shape_string(out) + " is larger than 64 GiB");
  // roi: [starts..., ends...] over the given axes (opset 18) or all axes.
  std::vector<double> roi_start(size_t(rank), 0.0), roi_end(size_t(rank), 1.0);
  // tf_crop_and_resize crops to the roi: it needs one (ORT refuses it too).
  if (roi.empty() && o.transform == Transform::kTfCropAndResize)
    return ctx.error("tf_crop_and_resize needs a roi of 2 * rank entries, got none");
  if (!roi.empty()) {
    size_t na = roi.size() / 2;
    if (roi.size() % 2 != 0 || (na != size_t(rank) && na != axes.size()))
      return ctx.error("roi has " + std::to_string(roi.size()) + " entries");
    for (size_t i = 0; i < na; ++i) {
      size_t a = na == size_t(rank) ? i : size_t(axes[i]);
      roi_start[a] = roi[i];
      roi_end[a] = roi[i + na];
    }
  }
  bool interpolate = o.mode != Mode::kNearest;
  auto plan = std::make_shared<ResizePlan>();
  plan->in_shape = x->shape;
  plan->out_shape = out;
  plan->in_strides = strides_of(x->shape);
  int64_t total_in = shape_numel(x->shape);
  for (int64_t d = 0; d < rank; ++d) {
    size_t i = size_t(d);
    if (x->shape[i] == 0 && out[i] > 0)
      return ctx.error("cannot resize the empty dimension " + std::to_string(d));
    if (total_in == 0 || out[i] == 0) {
      plan->axes.push_back(std::make_shared<const AxisTaps>());
      continue;
    }
    ResizeOptions axis_options = o;
    if (o.legacy && scale[i] < 1) axis_options.nearest = NearestMode::kCeil;  // as ONNX Runtime
    // tf_half_pixel_for_nn maps x to x + 0.5 at scale 1; an unscaled axis maps
    // identically (as ONNX Runtime does).
    if (o.transform == Transform::kTfHalfPixelForNn && scale[i] == 1 && out[i] == x->shape[i])
      axis_options.transform = Transform::kAsymmetric;
    OP_ASSIGN_OR_RETURN(AxisTaps taps, axis_taps(ctx, axis_options, x->shape[i], out[i], scale[i],
                                                 roi_start[i], roi_end[i], false));
    plan->axes.push_back(std::make_shared<const AxisTaps>(std::move(taps)));
  }
  // The exact tables, for inputs holding inf or NaN; kept only when some axis
  // differs from its compact table. An axis that is not resampled keeps its
  // identity table: the reference's taps there are the previous pixel with
  // weight 0 and the pixel, and multiplying the first would carry a NaN of one
  // batch item or channel into the next (ONNX Runtime copies such axes too).
  const bool floating = x->dtype == kFloat || x->dtype == kDouble || x->dtype == kFloat16;
  if (interpolate && floating && total_in > 0) {
    bool differs = false;
    for (int64_t d = 0; d < rank; ++d) {
      size_t i = size_t(d);
      if (out[i] == 0) {
        plan->exact_axes.push_back(plan->axes[i]);
        continue;
      }
      if (is_identity(*plan->axes[i], x->shape[i], out[i])) {
        plan->exact_axes.push_back(plan->axes[i]);
        continue;
      }
      ResizeOptions axis_options = o;
      if (o.transform == Transform::kTfHalfPixelForNn && scale[i] == 1 && out[i] == x->shape[i])
        axis_options.transform = Transform::kAsymmetric;
      OP_ASSIGN_OR_RETURN(AxisTaps taps, axis_taps(ctx, axis_options, x->shape[i], out[i], scale[i],
                                                   roi_start[i], roi_end[i], true));
      differs = differs || !same_taps(taps, *plan->axes[i]);
      plan->exact_axes.push_back(std::make_shared<const AxisTaps>(std::move(taps)));
    }
    if (!differs) plan->exact_axes.clear();
  }
  ctx.set_output(0, x->dtype, out);
  float extrapolation = ctx.attr_float("extrapolation_value", 0.0f);
  int64_t total = shape_numel(out);  // dims-lint: ok (checked_numel above)
  int64_t width = out[size_t(rank - 1)];
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag, auto extrap) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>(
        [plan, total, total_in, width, interpolate, extrap](const KernelIO& io) {
          if (total == 0) return;
          const T* in = static_cast<const T*>(io.in[0]);
          T* o = static_cast<T*>(io.out[0]);
          int64_t rows = total / width;
          const bool exact = !plan->exact_axes.empty() && any_nonfinite(in, total_in);
          const auto& axes = exact ? plan->exact_axes : plan->axes;
          parallel_range(io.pool, rows, std::max<int64_t>(1, 4096 / width),
                         [&](int64_t r0, int64_t r1) {
                           run_rows<T>(*plan, axes, exact, in, o, extrap, interpolate, r0, r1);
                         });
        });
  };
  switch (x->dtype) {
    case kFloat:
      make(TypeTag<float>{}, extrapolation);
      break;
    case kDouble:
      make(TypeTag<double>{}, double(extrapolation));
      break;
    case kFloat16:
      make(TypeTag<Half16>{}, Half16{float_to_half(extrapolation)});
      break;
    case kUint8:
      make(TypeTag<uint8_t>{}, Io<uint8_t>::store(extrapolation));
      break;
    case kInt8:
      make(TypeTag<int8_t>{}, Io<int8_t>::store(extrapolation));
      break;
    case kInt32:
      make(TypeTag<int32_t>{}, Io<int32_t>::store(extrapolation));
      break;
    case kInt64:
      make(TypeTag<int64_t>{}, Io<int64_t>::store(extrapolation));
      break;
    default:
      if (interpolate)
        return ctx.error("mode '" + mode + "' does not support type " + dtype_name(x->dtype));
      // Nearest moves elements: any width (extrapolation zero-filled).
      dispatch_width(dtype_size(x->dtype), [&](auto tag) {
        using T = typename decltype(tag)::type;
        make(tag, T(0));
      });
  }
  return k;
}

}  // namespace

BuildResult build_resize(BuildContext& ctx) { return build_resize_common(ctx, false); }
BuildResult build_upsample(BuildContext& ctx) { return build_resize_common(ctx, true); }

}  // namespace onnx_prepack::runtime::tensor_family
