// Signal operators (opset 17): DFT (forward/inverse, real or complex input,
// dft_length, onesided), STFT (frames of a real or complex signal, optional
// window, onesided) and MelWeightMatrix (the triangular filter bank of onnx's
// definition). Transforms are direct O(n^2) sums in double with a twiddle table.
#include <cmath>
#include <numbers>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// cos/sin of 2 pi j / n for j in [0, n).
struct Twiddles {
  std::vector<double> c, s;
  explicit Twiddles(int64_t n) : c(static_cast<size_t>(n)), s(static_cast<size_t>(n)) {
    for (int64_t j = 0; j < n; ++j) {
      double a = 2 * std::numbers::pi * double(j) / double(n);
      c[size_t(j)] = std::cos(a);
      s[size_t(j)] = std::sin(a);
    }
  }
};

// out[k] (k < bins) = sum_t in[t] e^{-+2 pi i k t / n}; `in` holds `len` (<= n,
// the rest zero) complex samples at stride `stride` (in complex elements).
template <typename T>
void transform(const T* in, int64_t len, int64_t stride, bool complex_in, int64_t n, int64_t bins,
               bool inverse, const Twiddles& tw, const T* window, T* out, int64_t out_stride) {
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t t = 0; t < len; ++t) {
      const T* v = in + t * stride * (complex_in ? 2 : 1);
      double w = window ? double(window[t]) : 1.0;
      double xr = double(v[0]) * w, xi = complex_in ? double(v[1]) * w : 0.0;
      size_t j = size_t((k * t) % n);
      double c = tw.c[j], s = inverse ? tw.s[j] : -tw.s[j];
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) {
      re /= double(n);
      im /= double(n);
    }
    out[k * out_stride * 2] = T(re);
    out[k * out_stride * 2 + 1] = T(im);
  }
}

}  // namespace

BuildResult build_dft(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->dtype != kFloat && x->dtype != kDouble) return ctx.error("input must be float or double");
  int64_t rank = int64_t(x->shape.size());
  if (rank < 2 || (x->shape.back() != 1 && x->shape.back() != 2))
    return ctx.error("input " + shape_string(x->shape) + " must end in 1 (real) or 2 (complex)");
  bool complex_in = x->shape.back() == 2;
  int64_t axis = ctx.attr_int("axis", 1);
  if (ctx.opset() >= 20 && ctx.has_input(2)) {
    OP_ASSIGN_OR_RETURN(auto a, ints_for_shape(ctx, 2, "axis"));
    if (a.size() != 1) return ctx.error("axis must hold one value");
    axis = a[0];
  }
  if (axis < -rank || axis >= rank - 1 || axis == -1)
    return ctx.error("axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rank;
  int64_t len = x->shape[size_t(axis)];
  int64_t n = len;
  if (ctx.has_input(1) && shape_numel(ctx.input(1).shape) > 0) {
    OP_ASSIGN_OR_RETURN(auto d, ints_for_shape(ctx, 1, "dft_length"));
    if (d.size() != 1 || d[0] <= 0) return ctx.error("dft_length must be one positive value");
    n = d[0];
  }
  bool inverse = ctx.attr_int("inverse", 0) != 0;
  bool onesided = ctx.attr_int("onesided", 0) != 0;
  if (onesided && inverse) return ctx.error("onesided inverse transforms are not supported");
  int64_t bins = onesided ? n / 2 + 1 : n;
  Shape out = x->shape;
  out[size_t(axis)] = bins;
  out.back() = 2;
  if (checked_numel(out) < 0) return ctx.error("output overflows");
  ctx.set_output(0, x->dtype, out);
  int64_t outer = dims_product(x->shape, 0, size_t(axis));
  int64_t inner = dims_product(x->shape, size_t(axis) + 1, size_t(rank - 1));
  int64_t used = std::min(len, n);
  auto tw = std::make_shared<Twiddles>(n);
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([=](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      T* o = static_cast<T*>(io.out[0]);
      int64_t cin = complex_in ? 2 : 1;
      parallel_range(io.pool, outer * inner, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          int64_t a = r / inner, i = r % inner;
          transform(in + (a * len * inner + i) * cin, used, inner, complex_in, n, bins, inverse,
                    *tw, static_cast<const T*>(nullptr), o + (a * bins * inner + i) * 2, inner);
        }
      });
    });
  };
  if (x->dtype == kFloat)
    make(TypeTag<float>{});
  else
    make(TypeTag<double>{});
  return k;
}

