// Signal processing (opset 17, DFT also 20): DFT and STFT as direct O(n^2)
// transforms in double (exact enough for the lengths models use; no FFT
// yet), and MelWeightMatrix, the triangular mel filter bank of the spec.
// Complex values are a trailing dimension of 2 (real, imaginary); real input
// has a trailing 1.
#include <cmath>
#include <numbers>

#include "runtime/ops/extra/common.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime::extra {
namespace {

constexpr int64_t kMaxDftLength = 65536;

Result<int64_t> known_int(BuildContext& ctx, int i, const char* what) {
  const Tensor* t = ctx.input_value(i);
  if (t == nullptr) {
    return ctx.error(std::string(what) + " (input " + std::to_string(i) + " '" + ctx.input(i).name +
                     "') decides the output's shape, so it " + kNeedsValue +
                     ": a constant, computed from constants, or a pinned input");
  }
  OP_ASSIGN_OR_RETURN(std::vector<int64_t> v, to_int64_vector(*t, what));
  if (v.size() != 1) return ctx.error(std::string(what) + " must be a scalar");
  return v[0];
}

Result<double> known_float(BuildContext& ctx, int i, const char* what) {
  const Tensor* t = ctx.input_value(i);
  if (t == nullptr) {
    return ctx.error(std::string(what) + " (input " + std::to_string(i) + " '" + ctx.input(i).name +
                     "') decides the output, so it " + kNeedsValue +
                     ": a constant, computed from constants, or a pinned input");
  }
  if (checked_numel(t->shape) != 1) return ctx.error(std::string(what) + " must be a scalar");
  if (t->dtype == kFloat) return double(*t->as<float>());
  if (t->dtype == kDouble) return *t->as<double>();
  OP_ASSIGN_OR_RETURN(std::vector<int64_t> v, to_int64_vector(*t, what));
  return double(v[0]);
}

// One 1-D transform: `in` has `len` complex (or real, `complex_in` false)
// values `in_stride` complex elements apart; n points (zero padded or cut),
// `bins` outputs written `out_stride` apart.
template <typename T>
void dft_line(const T* in, int64_t len, int64_t in_stride, bool complex_in, int64_t n, int64_t bins,
              bool inverse, T* out, int64_t out_stride, const T* window) {
  int64_t used = std::min(len, n);
  double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < used; ++j) {
      const T* v = in + j * in_stride * (complex_in ? 2 : 1);
      double w = window ? double(window[j]) : 1.0;
      double xr = double(v[0]) * w, xi = complex_in ? double(v[1]) * w : 0.0;
      // The angle reduced modulo n first keeps it small for long transforms.
      double a = sign * 2 * std::numbers::pi * double((j * k) % n) / double(n);
      double c = std::cos(a), s = std::sin(a);
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

Result<std::unique_ptr<Kernel>> build_dft(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  if (rank < 3 || (x->shape.back() != 1 && x->shape.back() != 2))
    return ctx.error("input must be [batch, ..., 1 or 2] with at least one signal dimension");
  int64_t axis = 1;
  if (ctx.opset() >= 20) {
    axis = -2;
    if (ctx.has_input(2)) {
      OP_ASSIGN_OR_RETURN(axis, known_int(ctx, 2, "axis"));
    }
  } else {
    axis = ctx.attr_int("axis", 1);
  }
  OP_ASSIGN_OR_RETURN(axis, normalize_axis(axis, rank, ctx));
  if (axis == 0 || axis == rank - 1) return ctx.error("axis must be a signal dimension");
  bool inverse = ctx.attr_int("inverse", 0) != 0;
  bool onesided = ctx.attr_int("onesided", 0) != 0;
  if (inverse && onesided) return ctx.error("inverse with onesided=1 is not supported");
  int64_t len = x->shape[size_t(axis)];
  int64_t n = len;
  if (ctx.has_input(1)) {
    OP_ASSIGN_OR_RETURN(n, known_int(ctx, 1, "dft_length"));
  }
  if (n <= 0) return ctx.error("dft_length must be positive");
  // The transform is direct, O(n^2) per line: longer ones are refused, not run for hours.
  if (n > kMaxDftLength)
    return ctx.error("DFT of " + std::to_string(n) + " points is longer than the " +
                     std::to_string(kMaxDftLength) + " this direct transform supports");
  int64_t bins = onesided ? n / 2 + 1 : n;
  Shape out = x->shape;
  out[size_t(axis)] = bins;
  out.back() = 2;
  OP_ASSIGN_OR_RETURN(int64_t count, checked_elements(ctx, out));
  (void)count;
  ctx.set_output(0, x->dtype, out);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->shape[size_t(d)];
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x->shape[size_t(d)];
  bool complex_in = x->shape.back() == 2;
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([=](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          T* y = static_cast<T*>(io.out[0]);
          int64_t cin = complex_in ? 2 : 1;
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i)
              dft_line(in + (o * len * inner + i) * cin, len, inner, complex_in, n, bins, inverse,
                       y + (o * bins * inner + i) * 2, inner, static_cast<const T*>(nullptr));
        });
      }))
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return k;
}

