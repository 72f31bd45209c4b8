#include "runtime/ops/conv/spatial.h"

#include <limits>
#include <string>

namespace onnx_prepack::runtime {
namespace {

constexpr int64_t kMaxDim = int64_t(1) << 40;

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

Result<Window> read_window(const BuildContext& ctx, const Shape& x,
                           const std::vector<int64_t>& kernel, bool ceil_mode, bool has_dilations) {
  if (x.size() < 3) return ctx.error("input must have rank >= 3, got " + shape_string(x));
  Window w;
  w.rank = int(x.size()) - 2;
  const size_t r = size_t(w.rank);
  w.in.assign(x.begin() + 2, x.end());
  w.kernel = kernel;
  if (w.kernel.size() != r) {
    return ctx.error("kernel " + list(w.kernel) + " does not match " + std::to_string(r) +
                     " spatial dims");
  }
  w.stride = ctx.attr_ints("strides").value_or(std::vector<int64_t>(r, 1));
  w.dilation = has_dilations ? ctx.attr_ints("dilations").value_or(std::vector<int64_t>(r, 1))
                             : std::vector<int64_t>(r, 1);
  if (w.stride.empty()) w.stride.assign(r, 1);
  if (w.dilation.empty()) w.dilation.assign(r, 1);
  if (w.stride.size() != r || w.dilation.size() != r) {
    return ctx.error("strides " + list(w.stride) + " / dilations " + list(w.dilation) +
                     " do not match " + std::to_string(r) + " spatial dims");
  }
  for (size_t i = 0; i < r; ++i) {
    if (w.kernel[i] <= 0 || w.kernel[i] > kMaxDim || w.stride[i] <= 0 || w.stride[i] > kMaxDim ||
        w.dilation[i] <= 0 || w.dilation[i] > kMaxDim || w.in[i] < 0 || w.in[i] > kMaxDim) {
      return ctx.error("kernel " + list(w.kernel) + ", strides " + list(w.stride) + ", dilations " +
                       list(w.dilation) + " must be positive and bounded");
    }
  }
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  w.pad_begin.assign(r, 0);
  w.pad_end.assign(r, 0);
  w.out.assign(r, 0);
  if (auto_pad == "NOTSET") {
    auto pads = ctx.attr_ints("pads").value_or(std::vector<int64_t>(2 * r, 0));
    if (pads.empty()) pads.assign(2 * r, 0);
    if (pads.size() != 2 * r) {
      return ctx.error("pads " + list(pads) + " must have " + std::to_string(2 * r) + " values");
    }
    for (size_t i = 0; i < r; ++i) {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[i + r];
      if (pads[i] < 0 || pads[i + r] < 0 || pads[i] > kMaxDim || pads[i + r] > kMaxDim) {
        return ctx.error("pads " + list(pads) + " must be non-negative and bounded");
      }
    }
  } else if (auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return ctx.error("auto_pad '" + auto_pad + "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  }
  for (size_t i = 0; i < r; ++i) {
    const int64_t span = (w.kernel[i] - 1) * w.dilation[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[i] = (w.in[i] + w.stride[i] - 1) / w.stride[i];
      const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.stride[i] + span - w.in[i]);
      const int64_t small = total / 2;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    const int64_t padded = w.in[i] + w.pad_begin[i] + w.pad_end[i];
    if (padded < span) {
      return ctx.error("window " + std::to_string(span) + " is larger than the padded input " +
                       std::to_string(padded) + " in spatial dim " + std::to_string(i));
    }
    if (ceil_mode) {
      w.out[i] = (padded - span + w.stride[i] - 1) / w.stride[i] + 1;
      // The last window must start inside the input or the left padding.
      if ((w.out[i] - 1) * w.stride[i] >= w.in[i] + w.pad_begin[i]) --w.out[i];
    } else {
      w.out[i] = (padded - span) / w.stride[i] + 1;
    }
  }
  // Output element count bounded (the planner allocates it).
  int64_t count = x[0] * x[1];
  for (int64_t o : w.out) {
    if (o < 0 || (o > 0 && count > kMaxDim / o)) return ctx.error("output is too large");
    count *= o;
  }
  return w;
}

kernels::ConvGeometry to_geometry(const Window& w, int64_t n, int64_t c, int64_t m, int64_t group) {
  kernels::ConvGeometry g;
  g.n = n;
  g.c = c;
  g.m = m;
  g.group = group;
  const int off = 3 - w.rank;
  for (int i = 0; i < w.rank; ++i) {
    g.in[off + i] = w.in[size_t(i)];
    g.out[off + i] = w.out[size_t(i)];
    g.kernel[off + i] = w.kernel[size_t(i)];
    g.stride[off + i] = w.stride[size_t(i)];
    g.dilation[off + i] = w.dilation[size_t(i)];
    g.pad_begin[off + i] = w.pad_begin[size_t(i)];
    g.pad_end[off + i] = w.pad_end[size_t(i)];
  }
  return g;
}

void for_each_task(base::ThreadPool* pool, size_t n,
                   const std::function<void(size_t, size_t)>& fn) {
  if (pool != nullptr && n > 1) {
    pool->parallel_for(n, fn);
  } else {
    for (size_t i = 0; i < n; ++i) fn(i, 0);
  }
}

}  // namespace onnx_prepack::runtime
