// Pad: constant, reflect, edge and wrap modes; pads as an attribute (opset < 11)
// or an input, with optional axes (opset 18). Negative pads crop. Rows of the
// innermost dim are produced in parallel: the middle part is one copy.
#include <cstring>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Source coordinate of output coordinate `c - begin` in a dim of size n, or
// -1 for the constant fill.
inline int64_t source_coord(int64_t c, int64_t n, PadMode mode) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return c < 0 ? 0 : n - 1;
    case PadMode::kWrap:
      c %= n;
      return c < 0 ? c + n : c;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      int64_t period = 2 * (n - 1);
      c %= period;
      if (c < 0) c += period;
      return c >= n ? period - c : c;
    }
  }
  return -1;
}

// The fill value's bytes in the data type, from a float attribute (opset < 11).
Result<std::vector<uint8_t>> fill_from_float(BuildContext& ctx, int32_t dtype, double v) {
  std::vector<uint8_t> b(dtype_size(dtype), 0);
  if (dtype == kFloat16) {
    uint16_t h = float_to_half(float(v));
    std::memcpy(b.data(), &h, 2);
    return b;
  }
  if (dtype == kBfloat16) {
    uint16_t h = float_to_bfloat16(float(v));
    std::memcpy(b.data(), &h, 2);
    return b;
  }
  if (dtype == kBool) {
    b[0] = v != 0;
    return b;
  }
  bool ok = dispatch_numeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T t = T(v);
    std::memcpy(b.data(), &t, sizeof(T));
  });
  if (!ok) return ctx.error("type " + dtype_name(dtype) + " is not supported");
  return b;
}

}  // namespace

