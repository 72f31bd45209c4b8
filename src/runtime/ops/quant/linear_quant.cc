// DequantizeLinear, QuantizeLinear (opsets 10 to 21: per tensor, per axis,
// blocked along an axis; 8- and 16-bit integers) and DynamicQuantizeLinear.
// Rounding is to nearest even, like ONNX Runtime (std::nearbyint under the
// default rounding mode), followed by saturation to the integer type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/vec_math/vec_quant.h"
#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/quant/quant_ops.h"

namespace onnx_prepack::runtime {
namespace {

bool is_quant_int(int32_t t) {
  return t == kInt8 || t == kUint8 || t == kInt16 || t == kUint16 || t == kInt32;
}
bool is_real(int32_t t) { return t == kFloat || t == kFloat16 || t == kBfloat16; }

float load_real(int32_t t, const void* p, int64_t i) {
  if (t == kFloat) return static_cast<const float*>(p)[i];
  const uint16_t h = static_cast<const uint16_t*>(p)[i];
  return t == kFloat16 ? half_to_float(h) : bfloat16_to_float(h);
}
void store_real(int32_t t, void* p, int64_t i, float v) {
  if (t == kFloat) {
    static_cast<float*>(p)[i] = v;
  } else {
    static_cast<uint16_t*>(p)[i] = t == kFloat16 ? float_to_half(v) : float_to_bfloat16(v);
  }
}

int64_t load_int(int32_t t, const void* p, int64_t i) {
  int64_t v = 0;
  dispatch_numeric(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = int64_t(static_cast<const T*>(p)[i]);
  });
  return v;
}

template <typename T>
void store_saturated(void* p, int64_t i, double v) {
  const double lo = double(std::numeric_limits<T>::lowest());
  const double hi = double(std::numeric_limits<T>::max());
  static_cast<T*>(p)[i] = T(std::clamp(v, lo, hi));
}
void store_int(int32_t t, void* p, int64_t i, double v) {
  dispatch_numeric(t, [&](auto tag) { store_saturated<typename decltype(tag)::type>(p, i, v); });
}

// Where the scale (and zero point) of each element of x is: x is viewed as
// [outer, axis_dim, inner]; the parameter index is
// outer * (axis_dim / block) * inner + (a / block) * inner + inner_index for
// blocked, a for per-axis, 0 for per-tensor.
struct ParamMap {
  enum Kind { kTensor, kAxis, kBlocked } kind = kTensor;
  int64_t axis_dim = 1, inner = 1, block = 1, param_axis = 1;
  int64_t index(int64_t i) const {
    if (kind == kTensor) return 0;
    const int64_t a = (i / inner) % axis_dim;
    if (kind == kAxis) return a;
    const int64_t outer = i / (inner * axis_dim);
    return (outer * param_axis + a / block) * inner + i % inner;
  }
};

Result<ParamMap> param_map(const BuildContext& ctx, const Shape& x, const Shape& scale) {
  ParamMap m;
  const int64_t block = ctx.attr_int("block_size", 0);
  if (block < 0) return ctx.error("block_size " + std::to_string(block) + " is negative");
  if (checked_numel(scale) == 1 && scale.size() <= 1 && block == 0) return m;
  OP_ASSIGN_OR_RETURN(int64_t axis,
                      normalize_axis(ctx.attr_int("axis", 1), int64_t(x.size()), ctx));
  m.axis_dim = x[size_t(axis)];
  for (size_t d = size_t(axis) + 1; d < x.size(); ++d) m.inner *= x[d];
  if (block == 0) {
    if (scale.size() != 1 || scale[0] != m.axis_dim) {
      return ctx.error("per-axis scale " + shape_string(scale) + " must be [" +
                       std::to_string(m.axis_dim) + "] (axis " + std::to_string(axis) + ")");
    }
    m.kind = ParamMap::kAxis;
    return m;
  }
  Shape want = x;
  want[size_t(axis)] = ceil_div(m.axis_dim, block);
  if (scale != want) {
    return ctx.error("blocked scale " + shape_string(scale) + " must be " + shape_string(want) +
                     " (block_size " + std::to_string(block) + ")");
  }
  m.kind = ParamMap::kBlocked;
  m.block = block;
  m.param_axis = want[size_t(axis)];
  return m;
}

Result<std::unique_ptr<Kernel>> build_dequantize(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* s, ctx.require_input(1));
  if (!is_quant_int(x->dtype)) {
    return ctx.error("x of type " + dtype_name(x->dtype) + " is not supported");
  }
  if (!is_real(s->dtype)) return ctx.error("x_scale must be float, float16 or bfloat16");
  const bool has_zp = ctx.has_input(2);
  if (has_zp && (ctx.input(2).dtype != x->dtype || ctx.input(2).shape != s->shape)) {
    if (!(ctx.input(2).dtype == x->dtype && checked_numel(ctx.input(2).shape) == 1 &&
          checked_numel(s->shape) == 1)) {
      return ctx.error("x_zero_point must have x's type and x_scale's shape");
    }
  }
  OP_ASSIGN_OR_RETURN(ParamMap map, param_map(ctx, x->shape, s->shape));
  ctx.set_output(0, s->dtype, x->shape);
  const int32_t xt = x->dtype, st = s->dtype;
  const int64_t n = checked_numel(x->shape);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = map.index(i);
      const int64_t zp = has_zp ? load_int(xt, io.in[2], p) : 0;
      const float diff = float(load_int(xt, io.in[0], i) - zp);
      store_real(st, io.out[0], i, diff * load_real(st, io.in[1], p));
    }
  }));
}