Result<std::unique_ptr<Kernel>> build_stft(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->shape.size() != 3 || (x->shape[2] != 1 && x->shape[2] != 2))
    return ctx.error("signal must be [batch, length, 1 or 2]");
  OP_ASSIGN_OR_RETURN(int64_t step, known_int(ctx, 1, "frame_step"));
  int64_t frame = -1;
  if (ctx.has_input(2)) {
    const ValueDesc& w = ctx.input(2);
    if (w.shape.size() != 1 || w.dtype != x->dtype)
      return ctx.error("window must be 1-D of the signal's type");
    frame = w.shape[0];
  }
  if (ctx.has_input(3)) {
    OP_ASSIGN_OR_RETURN(int64_t fl, known_int(ctx, 3, "frame_length"));
    if (frame >= 0 && fl != frame) return ctx.error("frame_length differs from the window's");
    frame = fl;
  }
  int64_t len = x->shape[1];
  if (frame <= 0 || frame > len) return ctx.error("frame length must be in [1, signal length]");
  if (step <= 0) return ctx.error("frame_step must be positive");
  if (frame > kMaxDftLength)
    return ctx.error("frames longer than " + std::to_string(kMaxDftLength) +
                     " points are not supported by this direct transform");
  bool onesided = ctx.attr_int("onesided", 1) != 0;
  bool complex_in = x->shape[2] == 2;
  int64_t frames = (len - frame) / step + 1;
  int64_t bins = onesided ? frame / 2 + 1 : frame;
  int64_t batch = x->shape[0];
  Shape out{batch, frames, bins, 2};
  OP_ASSIGN_OR_RETURN(int64_t count, checked_elements(ctx, out));
  (void)count;
  ctx.set_output(0, x->dtype, out);
  bool has_window = ctx.has_input(2);
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([=](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          const T* window = has_window ? static_cast<const T*>(io.in[2]) : nullptr;
          T* y = static_cast<T*>(io.out[0]);
          int64_t cin = complex_in ? 2 : 1;
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t f = 0; f < frames; ++f)
              dft_line(in + (b * len + f * step) * cin, frame, 1, complex_in, frame, bins, false,
                       y + (b * frames + f) * bins * 2, 1, window);
        });
      }))
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return k;
}

// The spec's filter bank: num_mel_bins triangles between mel-spaced edges,
// each edge mapped to the spectrogram bin floor((dft_length + 1) * hz / sample_rate).
Result<std::unique_ptr<Kernel>> build_mel_weight_matrix(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(int64_t mel_bins, known_int(ctx, 0, "num_mel_bins"));
  OP_ASSIGN_OR_RETURN(int64_t dft_length, known_int(ctx, 1, "dft_length"));
  OP_ASSIGN_OR_RETURN(int64_t sample_rate, known_int(ctx, 2, "sample_rate"));
  OP_ASSIGN_OR_RETURN(double lower_hz, known_float(ctx, 3, "lower_edge_hertz"));
  OP_ASSIGN_OR_RETURN(double upper_hz, known_float(ctx, 4, "upper_edge_hertz"));
  if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0 || mel_bins > (1 << 20) ||
      dft_length > (int64_t(1) << 24))
    return ctx.error("num_mel_bins, dft_length and sample_rate must be positive");
  if (!std::isfinite(lower_hz) || !std::isfinite(upper_hz) || lower_hz < 0 || upper_hz < lower_hz ||
      upper_hz > 1e9)
    return ctx.error("need 0 <= lower_edge_hertz <= upper_edge_hertz (finite)");
  int64_t spec_bins = dft_length / 2 + 1;
  int32_t dtype = int32_t(ctx.attr_int("output_datatype", kFloat));
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double lo = to_mel(lower_hz), hi = to_mel(upper_hz);
  // The spec divides the mel range into num_mel_bins + 2 steps.
  double step = (hi - lo) / double(mel_bins + 2);
  std::vector<int64_t> edge(size_t(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (lo + double(i) * step) / 2595.0) - 1.0);
    edge[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hz / double(sample_rate)));
  }
  std::vector<double> w(size_t(spec_bins * mel_bins), 0.0);
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < spec_bins) w[size_t(row * mel_bins + col)] = v;
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    int64_t lower = edge[size_t(i)], center = edge[size_t(i + 1)], higher = edge[size_t(i + 2)];
    // Loops visit only the bins that exist; the ratios use the true edges.
    if (center == lower) {
      set(center, i, 1.0);
    } else {
      for (int64_t j = std::max<int64_t>(lower, 0); j <= std::min(center, spec_bins - 1); ++j)
        set(j, i, double(j - lower) / double(center - lower));
    }
    if (higher > center) {
      for (int64_t j = std::max<int64_t>(center, 0); j < std::min(higher, spec_bins); ++j)
        set(j, i, double(higher - j) / double(higher - center));
    }
  }
  OP_ASSIGN_OR_RETURN(HostTensor out,
                      HostTensor::try_allocate(dtype, Shape{spec_bins, mel_bins}, "output"));
  if (!dispatch_numeric(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* y = static_cast<T*>(out.mutable_data());
        for (size_t i = 0; i < w.size(); ++i) y[i] = T(w[i]);
      }))
    return ctx.error("output_datatype " + dtype_name(dtype) + " is not supported");
  ctx.set_output_value(0, std::move(out));
  return std::unique_ptr<Kernel>();
}

constexpr OpEntry kOps[] = {
    {"DFT", build_dft},
    {"STFT", build_stft},
    {"MelWeightMatrix", build_mel_weight_matrix},
};

}  // namespace

std::span<const OpEntry> signal_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
