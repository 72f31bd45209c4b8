// Dropout (inference: the input itself and an all-true mask; training mode
// only with ratio 0, random dropping is refused), Det, and the window
// generators HannWindow, HammingWindow, BlackmanWindow (opset 17).
#include <cmath>
#include <cstring>
#include <numbers>
#include <type_traits>

#include "runtime/ops/math/common.h"

namespace onnx_prepack::runtime::math {
namespace {

// A scalar input known at plan time, as double; nullopt when absent.
Result<std::optional<double>> const_scalar(BuildContext& ctx, int i, std::string_view what) {
  if (!ctx.has_input(i)) return std::optional<double>();
  const Tensor* v = ctx.input_value(i);
  if (v == nullptr || v->numel() != 1)
    return ctx.needs_value(std::string(what) + " must be known before running (a scalar constant)");
  double d = 0;
  bool ok = true;
  if (v->dtype == kBool) {
    d = *v->as<uint8_t>() != 0;
  } else if (v->dtype == kFloat16 || v->dtype == kBfloat16) {  // Dropout's ratio: any float type
    const uint16_t bits = *v->as<uint16_t>();
    d = v->dtype == kFloat16 ? half_to_float(bits) : bfloat16_to_float(bits);
  } else {
    ok = dispatch_numeric(v->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      d = double(*v->as<T>());
    });
  }
  if (!ok)
    return ctx.error(std::string(what) + ": type " + dtype_name(v->dtype) + " is not supported");
  return std::optional<double>(d);
}

Result<std::unique_ptr<Kernel>> build_dropout(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  double ratio = ctx.attr_float("ratio", 0.5f);
  bool training = false;
  if (ctx.opset() >= 12) {
    OP_ASSIGN_OR_RETURN(auto r, const_scalar(ctx, 1, "ratio"));
    OP_ASSIGN_OR_RETURN(auto t, const_scalar(ctx, 2, "training_mode"));
    if (r) ratio = *r;
    training = t && *t != 0;
  }
  if (training && ratio != 0)
    return ctx.error("training-mode Dropout (random dropping) is refused; inference only");
  ctx.set_output(0, x->dtype, x->shape);
  ctx.set_alias(0, 0);
  if (ctx.output_count() > 1) {
    OP_ASSIGN_OR_RETURN(HostTensor mask,
                        HostTensor::try_allocate(kBool, x->shape, ctx.where() + ": mask"));
    if (mask.nbytes()) std::memset(mask.mutable_data(), 1, mask.nbytes());
    ctx.set_output_value(1, std::move(mask));
  }
  return std::unique_ptr<Kernel>();
}

// Determinant of each trailing [M, M] matrix: LU with partial pivoting in double.
Result<std::unique_ptr<Kernel>> build_det(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  size_t r = x->shape.size();
  if (r < 2 || x->shape[r - 1] != x->shape[r - 2])
    return ctx.error("input " + shape_string(x->shape) + " is not [*, M, M]");
  int64_t m = x->shape[r - 1];
  Shape out(x->shape.begin(), x->shape.end() - 2);
  ctx.set_output(0, x->dtype, out);
  int64_t batch = shape_numel(out);  // dims-lint: ok (X's leading dims)
  std::unique_ptr<Kernel> k;
  if (!dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        k = make_kernel([m, batch](const KernelIO& io) {
          const T* in = static_cast<const T*>(io.in[0]);
          T* o = static_cast<T*>(io.out[0]);
          // M * M: X's last two dims.
          std::vector<double> a(size_t(m * m));  // dims-lint: ok
          for (int64_t b = 0; b < batch; ++b) {
            // dims-lint: ok (X's dims)
            for (int64_t i = 0; i < m * m; ++i) a[size_t(i)] = double(in[b * m * m + i]);
            double det = 1;
            for (int64_t c = 0; c < m && det != 0; ++c) {
              int64_t p = c;
              for (int64_t i = c + 1; i < m; ++i)
                if (std::fabs(a[size_t(i * m + c)]) > std::fabs(a[size_t(p * m + c)])) p = i;
              if (a[size_t(p * m + c)] == 0) {
                det = 0;
                break;
              }
              if (p != c) {
                for (int64_t j = 0; j < m; ++j)
                  std::swap(a[size_t(p * m + j)], a[size_t(c * m + j)]);
                det = -det;
              }
              double piv = a[size_t(c * m + c)];
              det *= piv;
              for (int64_t i = c + 1; i < m; ++i) {
                double f = a[size_t(i * m + c)] / piv;
                for (int64_t j = c; j < m; ++j) a[size_t(i * m + j)] -= f * a[size_t(c * m + j)];
              }
            }
            o[b] = T(det);
          }
        });
      }))
    return unsupported_type(ctx, x->dtype);
  return k;
}

enum class Window { kHann, kHamming, kBlackman };

template <Window w>
Result<std::unique_ptr<Kernel>> build_window(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(auto size_v, ctx.const_ints(0, "size"));
  // onnx's inference of the window operators requires size > 0.
  if (size_v.size() != 1 || size_v[0] <= 0 || size_v[0] > (int64_t(1) << 32))
    return ctx.error("size must be a positive scalar, got " +
                     (size_v.size() == 1 ? std::to_string(size_v[0]) : std::string("a list")));
  int64_t n = size_v[0];
  int32_t dt = int32_t(ctx.attr_int("output_datatype", kFloat));
  bool periodic = ctx.attr_int("periodic", 1) != 0;
  double den = double(periodic ? n : n - 1);
  OP_ASSIGN_OR_RETURN(HostTensor out, HostTensor::try_allocate(dt, {n}, ctx.where() + ": output"));
  bool ok = dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out.mutable_data());
    for (int64_t i = 0; i < n; ++i) {
      // As the ONNX function body computes it: a symmetric window of size 1 has
      // 0 * (2 pi / 0), NaN (ORT agrees).
      double a = double(i) * (2 * std::numbers::pi / den);
      double v;
      if constexpr (w == Window::kHann) v = 0.5 - 0.5 * std::cos(a);
      if constexpr (w == Window::kHamming) v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(a);
      if constexpr (w == Window::kBlackman) v = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
      if constexpr (std::is_integral_v<T>) {
        o[i] = std::isnan(v) ? T(0) : T(v);  // NaN has no integer value
      } else {
        o[i] = T(v);
      }
    }
  });
  if (!ok) return unsupported_type(ctx, dt);
  ctx.set_output_value(0, std::move(out));
  return std::unique_ptr<Kernel>();
}

}  // namespace

// The builders math/registry.cc lists (math_ops.h).
Result<std::unique_ptr<Kernel>> build_dropout_op(BuildContext& ctx) { return build_dropout(ctx); }
Result<std::unique_ptr<Kernel>> build_det_op(BuildContext& ctx) { return build_det(ctx); }
Result<std::unique_ptr<Kernel>> build_hann_window_op(BuildContext& ctx) {
  return build_window<Window::kHann>(ctx);
}
Result<std::unique_ptr<Kernel>> build_hamming_window_op(BuildContext& ctx) {
  return build_window<Window::kHamming>(ctx);
}
Result<std::unique_ptr<Kernel>> build_blackman_window_op(BuildContext& ctx) {
  return build_window<Window::kBlackman>(ctx);
}

}  // namespace onnx_prepack::runtime::math
