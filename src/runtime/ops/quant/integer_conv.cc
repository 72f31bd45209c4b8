// ConvInteger and QLinearConv: convolution of 8-bit operands less their zero
// points into int32 (NCHW, 1 to 3 spatial dims, groups, pads, strides,
// dilations, auto_pad), QLinearConv then adding B and requantizing each sum to
// y (kernels/vec_math/vec_requant.h: x_scale * w_scale[m] / y_scale as ONNX
// Runtime computes it, rounded to nearest even, saturated). With a constant W
// both run on the exact int8 GEMM or the depthwise plane path
// (integer_conv_packed.cc), bitwise these direct loops, which run otherwise
// (W a graph input).
#include "runtime/ops/quant/integer_conv.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/vec_math/vec_requant.h"
#include "runtime/kernel.h"
#include "runtime/ops/quant/quant_ops.h"
#include "runtime/work_budget.h"

namespace onnx_prepack::runtime {
namespace {

int32_t load8(int32_t t, const void* p, int64_t i) { return load_int8_operand(t, p, i); }

Result<IntConvGeom> conv_geometry(const BuildContext& ctx, const Shape& x, const Shape& w) {
  IntConvGeom g;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    return ctx.error("x " + shape_string(x) + " and w " + shape_string(w) +
                     " must both be N, C and 1 to 3 spatial dims");
  }
  const size_t sd = x.size() - 2;
  g.batch = x[0];
  g.c = x[1];
  g.m = w[0];
  g.group = ctx.attr_int("group", 1);
  if (g.group <= 0 || g.c % g.group != 0 || g.m % g.group != 0 || w[1] * g.group != g.c) {
    return ctx.error("group " + std::to_string(g.group) + " does not fit " + std::to_string(g.c) +
                     " input and " + std::to_string(g.m) + " output channels (w " +
                     shape_string(w) + ")");
  }
  g.in.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  // kernel_shape, when given, must be W's spatial dims (as for Conv, conv/conv.cc).
  if (auto ks = ctx.attr_ints("kernel_shape"); ks && !ks->empty() && *ks != g.kernel) {
    return ctx.error("kernel_shape " + shape_string(*ks) + " does not match w " + shape_string(w));
  }
  g.stride = ctx.attr_ints("strides").value_or(Shape(sd, 1));
  g.dilation = ctx.attr_ints("dilations").value_or(Shape(sd, 1));
  Shape pads = ctx.attr_ints("pads").value_or(Shape(2 * sd, 0));
  if (g.stride.size() != sd || g.dilation.size() != sd || pads.size() != 2 * sd) {
    return ctx.error("strides, dilations and pads must match " + std::to_string(sd) +
                     " spatial dims");
  }
  for (size_t i = 0; i < pads.size(); ++i) {
    if (pads[i] < 0)
      return ctx.error("pads[" + std::to_string(i) + "] = " + std::to_string(pads[i]) +
                       " is negative");
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  g.pad_begin.resize(sd);
  g.out.resize(sd);
  for (size_t d = 0; d < sd; ++d) {
    if (g.stride[d] <= 0 || g.dilation[d] <= 0 || g.kernel[d] <= 0) {
      return ctx.error("strides, dilations and kernel dims must be positive");
    }
    // Attributes may be near 2^63: the window extent and the padded input are
    // overflow-checked; once they fit, every run-time position does too.
    const std::string dim = "spatial dim " + std::to_string(d) + ": ";
    const std::optional<int64_t> reach = checked_mul(g.kernel[d] - 1, g.dilation[d]);
    const std::optional<int64_t> ext = reach ? checked_add(*reach, 1) : std::nullopt;
    if (!ext) {
      return ctx.error(dim + "kernel " + std::to_string(g.kernel[d]) + " with dilation " +
                       std::to_string(g.dilation[d]) + " overflows int64");
    }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[d] = g.in[d] / g.stride[d] + (g.in[d] % g.stride[d] != 0);
      // (out - 1) * stride <= in: only adding the extent can overflow.
      const std::optional<int64_t> end = checked_add((g.out[d] - 1) * g.stride[d], *ext);
      if (!end) return ctx.error(dim + "the SAME padding overflows int64");
      const int64_t total = std::max<int64_t>(0, *end - g.in[d]);
      g.pad_begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      const int64_t b = auto_pad == "VALID" ? 0 : pads[d],
                    e = auto_pad == "VALID" ? 0 : pads[d + sd];
      g.pad_begin[d] = b;
      const std::optional<int64_t> in_b = checked_add(g.in[d], b);
      const std::optional<int64_t> padded = in_b ? checked_add(*in_b, e) : std::nullopt;
      if (!padded) {
        return ctx.error(dim + "input " + std::to_string(g.in[d]) + " with pads " +
                         std::to_string(b) + " / " + std::to_string(e) + " overflows int64");
      }
      const int64_t span = *padded - *ext;
      if (span < 0) return ctx.error("kernel is larger than the padded input");
      g.out[d] = span / g.stride[d] + 1;
    }
  }
  // The direct loop visits every (output point, input channel of its group,
  // kernel tap): a large padding on a small X makes that hours of work.
  uint64_t steps = saturating_mul(uint64_t(g.batch), uint64_t(g.m));
  for (int64_t o : g.out) steps = saturating_mul(steps, uint64_t(o));
  steps = saturating_mul(steps, uint64_t(g.c / g.group));
  for (int64_t k : g.kernel) steps = saturating_mul(steps, uint64_t(k));
  if (steps > kMaxOperatorSteps) {
    return ctx.error("output " + shape_string(Shape{g.batch, g.m}) + " x " + shape_string(g.out) +
                     " with " + std::to_string(g.c / g.group) + " channels per group and kernel " +
                     shape_string(g.kernel) + " takes " + std::to_string(steps) +
                     " steps, over the work bound of 2^32");
  }
  return g;
}

// acc[n][m][out...] = sum over the window of (x - xz)(w - wz[m]).
void conv_int(const IntConvGeom& g, int32_t xt, const void* x, int32_t xz, int32_t wt,
              const void* w, const void* wz, int64_t wz_n, std::vector<int32_t>& acc) {
  const size_t sd = g.in.size();
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const int64_t osz = g.out_size(), isz = g.in_size(), ksz = g.kernel_size();
  acc.assign(size_t(g.batch * g.m * osz), 0);
  std::vector<int64_t> oc(sd), kc(sd);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.m; ++m) {
      const int64_t grp = m / mg;
      const int32_t zw = wz ? load8(wt, wz, wz_n == 1 ? 0 : m) : 0;
      int32_t* out = acc.data() + (n * g.m + m) * osz;
      for (int64_t o = 0; o < osz; ++o) {
        for (size_t d = sd, r = size_t(o); d-- > 0;) {
          oc[d] = int64_t(r) % g.out[d];
          r /= size_t(g.out[d]);
        }
        int32_t sum = 0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t c = grp * cg + ci;
          for (int64_t k = 0; k < ksz; ++k) {
            int64_t r = k, off = 0;
            bool inside = true;
            for (size_t d = sd; d-- > 0;) {
              kc[d] = r % g.kernel[d];
              r /= g.kernel[d];
            }
            for (size_t d = 0; d < sd; ++d) {
              const int64_t pos = oc[d] * g.stride[d] + kc[d] * g.dilation[d] - g.pad_begin[d];
              if (pos < 0 || pos >= g.in[d]) inside = false;
              off = off * g.in[d] + pos;
            }
            if (!inside) continue;  // padding holds the zero point: contributes 0
            const int32_t xv = load8(xt, x, (n * g.c + c) * isz + off) - xz;
            sum += xv * (load8(wt, w, (m * cg + ci) * ksz + k) - zw);
          }
        }
        out[o] = sum;
      }
    }
  }
}

