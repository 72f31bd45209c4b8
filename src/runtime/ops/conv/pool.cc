// MaxPool (with Indices, storage_order, ceil_mode, dilations), AveragePool
// (count_include_pad, ceil_mode, dilations), LpPool and the Global* pools.
// 1-D to 3-D; work split over (image, channel) planes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/f32_conv/f32_conv.h"
#include "runtime/ops/conv/conv_ops.h"
#include "runtime/ops/conv/spatial.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolPlan {
  kernels::ConvGeometry g;  // m == c, group unused
  bool include_pad = false;
  int64_t p = 2;
  int64_t storage_order = 0;
  int rank = 2;
};

// Calls visit(in_offset, d, h, w) for every tap of output (od, oh, ow) inside
// the input; returns the taps inside the padded window (for count_include_pad).
template <typename Visit>
int64_t for_window(const kernels::ConvGeometry& g, int64_t od, int64_t oh, int64_t ow,
                   Visit&& visit) {
  int64_t padded = 1;
  int64_t lo[3], hi[3];
  const int64_t o[3] = {od, oh, ow};
  for (int i = 0; i < 3; ++i) {
    lo[i] = o[i] * g.stride[i] - g.pad_begin[i];
    // Taps inside [-pad_begin, in + pad_end).
    int64_t count = 0;
    for (int64_t k = 0; k < g.kernel[i]; ++k) {
      const int64_t x = lo[i] + k * g.dilation[i];
      if (x < g.in[i] + g.pad_end[i]) ++count;
    }
    padded *= count;
    hi[i] = 0;
  }
  (void)hi;
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    const int64_t d = lo[0] + kd * g.dilation[0];
    if (d < 0 || d >= g.in[0]) continue;
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      const int64_t h = lo[1] + kh * g.dilation[1];
      if (h < 0 || h >= g.in[1]) continue;
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t w = lo[2] + kw * g.dilation[2];
        if (w < 0 || w >= g.in[2]) continue;
        visit((d * g.in[1] + h) * g.in[2] + w, d, h, w);
      }
    }
  }
  return padded;
}

// 1-D/2-D windows without dilation: the window's clipped ranges come from two
// subtractions instead of a per-tap test, the taps are visited in the same
// order as for_window, so the results are the same bits.
bool plain_2d(const kernels::ConvGeometry& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.dilation[1] == 1 && g.dilation[2] == 1;
}

// One output's window of a plain_2d pool: rows [hs, he) and columns [ws, we)
// inside the input, and the taps inside the padded input (count_include_pad).
struct Window2d {
  int64_t hs, he, ws, we, padded;
};

// y[plane][oh][ow] = reduce(plane input, window) for every plane and output.
template <typename T, typename Reduce>
void pool_2d(const kernels::ConvGeometry& g, const T* x, T* y, base::ThreadPool* pool,
             Reduce&& reduce) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  for_each_task(pool, size_t(g.n * g.c), [&](size_t task, size_t) {
    const T* xp = x + int64_t(task) * H * W;
    T* yp = y + int64_t(task) * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * g.stride[1] - g.pad_begin[1];
      const int64_t ph = std::clamp<int64_t>(H + g.pad_end[1] - h0, 0, g.kernel[1]);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = ow * g.stride[2] - g.pad_begin[2];
        const int64_t pw = std::clamp<int64_t>(W + g.pad_end[2] - w0, 0, g.kernel[2]);
        const Window2d win{std::max<int64_t>(h0, 0), std::min(h0 + g.kernel[1], H),
                           std::max<int64_t>(w0, 0), std::min(w0 + g.kernel[2], W), ph * pw};
        yp[oh * OW + ow] = reduce(xp, W, win);
      }
    }
  });
}

