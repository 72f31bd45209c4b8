// Operators that move elements without arithmetic: Transpose, Gather, Concat,
// Slice, Split. They work by element width, so every type of that width runs.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

Status require_width(BuildContext& ctx, int32_t dtype) {
  if (dtype_size(dtype) == 0) return ctx.error("type " + dtype_name(dtype) + " is not supported");
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_transpose(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_width(ctx, x->dtype));
  size_t rank = x->shape.size();
  std::vector<int64_t> perm;
  if (auto p = ctx.attr_ints("perm")) {
    perm = *p;
  } else {
    for (size_t i = 0; i < rank; ++i) perm.push_back(int64_t(rank - 1 - i));
  }
  if (perm.size() != rank)
    return ctx.error("perm has " + std::to_string(perm.size()) + " entries for rank " +
                     std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[size_t(p)])
      return ctx.error("perm is not a permutation");
    seen[size_t(p)] = true;
  }
  Shape out(rank);
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * x->shape[i];
  std::vector<int64_t> src_stride(rank);  // stride in the input for each output dim
  for (size_t i = 0; i < rank; ++i) {
    out[i] = x->shape[size_t(perm[i])];
    src_stride[i] = in_strides[size_t(perm[i])];
  }
  ctx.set_output(0, x->dtype, out);
  int64_t total = shape_numel(out);  // dims-lint: ok (a permutation of X's dims)
  int64_t inner = rank ? out[rank - 1] : 1;
  int64_t inner_stride = rank ? src_stride[rank - 1] : 1;
  std::unique_ptr<Kernel> k;
  dispatch_width(dtype_size(x->dtype), [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([=](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      T* o = static_cast<T*>(io.out[0]);
      if (total == 0) return;
      int64_t rows = total / inner;
      parallel_range(io.pool, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)),
                     [&](int64_t r0, int64_t r1) {
                       for (int64_t r = r0; r < r1; ++r) {
                         int64_t rem = r, src = 0;
                         for (size_t d = rank > 0 ? rank - 1 : 0; d-- > 0;) {
                           src += (rem % out[d]) * src_stride[d];
                           rem /= out[d];
                         }
                         T* dst = o + r * inner;
                         if (inner_stride == 1) {
                           std::memcpy(dst, in + src, size_t(inner) * sizeof(T));
                         } else {
                           for (int64_t j = 0; j < inner; ++j) dst[j] = in[src + j * inner_stride];
                         }
                       }
                     });
    });
  });
  return k;
}

Result<std::unique_ptr<Kernel>> build_gather(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* data, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  OP_RETURN_IF_ERROR(require_width(ctx, data->dtype));
  if (idx->dtype != kInt64 && idx->dtype != kInt32)
    return ctx.error("indices must be int32 or int64");
  int64_t rank = int64_t(data->shape.size());
  if (rank == 0) return ctx.error("data must have rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", 0), rank, ctx));
  Shape out(data->shape.begin(), data->shape.begin() + axis);
  out.insert(out.end(), idx->shape.begin(), idx->shape.end());
  out.insert(out.end(), data->shape.begin() + axis + 1, data->shape.end());
  ctx.set_output(0, data->dtype, out);
  int64_t outer = 1, inner = 1, dim = data->shape[size_t(axis)];
  for (int64_t i = 0; i < axis; ++i) outer *= data->shape[size_t(i)];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= data->shape[size_t(i)];
  int64_t nidx = shape_numel(idx->shape);
  bool idx64 = idx->dtype == kInt64;
  size_t w = dtype_size(data->dtype);
  // Indices out of range are refused at plan time when known; run-time values
  // are checked by the kernel, which fails the run (as ONNX Runtime does).
  if (const Tensor* v = idx->value) {
    OP_ASSIGN_OR_RETURN(auto iv, to_int64_vector(*v, "indices"));
    for (int64_t i : iv) {
      if (i < -dim || i >= dim)
        return ctx.error("index " + std::to_string(i) + " is out of range for dimension " +
                         std::to_string(dim));
    }
  }
  const std::string where = ctx.where();
  return std::unique_ptr<Kernel>(new FnKernel(
      [=](const KernelIO& io) {
        const uint8_t* d = static_cast<const uint8_t*>(io.in[0]);
        uint8_t* o = static_cast<uint8_t*>(io.out[0]);
        size_t row = size_t(inner) * w;
        for (int64_t j = 0; j < nidx; ++j) {
          int64_t i = idx64 ? static_cast<const int64_t*>(io.in[1])[j]
                            : static_cast<const int32_t*>(io.in[1])[j];
          if (i < -dim || i >= dim) {
            return report_failure(
                io, invalid_argument(where + ": index " + std::to_string(i) +
                                     " is out of range for dimension " + std::to_string(dim)));
          }
        }
        // An empty output (checks_input_values runs it anyway) has nothing to copy.
        if (outer == 0 || nidx == 0 || row == 0) return;
        for (int64_t a = 0; a < outer; ++a) {
          for (int64_t j = 0; j < nidx; ++j) {
            int64_t i = idx64 ? static_cast<const int64_t*>(io.in[1])[j]
                              : static_cast<const int32_t*>(io.in[1])[j];
            if (i < 0) i += dim;
            std::memcpy(o + (a * nidx + j) * int64_t(row), d + (a * dim + i) * int64_t(row), row);
          }
        }
      },
      FnKernel::ChecksInputValues{}));
}

