// GatherElements, GatherND, Scatter/ScatterElements and ScatterND (with
// reductions). Indices out of range are refused at plan time when known; at
// run time every one of them fails the run on them (as ONNX Runtime does)
// instead of touching memory out of bounds.
#include <algorithm>
#include <cstring>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> reduction_of(BuildContext& ctx) {
  std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return ctx.error("reduction '" + r + "' is not none, add, mul, max or min");
}

template <typename T>
inline void combine(Reduction r, T& dst, T v) {
  switch (r) {
    case Reduction::kNone:
      dst = v;
      break;
    case Reduction::kAdd:
      dst = T(dst + v);
      break;
    case Reduction::kMul:
      dst = T(dst * v);
      break;
    case Reduction::kMax:
      dst = std::max(dst, v);
      break;
    case Reduction::kMin:
      dst = std::min(dst, v);
      break;
  }
}

// Calls fn(TypeTag<T>) with an arithmetic T for reductions, a same-width
// unsigned type otherwise. False when the type is not supported.
template <typename Fn>
bool dispatch_for(Reduction r, int32_t dtype, Fn&& fn) {
  if (r == Reduction::kNone) return dispatch_width(dtype_size(dtype), fn);
  return dispatch_numeric(dtype, fn);
}

Status check_known_indices(BuildContext& ctx, const ValueDesc& idx, int64_t dim) {
  if (idx.value == nullptr) return ok_status();
  OP_ASSIGN_OR_RETURN(auto iv, to_int64_vector(*idx.value, "indices"));
  for (int64_t i : iv) {
    if (i < -dim || i >= dim)
      return ctx.error("index " + std::to_string(i) + " is out of range for dimension " +
                       std::to_string(dim));
  }
  return ok_status();
}

// GatherElements / ScatterElements: indices may be no larger than data on the
// axes other than `axis` (the kernels address data with the indices'
// coordinates there).
Status check_elements_shape(BuildContext& ctx, const Shape& data, const Shape& idx, int64_t axis) {
  for (size_t a = 0; a < data.size(); ++a) {
    if (int64_t(a) != axis && idx[a] > data[a])
      return ctx.error("indices " + shape_string(idx) + " exceed data " + shape_string(data) +
                       " on axis " + std::to_string(a) + " (" + std::to_string(idx[a]) + " > " +
                       std::to_string(data[a]) + "), which is not the gather/scatter axis " +
                       std::to_string(axis));
  }
  return ok_status();
}

Status index_out_of_range(const std::string& where, int64_t i, int64_t dim) {
  return invalid_argument(where + ": index " + std::to_string(i) +
                          " is out of range for dimension " + std::to_string(dim));
}

}  // namespace

BuildResult build_gather_elements(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* data, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, data->dtype));
  OP_RETURN_IF_ERROR(require_index_type(ctx, idx->dtype, "indices"));
  int64_t rank = int64_t(data->shape.size());
  if (rank == 0 || int64_t(idx->shape.size()) != rank)
    return ctx.error("data " + shape_string(data->shape) + " and indices " +
                     shape_string(idx->shape) + " must have one rank >= 1");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", 0), rank, ctx));
  int64_t dim = data->shape[size_t(axis)];
  OP_RETURN_IF_ERROR(check_elements_shape(ctx, data->shape, idx->shape, axis));
  OP_RETURN_IF_ERROR(check_known_indices(ctx, *idx, dim));
  ctx.set_output(0, data->dtype, idx->shape);
  const std::string where = ctx.where();
  Shape ishape = idx->shape;
  std::vector<int64_t> dstr = strides_of(data->shape);
  bool is64 = idx->dtype == kInt64;
  std::unique_ptr<Kernel> k;
  dispatch_width(dtype_size(data->dtype), [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([=](const KernelIO& io) {
      const T* d = static_cast<const T*>(io.in[0]);
      T* o = static_cast<T*>(io.out[0]);
      int64_t n = shape_numel(ishape);  // dims-lint: ok (the indices' shape)
      std::vector<int64_t> pos(size_t(rank), 0);
      for (int64_t e = 0; e < n; ++e) {
        int64_t i = index_at(io.in[1], is64, e);
        if (i < -dim || i >= dim) return report_failure(io, index_out_of_range(where, i, dim));
        if (i < 0) i += dim;
        int64_t off = 0;
        for (int64_t a = 0; a < rank; ++a)
          off += (a == axis ? i : pos[size_t(a)]) * dstr[size_t(a)];
        o[e] = d[off];
        for (int64_t a = rank - 1; a >= 0; --a) {  // odometer over the indices' shape
          if (++pos[size_t(a)] < ishape[size_t(a)]) break;
          pos[size_t(a)] = 0;
        }
      }
    });
  });
  return k;
}