// Float rows of a plain_2d pool: the outputs whose window lies inside the input
// across the width go to a row kernel (f32_conv.h; the same taps in the same
// order as `reduce`, so the same bits), the borders and the rows whose window
// has no input row to `reduce`.
template <typename Reduce, typename Row>
void pool_2d_rows(const kernels::ConvGeometry& g, const float* x, float* y, base::ThreadPool* pool,
                  Reduce&& reduce, Row&& row) {
  const int64_t H = g.in[1], W = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t KH = g.kernel[1], KW = g.kernel[2], SW = g.stride[2], PW = g.pad_begin[2];
  // Interior columns [lo, hi): w0 >= 0 and w0 + KW <= W.
  const int64_t hi = std::clamp<int64_t>(W + PW - KW >= 0 ? (W + PW - KW) / SW + 1 : 0, 0, OW);
  const int64_t lo = std::min<int64_t>((PW + SW - 1) / SW, hi);
  for_each_task(pool, size_t(g.n * g.c), [&](size_t task, size_t) {
    const float* xp = x + int64_t(task) * H * W;
    float* yp = y + int64_t(task) * OH * OW;
    std::vector<const float*> src(static_cast<size_t>(KH));
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * g.stride[1] - g.pad_begin[1];
      const int64_t ph = std::clamp<int64_t>(H + g.pad_end[1] - h0, 0, KH);
      const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h0 + KH, H);
      auto scalar = [&](int64_t ow) {
        const int64_t w0 = ow * SW - PW;
        const int64_t pw = std::clamp<int64_t>(W + g.pad_end[2] - w0, 0, KW);
        const Window2d win{hs, he, std::max<int64_t>(w0, 0), std::min(w0 + KW, W), ph * pw};
        yp[oh * OW + ow] = reduce(xp, W, win);
      };
      const int64_t rlo = he > hs ? lo : OW, rhi = he > hs ? hi : OW;
      for (int64_t ow = 0; ow < rlo; ++ow) scalar(ow);
      if (rhi > rlo) {
        for (int64_t r = hs; r < he; ++r) src[size_t(r - hs)] = xp + r * W + rlo * SW - PW;
        row(yp + oh * OW + rlo, size_t(rhi - rlo), src.data(), size_t(he - hs), ph);
      }
      for (int64_t ow = std::max(rlo, rhi); ow < OW; ++ow) scalar(ow);
    }
  });
}

template <typename T>
T max_reduce_2d(const T* xp, int64_t W, const Window2d& win) {
  T best = std::numeric_limits<T>::lowest();
  if constexpr (std::numeric_limits<T>::has_infinity) best = -std::numeric_limits<T>::infinity();
  bool first = true;  // the first tap is taken even when NaN, like max_pool
  for (int64_t h = win.hs; h < win.he; ++h) {
    for (int64_t w = win.ws; w < win.we; ++w) {
      if (first || xp[h * W + w] > best) best = xp[h * W + w];
      first = false;
    }
  }
  return best;
}

template <typename T>
T avg_reduce_2d(const T* xp, int64_t W, const Window2d& win, bool include_pad) {
  double sum = 0;
  for (int64_t h = win.hs; h < win.he; ++h) {
    for (int64_t w = win.ws; w < win.we; ++w) sum += double(xp[h * W + w]);
  }
  const int64_t valid =
      std::max<int64_t>(win.he - win.hs, 0) * std::max<int64_t>(win.we - win.ws, 0);
  const int64_t div = include_pad ? win.padded : valid;
  return T(div > 0 ? sum / double(div) : 0.0);
}

template <typename T>
void max_pool_2d(const kernels::ConvGeometry& g, const T* x, T* y, base::ThreadPool* pool,
                 const kernels::PoolRowKernels* rows) {
  if constexpr (std::is_same_v<T, float>) {
    if (rows != nullptr) {
      const size_t kw = size_t(g.kernel[2]), sw = size_t(g.stride[2]);
      return pool_2d_rows(g, x, y, pool, max_reduce_2d<float>,
                          [&](float* out, size_t n, const float* const* src, size_t nrows,
                              int64_t) { rows->max(out, n, src, nrows, kw, sw); });
    }
  }
  pool_2d(g, x, y, pool, max_reduce_2d<T>);
}

template <typename T>
void avg_pool_2d(const PoolPlan& pl, const T* x, T* y, base::ThreadPool* pool,
                 const kernels::PoolRowKernels* rows) {
  const bool include_pad = pl.include_pad;
  auto reduce = [include_pad](const T* xp, int64_t W, const Window2d& win) {
    return avg_reduce_2d(xp, W, win, include_pad);
  };
  if constexpr (std::is_same_v<T, float>) {
    if (rows != nullptr) {
      const int64_t kw = pl.g.kernel[2];
      const size_t sw = size_t(pl.g.stride[2]);
      return pool_2d_rows(
          pl.g, x, y, pool, reduce,
          [&](float* out, size_t n, const float* const* src, size_t nrows, int64_t ph) {
            const int64_t div = include_pad ? ph * kw : int64_t(nrows) * kw;
            rows->avg(out, n, src, nrows, size_t(kw), sw, double(div));
          });
    }
  }
  pool_2d(pl.g, x, y, pool, reduce);
}