Status check_count(const BuildContext& ctx, int i, int64_t allowed, const char* what) {
  if (!ctx.has_input(i)) return Status();
  const int64_t n = checked_numel(ctx.input(i).shape);
  if (n != 1 && n != allowed) {
    return ctx.error(std::string(what) + " must hold 1 or " + std::to_string(allowed) +
                     " values, got " + shape_string(ctx.input(i).shape));
  }
  return Status();
}

Shape out_shape(const IntConvGeom& g) {
  Shape s{g.batch, g.m};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

Result<std::unique_ptr<Kernel>> build_ci(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* w, ctx.require_input(1));
  if ((x->dtype != kInt8 && x->dtype != kUint8) || (w->dtype != kInt8 && w->dtype != kUint8)) {
    return ctx.error("x and w must be int8 or uint8");
  }
  OP_ASSIGN_OR_RETURN(IntConvGeom g, conv_geometry(ctx, x->shape, w->shape));
  OP_RETURN_IF_ERROR(check_count(ctx, 2, 1, "x_zero_point"));
  OP_RETURN_IF_ERROR(check_count(ctx, 3, g.m, "w_zero_point"));
  const bool has_xz = ctx.has_input(2);
  const int64_t wzn = ctx.has_input(3) ? checked_numel(ctx.input(3).shape) : 0;
  ctx.set_output(0, kInt32, out_shape(g));
  const int32_t xt = x->dtype, wt = w->dtype;
  IntConvOperands op;
  op.xt = xt;
  op.wt = wt;
  op.w = 1;
  op.xz = has_xz ? 2 : -1;
  op.wz = wzn > 0 ? 3 : -1;
  op.wzn = wzn;
  OP_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> fast, packed_int_conv(ctx, g, op));
  if (fast) return fast;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<int32_t> acc;
    const int32_t xz = has_xz ? load8(xt, io.in[2], 0) : 0;
    conv_int(g, xt, io.in[0], xz, wt, io.in[1], wzn ? io.in[3] : nullptr, wzn, acc);
    std::copy(acc.begin(), acc.end(), static_cast<int32_t*>(io.out[0]));
  }));
}

