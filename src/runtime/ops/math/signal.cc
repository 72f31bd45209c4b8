// DFT, STFT and MelWeightMatrix (opset 17). DFT and STFT: direct O(n^2) transforms in double, real
// ([..., 1]) or complex ([..., 2]) input, complex output; onesided keeps bins [0, n/2]. dft_length,
// frame_step and frame_length must be constants.
#include <cmath>
#include <numbers>

#include "kernels/vec_math/vec_half.h"
#include "runtime/memory_account.h"
#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

// One transform of `n` input samples x[j * xs] (re, im when complex) into
// `bins` outputs y[k * ys] (re, im), input zero-padded or cut to `len`.
template <typename T>
void dft(const T* x, int64_t xs, int64_t n, bool complex_in, T* y, int64_t ys, int64_t len,
         int64_t bins, bool inverse, const T* window) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < std::min(n, len); ++j) {
      double w = window ? double(window[j]) : 1.0;
      double xr = double(x[j * xs]) * w, xi = complex_in ? double(x[j * xs + 1]) * w : 0.0;
      double a = sign * 2 * std::numbers::pi * double((j * k) % len) / double(len);
      double c = std::cos(a), s = std::sin(a);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) {
      re /= double(len);
      im /= double(len);
    }
    y[k * ys] = T(re);
    y[k * ys + 1] = T(im);
  }
}

Result<int64_t> const_int(BuildContext& ctx, int i, std::string_view what) {
  OP_ASSIGN_OR_RETURN(auto v, ctx.const_ints(i, what));
  if (v.size() != 1 || v[0] <= 0)
    return ctx.error(std::string(what) + " must be a positive scalar");
  return v[0];
}

Result<std::unique_ptr<Kernel>> build_dft(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  if (rank < 3 || (x->shape.back() != 1 && x->shape.back() != 2))
    return ctx.error("input " + shape_string(x->shape) + " is not [batch, ..., 1 or 2]");
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 1 || axis > rank - 2) return ctx.error("axis must name a signal dimension");
  int64_t n = x->shape[size_t(axis)], len = n;
  if (ctx.has_input(1)) {
    OP_ASSIGN_OR_RETURN(len, const_int(ctx, 1, "dft_length"));
  }
  const int64_t inverse_v = ctx.attr_int("inverse", 0), onesided_v = ctx.attr_int("onesided", 0);
  if ((inverse_v != 0 && inverse_v != 1) || (onesided_v != 0 && onesided_v != 1))
    return ctx.error("inverse and onesided must be 0 or 1, got " + std::to_string(inverse_v) +
                     " and " + std::to_string(onesided_v));
  const bool inverse = inverse_v == 1, onesided = onesided_v == 1;
  // onnx's inference: a forward one-sided DFT is of a real signal.
  if (!inverse && onesided && x->shape.back() != 1)
    return ctx.error("one-sided DFT requires real input (last dimension 1)");
  // onnx's inference: an inverse one-sided DFT reads half a spectrum, so complex input.
  if (inverse && onesided && x->shape.back() != 2)
    return ctx.error("inverse one-sided DFT requires complex input (last dimension 2)");
  int64_t bins = onesided ? len / 2 + 1 : len;
  Shape out = x->shape;
  out[size_t(axis)] = bins;
  out.back() = 2;
  ctx.set_output(0, x->dtype, out);
  bool complex_in = x->shape.back() == 2;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x->shape[size_t(i)];
  for (int64_t i = axis + 1; i < rank - 1; ++i) inner *= x->shape[size_t(i)];
  int64_t c = x->shape.back();
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([=](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          T* o = static_cast<T*>(io.out[0]);
          parallel_range(io.pool, outer * inner, 1, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
              int64_t a = r / inner, b = r % inner;
              dft(in + (a * n * inner + b) * c, inner * c, n, complex_in,
                  o + (a * bins * inner + b) * 2, inner * 2, len, bins, inverse,
                  static_cast<const T*>(nullptr));
            }
          });
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

