// ConvTranspose (opsets 1-22): 1-D to 3-D, groups, dilations, strides, pads,
// output_padding, output_shape and auto_pad. Per image and group, the columns
// col[Mg * taps, in pixels] = W_g^T X_g are a grouped 1x1 convolution by the
// transposed filter, packed once (a persisted pack when compiled:
// pack/conv_filter_format.h, f32_deconv_filter_*), and are scattered into the
// output (col2im) after the bias.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/ops/conv/conv_ops.h"
#include "runtime/ops/conv/spatial.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {
namespace {

using kernels::ConvGeometry;

// Adds column row k (tap (kd, kh, kw) of output channel k / taps) into the
// output: input pixel (d, h, w) lands on output pixel (d, h, w) * stride - pad +
// tap * dilation. Geometry `in` is the transposed conv's input, `out` its output.
void col2im_tap(const ConvGeometry& g, const float* col, float* y, int64_t k) {
  const int64_t taps = g.taps(), P = g.in_pixels();
  const int64_t kw = k % g.kernel[2], kh = (k / g.kernel[2]) % g.kernel[1];
  const int64_t kd = (k / (g.kernel[2] * g.kernel[1])) % g.kernel[0];
  float* ym = y + (k / taps) * g.out_pixels();
  const float* cr = col + k * P;
  int64_t p = 0;
  for (int64_t d = 0; d < g.in[0]; ++d) {
    const int64_t od = d * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
    const bool dok = od >= 0 && od < g.out[0];
    for (int64_t h = 0; h < g.in[1]; ++h) {
      const int64_t oh = h * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
      if (!dok || oh < 0 || oh >= g.out[1]) {
        p += g.in[2];
        continue;
      }
      float* yr = ym + (od * g.out[1] + oh) * g.out[2];
      for (int64_t w = 0; w < g.in[2]; ++w, ++p) {
        const int64_t ow = w * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2];
        if (ow >= 0 && ow < g.out[2]) yr[ow] += cr[p];
      }
    }
  }
}

// Output channels are split over the pool: each writes only its own plane and
// adds its taps in the same order as one thread would, so the bits never
// depend on the thread count.
void col2im_add(const ConvGeometry& g, const float* col, float* y, base::ThreadPool* pool) {
  const int64_t taps = g.taps(), P = g.in_pixels();
  const int64_t min_channels = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, taps * P));
  parallel_range(pool, g.mg(), min_channels, [&](int64_t m0, int64_t m1) {
    for (int64_t k = m0 * taps; k < m1 * taps; ++k) col2im_tap(g, col, y, k);
  });
}

// Per image: the columns col[M * taps, in pixels] (all groups) from the blocked
// conv kernel on the packed transposed filter, then col2im after the bias.
class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(ConvGeometry g, ConvGeometry gemm, Shape w_dims,
                      std::shared_ptr<const PreparedConvFilter> filter, bool has_bias)
      : g_(g),
        gemm_(gemm),
        w_dims_(std::move(w_dims)),
        filter_(std::move(filter)),
        has_bias_(has_bias),
        uk_(filter_ != nullptr
                ? kernels::conv_gemm_kernel_rows(filter_->mr(), device::host_isa_level())
                : kernels::conv_gemm_kernel(device::host_isa_level())) {}

  void run(const KernelIO& io) const override {
    const float* xp = static_cast<const float*>(io.in[0]);
    const float* bias = has_bias_ ? static_cast<const float*>(io.in[2]) : nullptr;
    float* y = static_cast<float*>(io.out[0]);
    const int64_t Y = g_.out_pixels(), P = g_.in_pixels(), kout = g_.mg() * g_.taps();
    for (int64_t i = 0; i < g_.n * g_.m; ++i) {
      std::fill(y + i * Y, y + (i + 1) * Y, bias ? bias[i % g_.m] : 0.0f);
    }
    if (g_.cg() == 0 || P == 0 || kout == 0) return;
    const float* packed = filter_ ? filter_->data() : nullptr;
    std::vector<float> per_run;
    if (packed == nullptr) {  // a filter fed at run time
      per_run.resize(conv_transpose_pack_floats(w_dims_, gemm_));
      if (!pack_conv_transpose_filter(static_cast<const float*>(io.in[1]), w_dims_, gemm_,
                                      per_run.data())
               .ok())
        return;  // unreachable: the dims were checked when the kernel was built
      packed = per_run.data();
    }
    // Reused across runs (a session runs one inference at a time): a fresh
    // buffer per run was an allocation and page faults of M * taps * P floats.
    // conv_blocked overwrites it entirely.
    if (col_.size() < size_t(gemm_.m * P)) col_.resize(size_t(gemm_.m * P));
    float* col = col_.data();
    const kernels::ConvScratch scratch = conv_scratch(io.workspace);
    for (int64_t ni = 0; ni < g_.n; ++ni) {
      kernels::conv_blocked(gemm_, *uk_, xp + ni * g_.c * P, packed, nullptr, col, io.pool,
                            scratch);
      for (int64_t gi = 0; gi < g_.group; ++gi) {
        col2im_add(g_, col + gi * kout * P, y + (ni * g_.m + gi * g_.mg()) * Y, io.pool);
      }
    }
  }

 private:
  ConvGeometry g_, gemm_;
  Shape w_dims_;
  std::shared_ptr<const PreparedConvFilter> filter_;
  bool has_bias_;
  const kernels::F32GemmKernel* uk_;
  mutable std::vector<float> col_;  // the columns of one image
};

}  // namespace