Result<std::unique_ptr<Kernel>> build_qlc(BuildContext& ctx) {
  for (int i = 0; i < 8; ++i) OP_RETURN_IF_ERROR(ctx.require_input(i).status());
  const ValueDesc &x = ctx.input(0), &w = ctx.input(3);
  const int32_t yt = ctx.input(7).dtype;
  for (int32_t t : {x.dtype, w.dtype, yt}) {
    if (t != kInt8 && t != kUint8) return ctx.error("x, w and y must be int8 or uint8");
  }
  for (int i : {1, 4, 6}) {
    if (ctx.input(i).dtype != kFloat) return ctx.error("scales must be float");
  }
  OP_ASSIGN_OR_RETURN(IntConvGeom g, conv_geometry(ctx, x.shape, w.shape));
  OP_RETURN_IF_ERROR(check_count(ctx, 1, 1, "x_scale"));
  OP_RETURN_IF_ERROR(check_count(ctx, 2, 1, "x_zero_point"));
  OP_RETURN_IF_ERROR(check_count(ctx, 4, g.m, "w_scale"));
  OP_RETURN_IF_ERROR(check_count(ctx, 5, g.m, "w_zero_point"));
  OP_RETURN_IF_ERROR(check_count(ctx, 6, 1, "y_scale"));
  OP_RETURN_IF_ERROR(check_count(ctx, 7, 1, "y_zero_point"));
  const bool has_b = ctx.has_input(8);
  if (has_b && (ctx.input(8).dtype != kInt32 || checked_numel(ctx.input(8).shape) != g.m)) {
    return ctx.error("B must be int32 [M]");
  }
  const int64_t wsn = checked_numel(ctx.input(4).shape), wzn = checked_numel(ctx.input(5).shape);
  ctx.set_output(0, yt, out_shape(g));
  IntConvOperands op;
  op.xt = x.dtype;
  op.wt = w.dtype;
  op.w = 3;
  op.xz = 2;
  op.wz = 5;
  op.wzn = wzn;
  op.requant = true;
  op.xs = 1;
  op.ws = 4;
  op.wsn = wsn;
  op.ys = 6;
  op.yz = 7;
  op.bias = has_b ? 8 : -1;
  op.yt = yt;
  OP_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> fast, packed_int_conv(ctx, g, op));
  if (fast) return fast;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<int32_t> acc;
    conv_int(g, op.xt, io.in[0], load8(op.xt, io.in[2], 0), op.wt, io.in[3], io.in[5], wzn, acc);
    const int32_t yz = load8(yt, io.in[7], 0);
    const int32_t* bias = has_b ? static_cast<const int32_t*>(io.in[8]) : nullptr;
    const int32_t lo = yt == kInt8 ? -128 : 0, hi = yt == kInt8 ? 127 : 255;
    const int64_t osz = g.out_size();
    auto* y = static_cast<uint8_t*>(io.out[0]);  // int8 y: its bits
    for (int64_t i = 0; i < int64_t(acc.size()); ++i) {
      const int64_t m = (i / osz) % g.m;
      // B wraps in int32 as the packed kernels' sum does.
      const int32_t a = int32_t(uint32_t(acc[size_t(i)]) + uint32_t(bias ? bias[m] : 0));
      y[i] = uint8_t(kernels::vec::requant_value(a, int_conv_multiplier(op, io, m), yz, lo, hi));
    }
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_conv_integer(BuildContext& ctx) { return build_ci(ctx); }
Result<std::unique_ptr<Kernel>> build_qlinear_conv(BuildContext& ctx) { return build_qlc(ctx); }

}  // namespace onnx_prepack::runtime