Result<std::unique_ptr<Kernel>> build_concat(BuildContext& ctx) {
  if (ctx.input_count() == 0) return ctx.error("needs at least one input");
  OP_ASSIGN_OR_RETURN(const ValueDesc* first, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_width(ctx, first->dtype));
  int64_t rank = int64_t(first->shape.size());
  if (rank == 0) return ctx.error("inputs must have rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", 0), rank, ctx));
  Shape out = first->shape;
  out[size_t(axis)] = 0;
  std::vector<int64_t> sizes;
  for (int i = 0; i < ctx.input_count(); ++i) {
    OP_ASSIGN_OR_RETURN(const ValueDesc* in, ctx.require_input(i));
    if (in->dtype != first->dtype || int64_t(in->shape.size()) != rank) {
      return ctx.error("input " + std::to_string(i) + " " + shape_string(in->shape) +
                       " does not match input 0 " + shape_string(first->shape));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && in->shape[size_t(d)] != first->shape[size_t(d)]) {
        return ctx.error("input " + std::to_string(i) + " " + shape_string(in->shape) +
                         " does not match input 0 " + shape_string(first->shape) +
                         " outside axis " + std::to_string(axis));
      }
    }
    sizes.push_back(in->shape[size_t(axis)]);
    out[size_t(axis)] += in->shape[size_t(axis)];
  }
  ctx.set_output(0, first->dtype, out);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= out[size_t(i)];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= out[size_t(i)];
  size_t w = dtype_size(first->dtype);
  int64_t total_axis = out[size_t(axis)];
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    uint8_t* o = static_cast<uint8_t*>(io.out[0]);
    for (int64_t a = 0; a < outer; ++a) {
      int64_t pos = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        size_t bytes = size_t(sizes[i] * inner) * w;
        if (bytes) {
          std::memcpy(o + size_t((a * total_axis + pos) * inner) * w,
                      static_cast<const uint8_t*>(io.in[i]) + size_t(a) * bytes, bytes);
        }
        pos += sizes[i];
      }
    }
  }));
}