template <typename T>
void max_pool(const PoolPlan& pl, const T* x, T* y, int64_t* idx, base::ThreadPool* pool,
              const kernels::PoolRowKernels* rows = nullptr) {
  const auto& g = pl.g;
  if (idx == nullptr && plain_2d(g)) return max_pool_2d(g, x, y, pool, rows);
  const int64_t in_plane = g.in_pixels(), out_plane = g.out_pixels();
  for_each_task(pool, size_t(g.n * g.c), [&](size_t task, size_t) {
    const T* xp = x + int64_t(task) * in_plane;
    int64_t o = int64_t(task) * out_plane;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
          T best = std::numeric_limits<T>::lowest();
          if constexpr (std::numeric_limits<T>::has_infinity) {
            best = -std::numeric_limits<T>::infinity();
          }
          int64_t arg = -1, ad = 0, ah = 0, aw = 0;
          for_window(g, od, oh, ow, [&](int64_t off, int64_t d, int64_t h, int64_t w) {
            if (arg < 0 || xp[off] > best) {
              best = xp[off];
              arg = off;
              ad = d, ah = h, aw = w;
            }
          });
          y[o] = best;
          if (idx != nullptr) {
            int64_t flat = arg < 0 ? 0 : arg;
            if (pl.storage_order == 1 && arg >= 0) flat = (aw * g.in[1] + ah) * g.in[0] + ad;
            idx[o] = int64_t(task) * in_plane + flat;
          }
        }
      }
    }
  });
}

template <typename T>
void avg_lp_pool(const PoolPlan& pl, PoolKind kind, const T* x, T* y, base::ThreadPool* pool,
                 const kernels::PoolRowKernels* rows = nullptr) {
  const auto& g = pl.g;
  if (kind == PoolKind::kAverage && plain_2d(g)) return avg_pool_2d(pl, x, y, pool, rows);
  const int64_t in_plane = g.in_pixels(), out_plane = g.out_pixels();
  const double p = double(pl.p);
  for_each_task(pool, size_t(g.n * g.c), [&](size_t task, size_t) {
    const T* xp = x + int64_t(task) * in_plane;
    int64_t o = int64_t(task) * out_plane;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
          double sum = 0;
          int64_t valid = 0;
          const int64_t padded =
              for_window(g, od, oh, ow, [&](int64_t off, int64_t, int64_t, int64_t) {
                const double v = double(xp[off]);
                if (kind == PoolKind::kLp) {
                  sum += pl.p == 2 ? v * v : (pl.p == 1 ? std::fabs(v) : std::pow(std::fabs(v), p));
                } else {
                  sum += v;
                }
                ++valid;
              });
          if (kind == PoolKind::kLp) {
            y[o] = T(pl.p == 2 ? std::sqrt(sum) : (pl.p == 1 ? sum : std::pow(sum, 1.0 / p)));
          } else {
            const int64_t div = pl.include_pad ? padded : valid;
            y[o] = T(div > 0 ? sum / double(div) : 0.0);
          }
        }
      }
    }
  });
}

Result<PoolPlan> read_pool(BuildContext& ctx, const ValueDesc& x, PoolKind kind, bool global) {
  PoolPlan pl;
  if (x.shape.size() < 3 || x.shape.size() > 5) {
    return ctx.error("X " + shape_string(x.shape) + " must have rank 3, 4 or 5");
  }
  const size_t r = x.shape.size() - 2;
  Window win;
  if (global) {
    win.rank = int(r);
    win.in.assign(x.shape.begin() + 2, x.shape.end());
    win.kernel = win.in;
    win.stride.assign(r, 1);
    win.dilation.assign(r, 1);
    win.pad_begin.assign(r, 0);
    win.pad_end.assign(r, 0);
    win.out.assign(r, 1);
    for (int64_t d : win.in) {
      if (d == 0) return ctx.error("global pooling over an empty spatial dim");
    }
  } else {
    auto ks = ctx.attr_ints("kernel_shape");
    if (!ks || ks->size() != r) {
      return ctx.error("kernel_shape must list " + std::to_string(r) + " sizes");
    }
    const int op = ctx.opset();
    const bool has_ceil = (kind == PoolKind::kMax && op >= 10) ||
                          (kind == PoolKind::kAverage && op >= 10) ||
                          (kind == PoolKind::kLp && op >= 18);
    const bool has_dil = (kind == PoolKind::kMax && op >= 10) ||
                         (kind == PoolKind::kAverage && op >= 19) ||
                         (kind == PoolKind::kLp && op >= 18);
    const bool ceil = has_ceil && ctx.attr_int("ceil_mode", 0) != 0;
    OP_ASSIGN_OR_RETURN(win, read_window(ctx, x.shape, *ks, ceil, has_dil));
    // As ONNX Runtime: explicit pads smaller than the kernel (a window all
    // padding has no element to take).
    if (ctx.attr_string("auto_pad", "NOTSET") == "NOTSET") {
      for (size_t i = 0; i < r; ++i) {
        if (win.pad_begin[i] >= win.kernel[i] || win.pad_end[i] >= win.kernel[i])
          return ctx.error("pads " + std::to_string(win.pad_begin[i]) + " / " +
                           std::to_string(win.pad_end[i]) + " of spatial dim " + std::to_string(i) +
                           " must be smaller than kernel_shape " + std::to_string(win.kernel[i]));
      }
    }
  }
  pl.rank = int(r);
  pl.g = to_geometry(win, x.shape[0], x.shape[1], x.shape[1], 1);
  pl.include_pad = kind == PoolKind::kAverage && ctx.attr_int("count_include_pad", 0) != 0;
  pl.p = kind == PoolKind::kLp
             ? (ctx.opset() < 2 ? int64_t(ctx.attr_float("p", 2.0f)) : ctx.attr_int("p", 2))
             : 2;
  pl.storage_order = kind == PoolKind::kMax ? ctx.attr_int("storage_order", 0) : 0;
  if (pl.storage_order != 0 && pl.storage_order != 1)  // row major or column major
    return ctx.error("storage_order must be 0 or 1, got " + std::to_string(pl.storage_order));
  return pl;
}