BuildResult build_pad(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, x->dtype));
  int64_t rank = int64_t(x->shape.size());
  size_t w = dtype_size(x->dtype);
  std::string mode_name = ctx.attr_string("mode", "constant");
  PadMode mode;
  if (mode_name == "constant")
    mode = PadMode::kConstant;
  else if (mode_name == "reflect")
    mode = PadMode::kReflect;
  else if (mode_name == "edge")
    mode = PadMode::kEdge;
  else if (mode_name == "wrap" && ctx.opset() >= 19)
    mode = PadMode::kWrap;
  else
    return ctx.error("mode '" + mode_name + "' is not supported at opset " +
                     std::to_string(ctx.opset()));

  std::vector<int64_t> pads;
  std::vector<uint8_t> fill(w, 0);
  std::vector<int64_t> axes;
  if (ctx.opset() < 11) {
    auto p = ctx.attr_ints("pads");
    if (!p) p = ctx.attr_ints("paddings");  // opset 1
    if (!p) return ctx.error("pads are required");
    pads = *p;
    OP_ASSIGN_OR_RETURN(fill, fill_from_float(ctx, x->dtype, ctx.attr_float("value", 0.0f)));
  } else {
    OP_ASSIGN_OR_RETURN(pads, ints_for_shape(ctx, 1, "pads"));
    if (ctx.has_input(2)) {
      const ValueDesc& v = ctx.input(2);
      if (v.dtype != x->dtype) return ctx.error("constant_value must have the data's type");
      if (shape_numel(v.shape) != 1) return ctx.error("constant_value must hold one element");
      if (v.value) std::memcpy(fill.data(), v.value->data, w);
    }
    if (ctx.has_input(3)) {
      OP_ASSIGN_OR_RETURN(axes, ints_for_shape(ctx, 3, "axes"));
    }
  }
  // Full-rank begin/end pads.
  std::vector<int64_t> begin(size_t(rank), 0), end(size_t(rank), 0);
  if (axes.empty()) {
    if (int64_t(pads.size()) != 2 * rank)
      return ctx.error("pads has " + std::to_string(pads.size()) + " entries for rank " +
                       std::to_string(rank));
    for (int64_t i = 0; i < rank; ++i) {
      begin[size_t(i)] = pads[size_t(i)];
      end[size_t(i)] = pads[size_t(i + rank)];
    }
  } else {
    int64_t na = int64_t(axes.size());
    if (int64_t(pads.size()) != 2 * na)
      return ctx.error("pads has " + std::to_string(pads.size()) + " entries for " +
                       std::to_string(na) + " axes");
    std::vector<bool> seen(size_t(rank), false);
    for (int64_t i = 0; i < na; ++i) {
      OP_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[size_t(i)], rank, ctx));
      if (seen[size_t(a)])
        return ctx.error("axes repeat axis " + std::to_string(a) + " (given as " +
                         std::to_string(axes[size_t(i)]) + ")");
      seen[size_t(a)] = true;
      begin[size_t(a)] = pads[size_t(i)];
      end[size_t(a)] = pads[size_t(i + na)];
    }
  }
  // Negative pads crop first; the padding then extends the cropped part (so
  // wrap and reflect read only kept elements, as ONNX Runtime does).
  Shape out(static_cast<size_t>(rank));
  std::vector<int64_t> lead(static_cast<size_t>(rank)), crop(lead), kept(lead);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t n = x->shape[size_t(i)];
    // Overflow-checked: int64 pads near the limits must not wrap. A crop
    // beyond the dim (pad < -n) is refused below before it is negated.
    const std::optional<int64_t> nb = checked_add(n, begin[size_t(i)]);
    const std::optional<int64_t> nbe = nb ? checked_add(*nb, end[size_t(i)]) : std::nullopt;
    if (!nbe)
      return ctx.error("pads " + std::to_string(begin[size_t(i)]) + " and " +
                       std::to_string(end[size_t(i)]) + " overflow dimension " + std::to_string(i) +
                       " of size " + std::to_string(n));
    const int64_t o = *nbe;
    if (begin[size_t(i)] < -n || end[size_t(i)] < -n)
      return ctx.error("pads crop dimension " + std::to_string(i) + " below zero");
    lead[size_t(i)] = std::max<int64_t>(begin[size_t(i)], 0);
    crop[size_t(i)] = std::max<int64_t>(-begin[size_t(i)], 0);
    kept[size_t(i)] = n - crop[size_t(i)] - std::max<int64_t>(-end[size_t(i)], 0);
    if (o < 0 || kept[size_t(i)] < 0)
      return ctx.error("pads crop dimension " + std::to_string(i) + " below zero");
    n = kept[size_t(i)];
    if (mode != PadMode::kConstant && n == 0 && o > 0)
      return ctx.error("mode '" + mode_name + "' cannot pad the empty dimension " +
                       std::to_string(i));
    out[size_t(i)] = o;
  }
  if (checked_numel(out) < 0) return ctx.error("output " + shape_string(out) + " overflows");
  ctx.set_output(0, x->dtype, out);
  // A run-time constant_value input is read in the kernel.
  bool fill_at_run = ctx.opset() >= 11 && ctx.has_input(2) && ctx.input(2).value == nullptr;
  std::vector<int64_t> in_strides = strides_of(x->shape);
  std::unique_ptr<Kernel> k;
  dispatch_width(w, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T fill_v;
    std::memcpy(&fill_v, fill.data(), sizeof(T));
    k = std::make_unique<FnKernel>([=](const KernelIO& io) {
      int64_t total = shape_numel(out);  // dims-lint: ok (checked_numel above)
      if (total == 0) return;
      T* o = static_cast<T*>(io.out[0]);
      T fv = fill_at_run ? *static_cast<const T*>(io.in[2]) : fill_v;
      if (rank == 0) {
        *o = *static_cast<const T*>(io.in[0]);
        return;
      }
      const T* in = static_cast<const T*>(io.in[0]);
      int64_t inner_out = out[size_t(rank - 1)], inner_in = kept[size_t(rank - 1)];
      int64_t b = lead[size_t(rank - 1)];
      // Output columns [lo, hi) copy input columns [lo - b, hi - b).
      int64_t lo = std::clamp<int64_t>(b, 0, inner_out);
      int64_t hi = std::clamp<int64_t>(b + inner_in, lo, inner_out);
      int64_t rows = total / inner_out;
      parallel_range(io.pool, rows, std::max<int64_t>(1, 8192 / inner_out),
                     [&](int64_t r0, int64_t r1) {
                       for (int64_t r = r0; r < r1; ++r) {
                         T* dst = o + r * inner_out;
                         int64_t rem = r, src = crop[size_t(rank - 1)];
                         bool filled = false;
                         for (int64_t d = rank - 2; d >= 0; --d) {
                           int64_t c = rem % out[size_t(d)] - lead[size_t(d)];
                           rem /= out[size_t(d)];
                           int64_t s = source_coord(c, kept[size_t(d)], mode);
                           if (s < 0) {
                             filled = true;
                             break;
                           }
                           src += (s + crop[size_t(d)]) * in_strides[size_t(d)];
                         }
                         if (filled) {
                           std::fill(dst, dst + inner_out, fv);
                           continue;
                         }
                         const T* row = in + src;
                         for (int64_t j = 0; j < lo; ++j) {
                           int64_t s = source_coord(j - b, inner_in, mode);
                           dst[j] = s < 0 ? fv : row[s];
                         }
                         if (hi > lo)
                           std::memcpy(dst + lo, row + (lo - b), size_t(hi - lo) * sizeof(T));
                         for (int64_t j = hi; j < inner_out; ++j) {
                           int64_t s = source_coord(j - b, inner_in, mode);
                           dst[j] = s < 0 ? fv : row[s];
                         }
                       }
                     });
    });
  });
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
