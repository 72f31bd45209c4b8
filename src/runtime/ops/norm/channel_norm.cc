// BatchNormalization (inference, opsets 1-15), InstanceNormalization,
// GroupNormalization (opset 18: per-group scale/bias, 21: per-channel) and LRN.
// Float and double (float16/bfloat16 through float, half_adapter.cc), one
// template per operator: statistics in double; per-element work split over
// (image, channel) planes.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/conv/conv_ops.h"
#include "runtime/ops/conv/spatial.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/norm/norm_ops.h"

namespace onnx_prepack::runtime {
namespace {

int64_t plane_of(const Shape& s) {
  int64_t p = 1;
  for (size_t i = 2; i < s.size(); ++i) p *= s[i];
  return p;
}

// Inputs [0, count) all float or all double (ONNX's T; BatchNormalization-15's T1 and T2 of
// another float type than X are refused, as ORT has no kernel for them).
Status require_float_or_double(BuildContext& ctx, int count) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  for (int i = 0; i < count; ++i) {
    OP_ASSIGN_OR_RETURN(const ValueDesc* v, ctx.require_input(i));
    if (v->dtype != kFloat && v->dtype != kDouble) {
      return ctx.error("input " + std::to_string(i) + " is " + dtype_name(v->dtype) +
                       ", only float and double are supported");
    }
    if (v->dtype != x->dtype) {
      return ctx.error("input " + std::to_string(i) + " is " + dtype_name(v->dtype) + ", X is " +
                       dtype_name(x->dtype) + ": mixed types are not supported");
    }
  }
  return ok_status();
}

// make(TypeTag<T>{}) for X's type, float or double (require_float_or_double checked it).
template <typename Make>
std::unique_ptr<Kernel> by_type(int32_t dtype, Make&& make) {
  return dtype == kDouble ? make(TypeTag<double>{}) : make(TypeTag<float>{});
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_batch_norm(BuildContext& ctx) {
  OP_RETURN_IF_ERROR(require_float_or_double(ctx, 5));
  const ValueDesc& x = ctx.input(0);
  if (x.shape.size() < 2) return ctx.error("X must have rank >= 2, got " + shape_string(x.shape));
  if (ctx.opset() >= 14 && ctx.attr_int("training_mode", 0) != 0) {
    return ctx.error("training_mode 1 is a training operator, not supported");
  }
  for (int i = 1; i < ctx.output_count(); ++i) {
    if (!ctx.node().output(i).empty()) {
      return ctx.error("running statistics outputs (training) are not supported");
    }
  }
  const bool spatial = ctx.opset() >= 9 || ctx.attr_int("spatial", 1) != 0;
  const int64_t n = x.shape[0], c = x.shape[1], plane = plane_of(x.shape);
  // Per-channel parameters of shape [C], or [C, spatial...] when spatial == 0.
  const int64_t per = spatial ? c : c * plane;
  for (int i = 1; i < 5; ++i) {
    if (shape_numel(ctx.input(i).shape) != per) {
      return ctx.error("input " + std::to_string(i) + " " + shape_string(ctx.input(i).shape) +
                       " must hold " + std::to_string(per) + " values");
    }
  }
  const float eps = ctx.attr_float("epsilon", 1e-5f);
  ctx.set_output(0, x.dtype, x.shape);
  const int64_t inner = spatial ? plane : 1;
  // In X's type: y = x * s + (b - mean * s), s = scale / sqrt(var + eps).
  return by_type(x.dtype, [=](auto tag) {
    using T = typename decltype(tag)::type;
    return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
      const T* xp = static_cast<const T*>(io.in[0]);
      const T* scale = static_cast<const T*>(io.in[1]);
      const T* b = static_cast<const T*>(io.in[2]);
      const T* mean = static_cast<const T*>(io.in[3]);
      const T* var = static_cast<const T*>(io.in[4]);
      T* y = static_cast<T*>(io.out[0]);
      const int64_t groups = n * per;  // runs of `inner` elements sharing a parameter
      for_each_task(io.pool, size_t(std::min<int64_t>(groups, 4096)), [&](size_t t, size_t) {
        const int64_t tasks = std::min<int64_t>(groups, 4096);
        for (int64_t gi = int64_t(t) * groups / tasks; gi < (int64_t(t) + 1) * groups / tasks;
             ++gi) {
          const int64_t ch = gi % per;
          const T s = scale[ch] / std::sqrt(var[ch] + T(eps));
          const T sh = b[ch] - mean[ch] * s;
          const T* xr = xp + gi * inner;
          T* yr = y + gi * inner;
          for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i] * s + sh;
        }
      });
    }));
  });
}