BuildResult build_scatter_elements(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* data, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(const ValueDesc* upd, ctx.require_input(2));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, data->dtype));
  OP_RETURN_IF_ERROR(require_index_type(ctx, idx->dtype, "indices"));
  OP_ASSIGN_OR_RETURN(Reduction red, reduction_of(ctx));
  int64_t rank = int64_t(data->shape.size());
  if (rank == 0 || int64_t(idx->shape.size()) != rank || upd->shape != idx->shape ||
      upd->dtype != data->dtype)
    return ctx.error("data " + shape_string(data->shape) + ", indices " + shape_string(idx->shape) +
                     " and updates " + shape_string(upd->shape) +
                     " must have one rank, indices and updates one shape");
  OP_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.attr_int("axis", 0), rank, ctx));
  int64_t dim = data->shape[size_t(axis)];
  OP_RETURN_IF_ERROR(check_elements_shape(ctx, data->shape, idx->shape, axis));
  OP_RETURN_IF_ERROR(check_known_indices(ctx, *idx, dim));
  ctx.set_output(0, data->dtype, data->shape);
  const std::string where = ctx.where();
  Shape ishape = idx->shape;
  int64_t total = shape_numel(data->shape);
  std::vector<int64_t> dstr = strides_of(data->shape);
  bool is64 = idx->dtype == kInt64;
  std::unique_ptr<Kernel> k;
  bool ok = dispatch_for(red, data->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>(
        [=](const KernelIO& io) {
          T* o = static_cast<T*>(io.out[0]);
          if (total) std::memcpy(o, io.in[0], size_t(total) * sizeof(T));
          const T* u = static_cast<const T*>(io.in[2]);
          int64_t n = shape_numel(ishape);  // dims-lint: ok (the indices' shape)
          std::vector<int64_t> pos(size_t(rank), 0);
          for (int64_t e = 0; e < n; ++e) {
            int64_t i = index_at(io.in[1], is64, e);
            if (i < -dim || i >= dim) return report_failure(io, index_out_of_range(where, i, dim));
            if (i < 0) i += dim;
            int64_t off = 0;
            for (int64_t a = 0; a < rank; ++a)
              off += (a == axis ? i : pos[size_t(a)]) * dstr[size_t(a)];
            combine(red, o[off], u[e]);
            for (int64_t a = rank - 1; a >= 0; --a) {
              if (++pos[size_t(a)] < ishape[size_t(a)]) break;
              pos[size_t(a)] = 0;
            }
          }
        },
        FnKernel::ChecksInputValues{});
  });
  if (!ok) return ctx.error("type " + dtype_name(data->dtype) + " is not supported");
  return k;
}

namespace {

// The shared geometry of GatherND and ScatterND: `tuples` index tuples of
// length `depth` into data's dims [batch, batch + depth), each selecting a
// slice of `slice` elements.
struct NdGeometry {
  int64_t batch = 1;  // product of the batch dims
  int64_t tuples_per_batch = 1;
  int64_t depth = 0;
  int64_t slice = 1;
  std::vector<int64_t> dims;     // data dims indexed by a tuple
  std::vector<int64_t> strides;  // in elements, within one batch
  int64_t batch_stride = 0;      // data elements per batch
};

Result<NdGeometry> nd_geometry(BuildContext& ctx, const Shape& data, const Shape& idx, int64_t b) {
  NdGeometry g;
  if (idx.empty()) return ctx.error("indices must have rank >= 1");
  g.depth = idx.back();
  int64_t r = int64_t(data.size());
  if (b < 0 || b >= int64_t(idx.size()) || b > r || g.depth < 0 || b + g.depth > r)
    return ctx.error("indices " + shape_string(idx) + " do not fit data " + shape_string(data) +
                     " with batch_dims " + std::to_string(b));
  for (int64_t i = 0; i < b; ++i) {
    if (data[size_t(i)] != idx[size_t(i)])
      return ctx.error("batch dims of data " + shape_string(data) + " and indices " +
                       shape_string(idx) + " differ");
  }
  g.batch = dims_product(data, 0, size_t(b));
  g.tuples_per_batch = dims_product(idx, size_t(b), idx.size() - 1);
  g.slice = dims_product(data, size_t(b + g.depth), size_t(r));
  g.batch_stride = dims_product(data, size_t(b), size_t(r));
  int64_t s = g.slice;
  g.dims.assign(size_t(g.depth), 0);
  g.strides.assign(size_t(g.depth), 0);
  for (int64_t i = g.depth - 1; i >= 0; --i) {
    g.dims[size_t(i)] = data[size_t(b + i)];
    g.strides[size_t(i)] = s;
    s *= g.dims[size_t(i)];
  }
  return g;
}

// Element offset within a batch of tuple `t`, or -1 when out of range (the
// index and its dimension are then left in `bad` and `bad_dim`).
inline int64_t nd_offset(const NdGeometry& g, const void* idx, bool is64, int64_t t, int64_t& bad,
                         int64_t& bad_dim) {
  int64_t off = 0;
  for (int64_t j = 0; j < g.depth; ++j) {
    int64_t i = index_at(idx, is64, t * g.depth + j);
    int64_t d = g.dims[size_t(j)];
    if (i < -d || i >= d) {
      bad = i;
      bad_dim = d;
      return -1;
    }
    if (i < 0) i += d;
    off += i * g.strides[size_t(j)];
  }
  return off;
}

}  // namespace