BuildResult build_stft(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->dtype != kFloat && x->dtype != kDouble) return ctx.error("signal must be float or double");
  if (x->shape.size() != 3 || (x->shape[2] != 1 && x->shape[2] != 2))
    return ctx.error("signal " + shape_string(x->shape) + " must be [batch, length, 1 or 2]");
  bool complex_in = x->shape[2] == 2;
  OP_ASSIGN_OR_RETURN(auto step_v, ints_for_shape(ctx, 1, "frame_step"));
  if (step_v.size() != 1 || step_v[0] <= 0) return ctx.error("frame_step must be positive");
  int64_t step = step_v[0];
  bool has_window = ctx.has_input(2);
  int64_t frame = -1;
  if (has_window) {
    const ValueDesc& w = ctx.input(2);
    if (w.shape.size() != 1 || w.dtype != x->dtype)
      return ctx.error("window must be 1-D of the signal's type");
    frame = w.shape[0];
  }
  if (ctx.has_input(3)) {
    OP_ASSIGN_OR_RETURN(auto fl, ints_for_shape(ctx, 3, "frame_length"));
    if (fl.size() != 1 || fl[0] <= 0) return ctx.error("frame_length must be positive");
    if (frame >= 0 && frame != fl[0]) return ctx.error("frame_length differs from the window");
    frame = fl[0];
  }
  if (frame <= 0) return ctx.error("a window or frame_length is required");
  int64_t batch = x->shape[0], length = x->shape[1];
  if (frame > length) return ctx.error("frame_length exceeds the signal length");
  int64_t frames = (length - frame) / step + 1;
  bool onesided = ctx.attr_int("onesided", 1) != 0 && !complex_in;
  int64_t bins = onesided ? frame / 2 + 1 : frame;
  ctx.set_output(0, x->dtype, {batch, frames, bins, 2});
  auto tw = std::make_shared<Twiddles>(frame);
  std::unique_ptr<Kernel> k;
  auto make = [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([=](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      const T* window = has_window ? static_cast<const T*>(io.in[2]) : nullptr;
      T* o = static_cast<T*>(io.out[0]);
      int64_t cin = complex_in ? 2 : 1;
      parallel_range(io.pool, batch * frames, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          int64_t b = r / frames, f = r % frames;
          transform(in + (b * length + f * step) * cin, frame, 1, complex_in, frame, bins, false,
                    *tw, window, o + r * bins * 2, 1);
        }
      });
    });
  };
  if (x->dtype == kFloat)
    make(TypeTag<float>{});
  else
    make(TypeTag<double>{});
  return k;
}

BuildResult build_mel_weight_matrix(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(auto mel_v, ints_for_shape(ctx, 0, "num_mel_bins"));
  OP_ASSIGN_OR_RETURN(auto dft_v, ints_for_shape(ctx, 1, "dft_length"));
  OP_ASSIGN_OR_RETURN(auto rate_v, ints_for_shape(ctx, 2, "sample_rate"));
  OP_ASSIGN_OR_RETURN(const Tensor* lo_t, value_for_shape(ctx, 3, "lower_edge_hertz"));
  OP_ASSIGN_OR_RETURN(const Tensor* hi_t, value_for_shape(ctx, 4, "upper_edge_hertz"));
  auto lo = scalar_as_double(*lo_t, "lower_edge_hertz");
  auto hi = scalar_as_double(*hi_t, "upper_edge_hertz");
  if (!lo.ok() || !hi.ok()) return ctx.error("edge frequencies must be scalars");
  if (mel_v.size() != 1 || dft_v.size() != 1 || rate_v.size() != 1 || mel_v[0] <= 0 ||
      dft_v[0] <= 0 || rate_v[0] <= 0 || mel_v[0] > (1 << 20) || dft_v[0] > (1 << 24))
    return ctx.error("num_mel_bins, dft_length and sample_rate must be positive scalars");
  int64_t mels = mel_v[0], dft = dft_v[0], rate = rate_v[0];
  int64_t spectrum = dft / 2 + 1;
  int32_t dtype = int32_t(ctx.attr_int("output_datatype", kFloat));
  // Band edges: num_mel_bins + 2 points evenly spaced in mel, as spectrum bins
  // (the step divides by the number of points, as onnx's definition does).
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double lo_mel = to_mel(float(*lo)), hi_mel = to_mel(float(*hi));
  int64_t points = mels + 2;
  double mel_step = (hi_mel - lo_mel) / double(points);
  std::vector<int64_t> edge(static_cast<size_t>(points));
  for (int64_t i = 0; i < points; ++i) {
    double hz = 700 * (std::pow(10.0, (double(i) * mel_step + lo_mel) / 2595) - 1);
    edge[size_t(i)] = int64_t(std::floor(double(dft + 1) * hz / double(rate)));
  }
  std::vector<double> w(size_t(spectrum * mels), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double* {
    return j >= 0 && j < spectrum ? &w[size_t(j * mels + i)] : nullptr;
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = edge[size_t(i)], center = edge[size_t(i + 1)], right = edge[size_t(i + 2)];
    if (center == left) {
      if (double* p = at(center, i)) *p = 1;
    } else {
      for (int64_t j = left; j <= center; ++j)
        if (double* p = at(j, i)) *p = double(j - left) / double(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      if (double* p = at(j, i)) *p = double(right - j) / double(right - center);
  }
  auto t = HostTensor::allocate(dtype, {spectrum, mels});
  bool ok = true;
  if (dtype == kFloat16) {
    for (size_t j = 0; j < w.size(); ++j)
      static_cast<uint16_t*>(t.mutable_data())[j] = float_to_half(float(w[j]));
  } else {
    ok = dispatch_numeric(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t j = 0; j < w.size(); ++j) static_cast<T*>(t.mutable_data())[j] = T(w[j]);
    });
  }
  if (!ok) return ctx.error("output_datatype " + dtype_name(dtype) + " is not supported");
  ctx.set_output_value(0, std::move(t));
  return std::unique_ptr<Kernel>();
}

}  // namespace onnx_prepack::runtime::tensor_family