Result<std::unique_ptr<Kernel>> build_stft(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->shape.size() != 3 || (x->shape[2] != 1 && x->shape[2] != 2))
    return ctx.error("signal " + shape_string(x->shape) + " is not [batch, length, 1 or 2]");
  OP_ASSIGN_OR_RETURN(int64_t step, const_int(ctx, 1, "frame_step"));
  bool has_window = ctx.has_input(2);
  int64_t frame = 0;
  if (ctx.has_input(3)) {
    OP_ASSIGN_OR_RETURN(frame, const_int(ctx, 3, "frame_length"));
  }
  if (has_window) {
    const ValueDesc& w = ctx.input(2);
    if (w.shape.size() != 1 || w.dtype != x->dtype)
      return ctx.error("window must be 1-D of the signal's type");
    if (frame == 0) frame = w.shape[0];
    if (w.shape[0] != frame) return ctx.error("window length differs from frame_length");
  }
  if (frame <= 0) return ctx.error("needs frame_length or a window");
  int64_t batch = x->shape[0], length = x->shape[1], c = x->shape[2];
  if (frame > length) return ctx.error("frame_length exceeds the signal length");
  int64_t frames = (length - frame) / step + 1;
  bool onesided = ctx.attr_int("onesided", 1) != 0;
  int64_t bins = onesided ? frame / 2 + 1 : frame;
  ctx.set_output(0, x->dtype, {batch, frames, bins, 2});
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([=](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          const T* window = has_window ? static_cast<const T*>(io.in[2]) : nullptr;
          T* o = static_cast<T*>(io.out[0]);
          parallel_range(io.pool, batch * frames, 1, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
              int64_t b = r / frames, f = r % frames;
              dft(in + (b * length + f * step) * c, c, frame, c == 2, o + r * bins * 2, 2, frame,
                  bins, false, window);
            }
          });
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters on
// the mel scale (2595 log10(1 + f / 700)) between the edge frequencies, each
// filter's corners rounded down to spectrogram bins, the onnx reference's form.
Result<std::unique_ptr<Kernel>> build_mel_weight_matrix(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(int64_t mels, const_int(ctx, 0, "num_mel_bins"));
  OP_ASSIGN_OR_RETURN(int64_t dft_length, const_int(ctx, 1, "dft_length"));
  OP_ASSIGN_OR_RETURN(int64_t rate, const_int(ctx, 2, "sample_rate"));
  double edge[2];
  for (int i = 0; i < 2; ++i) {
    const Tensor* v = ctx.input_value(3 + i);
    // Every float type natively: through the half adapter, a float16 edge would make the
    // output float16, while its type is output_datatype's.
    if (v == nullptr || v->numel() != 1 ||
        !(v->dtype == kFloat || v->dtype == kDouble || v->dtype == kFloat16 ||
          v->dtype == kBfloat16))
      return ctx.error("edge frequencies must be known before running (float scalars)");
    if (v->dtype == kFloat16 || v->dtype == kBfloat16) {
      const uint16_t bits = *v->as<uint16_t>();
      edge[i] = v->dtype == kFloat16 ? kernels::vec::half_to_float(bits)
                                     : kernels::vec::bfloat16_to_float(bits);
    } else {
      edge[i] = v->dtype == kFloat ? double(*v->as<float>()) : *v->as<double>();
    }
  }
  if (mels > (int64_t(1) << 20) || dft_length > (int64_t(1) << 30))
    return ctx.error("num_mel_bins or dft_length is too large");
  int64_t bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double lo = to_mel(edge[0]), hi = to_mel(edge[1]);
  std::vector<int64_t> corner(size_t(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    // The step is (hi - lo) / (mels + 2), so the last corner stays below the
    // upper edge: the onnx reference does so, and its test data follows it.
    double mel = lo + double(i) * (hi - lo) / double(mels + 2);
    double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    corner[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hz / double(rate)));
  }
  // The double table and the output: sized by constants of the model, so held
  // against the memory budget before either is allocated.
  int32_t dt = int32_t(ctx.attr_int("output_datatype", kFloat));
  OP_ASSIGN_OR_RETURN(uint64_t table_bytes,
                      checked_tensor_bytes(kDouble, {bins, mels}, ctx.where() + ": mel table"));
  OP_ASSIGN_OR_RETURN(MemoryReservation table,
                      reserve_memory(table_bytes, ctx.where() + ": mel table"));
  OP_ASSIGN_OR_RETURN(HostTensor out,
                      HostTensor::try_allocate(dt, {bins, mels}, ctx.where() + ": output"));
  std::vector<double> w(size_t(bins * mels), 0.0);
  auto at = [&](int64_t row, int64_t col) -> double* {
    return row >= 0 && row < bins ? &w[size_t(row * mels + col)] : nullptr;
  };
  for (int64_t m = 0; m < mels; ++m) {
    int64_t a = corner[size_t(m)], c = corner[size_t(m + 1)], b = corner[size_t(m + 2)];
    if (c == a) {
      if (double* p = at(c, m)) *p = 1;
    } else {
      for (int64_t j = a; j <= c; ++j)
        if (double* p = at(j, m)) *p = double(j - a) / double(c - a);
    }
    for (int64_t j = c; j < b; ++j)
      if (double* p = at(j, m)) *p = double(b - j) / double(b - c);
  }
  if (!dispatch_numeric(dt, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* o = static_cast<T*>(out.mutable_data());
        for (size_t i = 0; i < w.size(); ++i) o[i] = T(w[i]);
      }))
    return unsupported_type(ctx, dt);
  ctx.set_output_value(0, std::move(out));
  return std::unique_ptr<Kernel>();
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_mel_weight_matrix_op(BuildContext& ctx) {
  return build_mel_weight_matrix(ctx);
}
Result<std::unique_ptr<Kernel>> build_dft_op(BuildContext& ctx) { return build_dft(ctx); }
Result<std::unique_ptr<Kernel>> build_stft_op(BuildContext& ctx) { return build_stft(ctx); }

}  // namespace onnx_prepack::runtime::math