Result<std::unique_ptr<Kernel>> build_instance_norm(BuildContext& ctx) {
  OP_RETURN_IF_ERROR(require_float_or_double(ctx, 3));
  const ValueDesc& x = ctx.input(0);
  if (x.shape.size() < 3) return ctx.error("X must have rank >= 3, got " + shape_string(x.shape));
  const int64_t n = x.shape[0], c = x.shape[1], plane = plane_of(x.shape);
  for (int i = 1; i < 3; ++i) {
    if (ctx.input(i).shape != Shape{c}) {
      return ctx.error("input " + std::to_string(i) + " must be [" + std::to_string(c) + "]");
    }
  }
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  ctx.set_output(0, x.dtype, x.shape);
  return by_type(x.dtype, [=](auto tag) {
    using T = typename decltype(tag)::type;
    return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
      const T* xp = static_cast<const T*>(io.in[0]);
      const T* scale = static_cast<const T*>(io.in[1]);
      const T* b = static_cast<const T*>(io.in[2]);
      T* y = static_cast<T*>(io.out[0]);
      for_each_task(io.pool, size_t(n * c), [&](size_t t, size_t) {
        const T* xr = xp + int64_t(t) * plane;
        T* yr = y + int64_t(t) * plane;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < plane; ++i) sum += xr[i];
        const double mean = plane ? sum / double(plane) : 0.0;
        for (int64_t i = 0; i < plane; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
        const double var = plane ? sq / double(plane) : 0.0;
        const int64_t ch = int64_t(t) % c;
        // (x - mean) * s + b, not x * s + (b - mean * s): with a small variance s is large and
        // the second form cancels catastrophically (difffuzz: a lone 65504 came out 0.5 off).
        const double s = double(scale[ch]) / std::sqrt(var + eps);
        for (int64_t i = 0; i < plane; ++i) yr[i] = T((double(xr[i]) - mean) * s + b[ch]);
      });
    }));
  });
}

Result<std::unique_ptr<Kernel>> build_group_norm(BuildContext& ctx) {
  OP_RETURN_IF_ERROR(require_float_or_double(ctx, 3));
  const ValueDesc& x = ctx.input(0);
  // Rank 2 (N x C) too: ONNX's function reshapes X to N x num_groups x -1 (plane 1 here).
  if (x.shape.size() < 2) return ctx.error("X must have rank >= 2, got " + shape_string(x.shape));
  const int64_t n = x.shape[0], c = x.shape[1], plane = plane_of(x.shape);
  const int64_t groups = ctx.attr_int("num_groups", 0);
  if (groups <= 0 || c % groups != 0) {
    return ctx.error("num_groups " + std::to_string(groups) + " does not divide " +
                     std::to_string(c) + " channels");
  }
  const int64_t per_param = ctx.opset() >= 21 ? c : groups;
  for (int i = 1; i < 3; ++i) {
    if (shape_numel(ctx.input(i).shape) != per_param) {
      return ctx.error("input " + std::to_string(i) + " must hold " + std::to_string(per_param) +
                       " values");
    }
  }
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  const int64_t cg = c / groups;
  ctx.set_output(0, x.dtype, x.shape);
  return by_type(x.dtype, [=](auto tag) {
    using T = typename decltype(tag)::type;
    return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
      const T* xp = static_cast<const T*>(io.in[0]);
      const T* scale = static_cast<const T*>(io.in[1]);
      const T* b = static_cast<const T*>(io.in[2]);
      T* y = static_cast<T*>(io.out[0]);
      for_each_task(io.pool, size_t(n * groups), [&](size_t t, size_t) {
        const int64_t len = cg * plane;
        const T* xr = xp + int64_t(t) * len;
        T* yr = y + int64_t(t) * len;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < len; ++i) sum += xr[i];
        const double mean = len ? sum / double(len) : 0.0;
        for (int64_t i = 0; i < len; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
        const double inv = 1.0 / std::sqrt((len ? sq / double(len) : 0.0) + eps);
        const int64_t gi = int64_t(t) % groups;
        for (int64_t k = 0; k < cg; ++k) {
          const int64_t pi = per_param == c ? gi * cg + k : gi;
          const double s = double(scale[pi]) * inv;  // centred first, as InstanceNormalization
          for (int64_t i = 0; i < plane; ++i)
            yr[k * plane + i] = T((double(xr[k * plane + i]) - mean) * s + b[pi]);
        }
      });
    }));
  });
}

Result<std::unique_ptr<Kernel>> build_lrn(BuildContext& ctx) {
  OP_RETURN_IF_ERROR(require_float_or_double(ctx, 1));
  const ValueDesc& x = ctx.input(0);
  if (x.shape.size() < 3) return ctx.error("X must have rank >= 3, got " + shape_string(x.shape));
  const int64_t size = ctx.attr_int("size", 0);
  if (size <= 0 || size % 2 == 0)  // odd, as ONNX Runtime requires
    return ctx.error("size must be positive and odd, got " + std::to_string(size));
  const float alpha = ctx.attr_float("alpha", 1e-4f), beta = ctx.attr_float("beta", 0.75f),
              bias = ctx.attr_float("bias", 1.0f);
  const int64_t n = x.shape[0], c = x.shape[1], plane = plane_of(x.shape);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  ctx.set_output(0, x.dtype, x.shape);
  return by_type(x.dtype, [=](auto tag) {
    using T = typename decltype(tag)::type;
    return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
      const T* xp = static_cast<const T*>(io.in[0]);
      T* y = static_cast<T*>(io.out[0]);
      for_each_task(io.pool, size_t(n * c), [&](size_t t, size_t) {
        const int64_t ni = int64_t(t) / c, ch = int64_t(t) % c;
        const int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min(c - 1, ch + after);
        for (int64_t i = 0; i < plane; ++i) {
          double sq = 0;
          for (int64_t k = lo; k <= hi; ++k) {
            const double v = xp[(ni * c + k) * plane + i];
            sq += v * v;
          }
          y[int64_t(t) * plane + i] =
              T(xp[int64_t(t) * plane + i] / std::pow(bias + alpha / double(size) * sq, beta));
        }
      });
    }));
  });
}

}  // namespace onnx_prepack::runtime
