// DFT and STFT (opset 17): direct O(n^2) transforms in double, real ([..., 1])
// or complex ([..., 2]) input, complex output; onesided keeps bins [0, n/2].
// dft_length, frame_step and frame_length must be constants.
#include <cmath>
#include <numbers>

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
  bool inverse = ctx.attr_int("inverse", 0) != 0;
  bool onesided = ctx.attr_int("onesided", 0) != 0;
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

constexpr OpEntry kOps[] = {
    {"DFT", build_dft},
    {"STFT", build_stft},
};

}  // namespace

std::span<const OpEntry> signal_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::math