Result<std::unique_ptr<Kernel>> build_pool(BuildContext& ctx, PoolKind kind, bool global) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(PoolPlan pl, read_pool(ctx, *x, kind, global));
  Shape out{x->shape[0], x->shape[1]};
  for (int i = 3 - pl.rank; i < 3; ++i) out.push_back(pl.g.out[i]);
  const int32_t dt = x->dtype;
  ctx.set_output(0, dt, out);
  const bool want_idx =
      kind == PoolKind::kMax && ctx.output_count() > 1 && !ctx.node().output(1).empty();
  if (want_idx) ctx.set_output(1, kInt64, out);
  // Float 2-D rows: the host's row kernels (every level gives the same bits).
  const kernels::PoolRowKernels rows = kernels::pool_row_select(device::host_isa_level());
  if (kind == PoolKind::kMax) {
    std::unique_ptr<Kernel> k;
    auto make = [&](auto tag) {
      using T = typename decltype(tag)::type;
      k.reset(new FnKernel([pl, want_idx, rows](const KernelIO& io) {
        max_pool<T>(pl, static_cast<const T*>(io.in[0]), static_cast<T*>(io.out[0]),
                    want_idx ? static_cast<int64_t*>(io.out[1]) : nullptr, io.pool, &rows);
      }));
    };
    switch (dt) {
      case kFloat:
        make(TypeTag<float>{});
        break;
      case kDouble:
        make(TypeTag<double>{});
        break;
      case kInt8:
        make(TypeTag<int8_t>{});
        break;
      case kUint8:
        make(TypeTag<uint8_t>{});
        break;
      default:
        return ctx.error("element type " + dtype_name(dt) + " is not supported");
    }
    return k;
  }
  if (dt == kFloat) {
    return std::unique_ptr<Kernel>(new FnKernel([pl, kind, rows](const KernelIO& io) {
      avg_lp_pool<float>(pl, kind, static_cast<const float*>(io.in[0]),
                         static_cast<float*>(io.out[0]), io.pool, &rows);
    }));
  }
  if (dt == kDouble) {
    return std::unique_ptr<Kernel>(new FnKernel([pl, kind](const KernelIO& io) {
      avg_lp_pool<double>(pl, kind, static_cast<const double*>(io.in[0]),
                          static_cast<double*>(io.out[0]), io.pool);
    }));
  }
  return ctx.error("element type " + dtype_name(dt) + " is not supported");
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_max_pool(BuildContext& c) {
  return build_pool(c, PoolKind::kMax, false);
}
Result<std::unique_ptr<Kernel>> build_average_pool(BuildContext& c) {
  return build_pool(c, PoolKind::kAverage, false);
}
Result<std::unique_ptr<Kernel>> build_lp_pool(BuildContext& c) {
  return build_pool(c, PoolKind::kLp, false);
}
Result<std::unique_ptr<Kernel>> build_global_average_pool(BuildContext& c) {
  return build_pool(c, PoolKind::kAverage, true);
}
Result<std::unique_ptr<Kernel>> build_global_max_pool(BuildContext& c) {
  return build_pool(c, PoolKind::kMax, true);
}
Result<std::unique_ptr<Kernel>> build_global_lp_pool(BuildContext& c) {
  return build_pool(c, PoolKind::kLp, true);
}

}  // namespace onnx_prepack::runtime