BuildResult build_gather_nd(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* data, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, data->dtype));
  if (idx->dtype != kInt64) return ctx.error("indices must be int64");
  int64_t b = ctx.attr_int("batch_dims", 0);
  OP_ASSIGN_OR_RETURN(NdGeometry g, nd_geometry(ctx, data->shape, idx->shape, b));
  Shape out(idx->shape.begin(), idx->shape.end() - 1);
  out.insert(out.end(), data->shape.begin() + b + g.depth, data->shape.end());
  ctx.set_output(0, data->dtype, out);
  size_t w = dtype_size(data->dtype);
  const std::string where = ctx.where();
  return std::unique_ptr<Kernel>(new FnKernel(
      [=](const KernelIO& io) {
        const auto* d = static_cast<const uint8_t*>(io.in[0]);
        auto* o = static_cast<uint8_t*>(io.out[0]);
        size_t slice_bytes = size_t(g.slice) * w;
        // No tuple: nothing to check (and an empty batch axis of 2^40 to skip).
        if (g.tuples_per_batch == 0) return;
        for (int64_t bi = 0; bi < g.batch; ++bi) {
          for (int64_t t = 0; t < g.tuples_per_batch; ++t) {
            int64_t tuple = bi * g.tuples_per_batch + t;
            int64_t bad = 0, bad_dim = 0;
            int64_t off = nd_offset(g, io.in[1], true, tuple, bad, bad_dim);
            if (off < 0) return report_failure(io, index_out_of_range(where, bad, bad_dim));
            // An empty slice (checks_input_values runs it anyway) copies nothing.
            if (slice_bytes != 0)
              std::memcpy(o + size_t(tuple) * slice_bytes,
                          d + size_t(bi * g.batch_stride + off) * w, slice_bytes);
          }
        }
      },
      FnKernel::ChecksInputValues{}));
}

BuildResult build_scatter_nd(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* data, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(const ValueDesc* upd, ctx.require_input(2));
  OP_RETURN_IF_ERROR(require_fixed_width(ctx, data->dtype));
  if (idx->dtype != kInt64) return ctx.error("indices must be int64");
  OP_ASSIGN_OR_RETURN(Reduction red, reduction_of(ctx));
  OP_ASSIGN_OR_RETURN(NdGeometry g, nd_geometry(ctx, data->shape, idx->shape, 0));
  Shape want(idx->shape.begin(), idx->shape.end() - 1);
  want.insert(want.end(), data->shape.begin() + g.depth, data->shape.end());
  if (upd->shape != want || upd->dtype != data->dtype)
    return ctx.error("updates " + shape_string(upd->shape) + " must be " + shape_string(want));
  ctx.set_output(0, data->dtype, data->shape);
  int64_t total = shape_numel(data->shape);
  const std::string where = ctx.where();
  std::unique_ptr<Kernel> k;
  bool ok = dispatch_for(red, data->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>(
        [=](const KernelIO& io) {
          T* o = static_cast<T*>(io.out[0]);
          if (total) std::memcpy(o, io.in[0], size_t(total) * sizeof(T));
          const T* u = static_cast<const T*>(io.in[2]);
          for (int64_t t = 0; t < g.tuples_per_batch; ++t) {
            int64_t bad = 0, bad_dim = 0;
            int64_t off = nd_offset(g, io.in[1], true, t, bad, bad_dim);
            if (off < 0) return report_failure(io, index_out_of_range(where, bad, bad_dim));
            for (int64_t j = 0; j < g.slice; ++j) combine(red, o[off + j], u[t * g.slice + j]);
          }
        },
        FnKernel::ChecksInputValues{});
  });
  if (!ok) return ctx.error("type " + dtype_name(data->dtype) + " is not supported");
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