Result<std::unique_ptr<Kernel>> build_slice(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_width(ctx, x->dtype));
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.has_input(1)) {
    OP_ASSIGN_OR_RETURN(starts, ctx.const_ints(1, "starts"));
    OP_ASSIGN_OR_RETURN(ends, ctx.const_ints(2, "ends"));
    if (ctx.has_input(3)) {
      OP_ASSIGN_OR_RETURN(axes, ctx.const_ints(3, "axes"));
    }
    if (ctx.has_input(4)) {
      OP_ASSIGN_OR_RETURN(steps, ctx.const_ints(4, "steps"));
    }
  } else {  // opset < 10
    starts = ctx.attr_ints("starts").value_or(std::vector<int64_t>());
    ends = ctx.attr_ints("ends").value_or(std::vector<int64_t>());
    axes = ctx.attr_ints("axes").value_or(std::vector<int64_t>());
  }
  if (starts.size() != ends.size()) return ctx.error("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.error("starts, ends, axes and steps differ in length");
  std::vector<int64_t> st(size_t(rank), 0), sp(size_t(rank), 1);
  Shape out = x->shape;
  std::vector<bool> seen(size_t(rank), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    OP_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], rank, ctx));
    if (seen[size_t(a)]) return ctx.error("axis " + std::to_string(axes[i]) + " is repeated");
    seen[size_t(a)] = true;
    int64_t dim = x->shape[size_t(a)], step = steps[i];
    if (step == 0 || step == std::numeric_limits<int64_t>::min()) {
      return ctx.error("step " + std::to_string(step) + " is not allowed");
    }
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0 && e > std::numeric_limits<int64_t>::min() + dim)
      e += dim;
    else if (e < 0)
      e = -1;
    int64_t n;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      n = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      n = s > e ? (s - e - 1) / -step + 1 : 0;
    }
    st[size_t(a)] = s;
    sp[size_t(a)] = step;
    out[size_t(a)] = n;
  }
  ctx.set_output(0, x->dtype, out);
  std::vector<int64_t> in_strides(size_t(rank), 1);
  for (int64_t i = rank - 1; i > 0; --i)
    in_strides[size_t(i - 1)] = in_strides[size_t(i)] * x->shape[size_t(i)];
  int64_t total = shape_numel(out);  // dims-lint: ok (each dim at most X's)
  size_t w = dtype_size(x->dtype);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const uint8_t* in = static_cast<const uint8_t*>(io.in[0]);
    uint8_t* o = static_cast<uint8_t*>(io.out[0]);
    if (total == 0) return;
    if (rank == 0) {
      std::memcpy(o, in, w);
      return;
    }
    int64_t inner = out[size_t(rank - 1)];
    int64_t rows = total / inner;
    int64_t istep = sp[size_t(rank - 1)] * in_strides[size_t(rank - 1)];
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rem = r, src = st[size_t(rank - 1)] * in_strides[size_t(rank - 1)];
      for (int64_t d = rank - 2; d >= 0; --d) {
        int64_t id = rem % out[size_t(d)];
        rem /= out[size_t(d)];
        src += (st[size_t(d)] + id * sp[size_t(d)]) * in_strides[size_t(d)];
      }
      uint8_t* dst = o + size_t(r * inner) * w;
      if (istep == 1) {
        std::memcpy(dst, in + size_t(src) * w, size_t(inner) * w);
      } else {
        for (int64_t j = 0; j < inner; ++j)
          std::memcpy(dst + size_t(j) * w, in + size_t(src + j * istep) * w, w);
      }
    }
  }));
}

Result<std::unique_ptr<Kernel>> build_split(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_width(ctx, x->dtype));
  int64_t rank = int64_t(x->shape.size());
  if (rank == 0) return ctx.error("input must have rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", 0), rank, ctx));
  int64_t dim = x->shape[size_t(axis)];
  int nout = ctx.output_count();
  std::vector<int64_t> split;
  if (ctx.has_input(1)) {
    OP_ASSIGN_OR_RETURN(split, ctx.const_ints(1, "split"));
  } else if (auto a = ctx.attr_ints("split")) {
    split = *a;
  }
  if (split.empty()) {
    int64_t parts = ctx.attr_int("num_outputs", nout);
    if (parts != nout || nout <= 0)
      return ctx.error("num_outputs " + std::to_string(parts) + " differs from the " +
                       std::to_string(nout) + " outputs");
    if (ctx.attr("num_outputs") != nullptr && parts > dim)  // as ONNX Runtime refuses it
      return ctx.error("num_outputs " + std::to_string(parts) +
                       " is larger than the dimension being split, " + std::to_string(dim));
    int64_t chunk = (dim + parts - 1) / parts;  // the last part may be smaller (opset 18)
    for (int64_t i = 0; i < parts; ++i)
      split.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    if (ctx.opset() < 18 && dim % parts != 0)
      return ctx.error("dimension " + std::to_string(dim) + " does not split into " +
                       std::to_string(parts) + " equal parts");
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) return ctx.error("negative split size");
    sum += s;
  }
  if (int64_t(split.size()) != nout || sum != dim) {
    return ctx.error("split sizes (" + std::to_string(split.size()) + " parts, sum " +
                     std::to_string(sum) + ") do not match " + std::to_string(nout) +
                     " outputs and dimension " + std::to_string(dim));
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x->shape[size_t(i)];
  for (int64_t i = axis + 1; i < rank; ++i) inner *= x->shape[size_t(i)];
  for (int i = 0; i < nout; ++i) {
    Shape s = x->shape;
    s[size_t(axis)] = split[size_t(i)];
    ctx.set_output(i, x->dtype, s);
  }
  size_t w = dtype_size(x->dtype);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const uint8_t* in = static_cast<const uint8_t*>(io.in[0]);
    for (int64_t a = 0; a < outer; ++a) {
      int64_t pos = 0;
      for (size_t i = 0; i < split.size(); ++i) {
        size_t bytes = size_t(split[i] * inner) * w;
        if (io.out[i] && bytes) {
          std::memcpy(static_cast<uint8_t*>(io.out[i]) + size_t(a) * bytes,
                      in + size_t((a * dim + pos) * inner) * w, bytes);
        }
        pos += split[i];
      }
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