Result<std::unique_ptr<Kernel>> build_conv_transpose(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* w, ctx.require_input(1));
  const bool has_bias = ctx.has_input(2);
  if (x->dtype != kFloat || w->dtype != kFloat || (has_bias && ctx.input(2).dtype != kFloat)) {
    return ctx.error("only float inputs are supported");
  }
  const size_t rank = x->shape.size();
  if (rank < 3 || rank > 5 || w->shape.size() != rank) {
    return ctx.error("X " + shape_string(x->shape) + " and W " + shape_string(w->shape) +
                     " must both have rank 3, 4 or 5");
  }
  const size_t r = rank - 2;
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t c = x->shape[1];
  if (group <= 0 || c % group != 0 || w->shape[0] != c) {
    return ctx.error("W " + shape_string(w->shape) + " must be [" + std::to_string(c) +
                     ", M/group, ...] with group " + std::to_string(group) + " dividing " +
                     std::to_string(c));
  }
  const int64_t m = w->shape[1] * group;
  if (has_bias && ctx.input(2).shape != Shape{m}) {
    return ctx.error("B must be [" + std::to_string(m) + "]");
  }
  Window win;
  win.rank = int(r);
  win.in.assign(x->shape.begin() + 2, x->shape.end());
  win.kernel.assign(w->shape.begin() + 2, w->shape.end());
  win.stride = ctx.attr_ints("strides").value_or(std::vector<int64_t>(r, 1));
  win.dilation = ctx.attr_ints("dilations").value_or(std::vector<int64_t>(r, 1));
  auto out_pad = ctx.attr_ints("output_padding").value_or(std::vector<int64_t>(r, 0));
  if (win.stride.empty()) win.stride.assign(r, 1);
  if (win.dilation.empty()) win.dilation.assign(r, 1);
  if (out_pad.empty()) out_pad.assign(r, 0);
  if (win.stride.size() != r || win.dilation.size() != r || out_pad.size() != r) {
    return ctx.error("strides, dilations and output_padding must have " + std::to_string(r) +
                     " values");
  }
  for (size_t i = 0; i < r; ++i) {
    if (win.stride[i] <= 0 || win.dilation[i] <= 0 || win.kernel[i] <= 0 || out_pad[i] < 0 ||
        win.stride[i] > (1 << 20) || win.dilation[i] > (1 << 20) || out_pad[i] > (1 << 20)) {
      return ctx.error("strides, dilations, kernel and output_padding must be positive, bounded");
    }
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  auto pads = ctx.attr_ints("pads").value_or(std::vector<int64_t>(2 * r, 0));
  if (pads.empty()) pads.assign(2 * r, 0);
  if (pads.size() != 2 * r) return ctx.error("pads must have " + std::to_string(2 * r) + " values");
  // kernel_shape, when given, is W's spatial dims (as for Conv; the kernel comes from W).
  if (auto ks = ctx.attr_ints("kernel_shape");
      ks && !ks->empty() && *ks != std::vector<int64_t>(w->shape.begin() + 2, w->shape.end())) {
    return ctx.error("kernel_shape does not match W " + shape_string(w->shape));
  }
  auto out_shape = ctx.attr_ints("output_shape");
  if (out_shape && out_shape->size() == r + 2)
    out_shape->erase(out_shape->begin(), out_shape->begin() + 2);
  if (out_shape && !out_shape->empty() && out_shape->size() != r) {
    return ctx.error("output_shape must have " + std::to_string(r) + " values");
  }
  for (size_t i = 0; out_shape && i < out_shape->size(); ++i) {
    if ((*out_shape)[i] < 0)
      return ctx.error("output_shape[" + std::to_string(i) +
                       "] = " + std::to_string((*out_shape)[i]) + " is negative");
  }
  win.pad_begin.assign(r, 0);
  win.pad_end.assign(r, 0);
  win.out.assign(r, 0);
  for (size_t i = 0; i < r; ++i) {
    const int64_t span = (win.kernel[i] - 1) * win.dilation[i] + 1;
    const int64_t full = win.stride[i] * (win.in[i] - 1) + out_pad[i] + span;
    int64_t target = -1;
    if (out_shape && !out_shape->empty()) {
      target = (*out_shape)[i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      target = win.in[i] * win.stride[i];
    }
    if (target >= 0) {
      const int64_t total = full - target;
      if (total >= 0) {
        const bool upper = auto_pad == "SAME_UPPER";
        win.pad_begin[i] = upper ? total / 2 : total - total / 2;
        win.pad_end[i] = total - win.pad_begin[i];
      } else {  // a larger output: the extra is zero (plus bias) at the end
        win.pad_begin[i] = 0;
        win.pad_end[i] = total;
      }
      win.out[i] = target;
    } else {
      if (auto_pad == "NOTSET") {
        win.pad_begin[i] = pads[i];
        win.pad_end[i] = pads[i + r];
      }
      // pads are the model's, unbounded: full - begin - end is checked.
      const std::optional<int64_t> fb = checked_sub(full, win.pad_begin[i]);
      const std::optional<int64_t> o = fb ? checked_sub(*fb, win.pad_end[i]) : std::nullopt;
      if (!o) {
        return ctx.error("pads " + std::to_string(win.pad_begin[i]) + " / " +
                         std::to_string(win.pad_end[i]) + " overflow the output size of dim " +
                         std::to_string(i));
      }
      win.out[i] = *o;
      if (win.pad_begin[i] < 0 || win.pad_end[i] < 0) {  // onnx's inference refuses them
        return ctx.error("pads must not be negative, got " + std::to_string(win.pad_begin[i]) +
                         " / " + std::to_string(win.pad_end[i]));
      }
    }
    if (win.out[i] < 0 || win.out[i] > (int64_t(1) << 32)) {
      return ctx.error("output size " + std::to_string(win.out[i]) + " is out of range");
    }
  }
  Shape out{x->shape[0], m};
  out.insert(out.end(), win.out.begin(), win.out.end());
  // Each spatial dim is at most 2^32, so their product may still overflow.
  if (checked_product(out).value_or(kMaxElementCount) > (int64_t(1) << 40))
    return ctx.error("output " + shape_string(out) + " is too large (more than 2^40 elements)");
  ctx.set_output(0, kFloat, out);
  const ConvGeometry g = to_geometry(win, x->shape[0], c, m, group);
  // The columns are a grouped 1x1 convolution of the input planes by the
  // transposed filter: rows Mg * taps per group, one "pixel" per input pixel.
  ConvGeometry gemm;
  gemm.n = 1;
  gemm.c = c;
  gemm.m = g.mg() * g.taps() * group;
  gemm.group = group;
  gemm.in[2] = gemm.out[2] = g.in_pixels();
  std::shared_ptr<const PreparedConvFilter> filter;
  bool positive = true;
  for (int64_t d : w->shape) positive = positive && d > 0;
  if (ctx.input_value(1) != nullptr && positive && g.in_pixels() > 0) {
    OP_ASSIGN_OR_RETURN(filter, prepare_conv_transpose_filter(ctx, gemm));
  }
  return std::unique_ptr<Kernel>(
      new ConvTransposeKernel(g, gemm, w->shape, std::move(filter), has_bias));
}

}  // namespace onnx_prepack::runtime