Result<std::unique_ptr<Kernel>> build_quantize(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* s, ctx.require_input(1));
  if (!is_real(x->dtype) || !is_real(s->dtype)) {
    return ctx.error("x and y_scale must be float, float16 or bfloat16");
  }
  const bool has_zp = ctx.has_input(2);
  if (has_zp && ctx.input(2).model_dtype != kUndefined) {
    // A 4-bit zero point is held widened; its output would saturate as 8-bit.
    return ctx.error("output type " + dtype_name(ctx.input(2).model_dtype) + " is not supported");
  }
  const int64_t out_attr = ctx.attr_int("output_dtype", kUndefined);
  if (has_zp && out_attr != kUndefined && out_attr != ctx.input(2).dtype) {
    return ctx.error("output_dtype " + dtype_name(int32_t(out_attr)) +
                     " conflicts with the zero point's type " + dtype_name(ctx.input(2).dtype));
  }
  // The zero point pairs with the scale element for element (as in DequantizeLinear); a
  // scalar of one element in either form is the per-tensor case.
  if (has_zp && ctx.input(2).shape != s->shape &&
      !(checked_numel(ctx.input(2).shape) == 1 && checked_numel(s->shape) == 1)) {
    return ctx.error("y_zero_point " + shape_string(ctx.input(2).shape) +
                     " must have y_scale's shape " + shape_string(s->shape));
  }
  int32_t yt = has_zp ? ctx.input(2).dtype : int32_t(ctx.attr_int("output_dtype", kUint8));
  if (yt == kUndefined) yt = kUint8;
  if (!is_quant_int(yt) || yt == kInt32) {
    return ctx.error("output type " + dtype_name(yt) + " is not supported");
  }
  OP_ASSIGN_OR_RETURN(ParamMap map, param_map(ctx, x->shape, s->shape));
  ctx.set_output(0, yt, x->shape);
  const int32_t xt = x->dtype, st = s->dtype;
  const int64_t n = checked_numel(x->shape);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = map.index(i);
      const double zp = has_zp ? double(load_int(yt, io.in[2], p)) : 0.0;
      const float q = std::nearbyint(load_real(xt, io.in[0], i) / load_real(st, io.in[1], p));
      store_int(yt, io.out[0], i, double(q) + zp);
    }
  }));
}

Result<std::unique_ptr<Kernel>> build_dynamic_quantize(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->dtype != kFloat) return ctx.error("x must be float");
  ctx.set_output(0, kUint8, x->shape);
  ctx.set_output(1, kFloat, {});
  ctx.set_output(2, kUint8, {});
  const int64_t n = checked_numel(x->shape);
  // Vectorised (kernels/vec_math/vec_quant.h), bitwise the scalar definition: the range does
  // not depend on how it is split, the quantize pass is elementwise.
  const kernels::vec::QuantKernels& qk = kernels::vec::host_quant_kernels();
  return std::unique_ptr<Kernel>(new FnKernel([n, &qk](const KernelIO& io) {
    const float* xp = static_cast<const float*>(io.in[0]);
    const size_t workers = io.pool ? io.pool->size() : 1;
    const int64_t chunks =
        workers > 1 ? std::min<int64_t>(int64_t(workers) * 4, (n + kMinChunk - 1) / kMinChunk) : 1;
    float lo = 0, hi = 0;
    if (chunks > 1) {
      std::vector<float> los(size_t(chunks), 0.0f), his(size_t(chunks), 0.0f);
      io.pool->parallel_for(size_t(chunks), [&](size_t c, size_t) {
        const int64_t b = n * int64_t(c) / chunks, e = n * int64_t(c + 1) / chunks;
        qk.minmax(xp + b, size_t(e - b), &los[c], &his[c]);
      });
      for (int64_t c = 0; c < chunks; ++c) {  // minps / maxps order, as within a chunk
        lo = los[size_t(c)] < lo ? los[size_t(c)] : lo;
        hi = his[size_t(c)] > hi ? his[size_t(c)] : hi;
      }
    } else {
      qk.minmax(xp, size_t(n), &lo, &hi);
    }
    const kernels::vec::DynamicQuantParams q = kernels::vec::dynamic_quant_params(lo, hi);
    auto* y = static_cast<uint8_t*>(io.out[0]);
    parallel_range(io.pool, n, kMinChunk, [&](int64_t b, int64_t e) {
      qk.quantize_u8(xp + b, y + b, size_t(e - b), q.scale, q.zp);
    });
    *static_cast<float*>(io.out[1]) = q.scale;
    *static_cast<uint8_t*>(io.out[2]) = uint8_t(q.zp);
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_dequantize_linear(BuildContext& ctx) {
  return build_dequantize(ctx);
}
Result<std::unique_ptr<Kernel>> build_quantize_linear(BuildContext& ctx) {
  return build_quantize(ctx);
}
Result<std::unique_ptr<Kernel>> build_dynamic_quantize_linear(BuildContext& ctx) {
  return build_dynamic_quantize(ctx);
}

}  // namespace onnx_prepack::runtime
