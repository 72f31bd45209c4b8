// Operators that change shapes or types: Reshape, Squeeze, Unsqueeze,
// Identity (aliases, no kernel), Shape, Constant, ConstantOfShape (values known
// at plan time) and Expand (Cast is in ops/math/cast.cc).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/constants.h"
#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
Result<std::unique_ptr<Kernel>> build_reshape(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(auto shape, ctx.const_ints(1, "shape"));
  bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  Shape out(shape.size());
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == 0 && !allowzero) {
      if (i >= x->shape.size())
        return ctx.error("shape[" + std::to_string(i) + "] = 0 copies a dimension the input lacks");
      d = x->shape[i];
    } else if (d == -1) {
      if (infer >= 0) return ctx.error("shape has more than one -1");
      infer = int64_t(i);
      continue;
    } else if (d < 0) {
      return ctx.error("shape[" + std::to_string(i) + "] = " + std::to_string(d) + " is negative");
    }
    out[i] = d;
    const std::optional<int64_t> k = checked_mul(known, d);
    if (!k || *k > kMaxElementCount) {
      return ctx.error("shape " + shape_string(Shape(shape)) + " overflows");
    }
    known = *k;
  }
  int64_t total = shape_numel(x->shape);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      return ctx.error("cannot reshape " + shape_string(x->shape) + " to " +
                       shape_string(Shape(shape)));
    }
    out[size_t(infer)] = total / known;
  }
  // A zero among the dims hides the others from `known`: checked_product bounds them.
  if (checked_product(out) != total) {
    return ctx.error("cannot reshape " + shape_string(x->shape) + " (" + std::to_string(total) +
                     " elements) to " + shape_string(out));
  }
  ctx.set_output(0, x->dtype, out);
  ctx.set_alias(0, 0);
  return std::unique_ptr<Kernel>();
}

namespace {

Result<std::vector<int64_t>> axes_of(BuildContext& ctx, bool* present) {
  *present = true;
  if (ctx.has_input(1)) return ctx.const_ints(1, "axes");
  if (auto a = ctx.attr_ints("axes")) return *a;
  *present = false;
  return std::vector<int64_t>();
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_squeeze(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  bool present;
  OP_ASSIGN_OR_RETURN(auto axes, axes_of(ctx, &present));
  int64_t rank = int64_t(x->shape.size());
  std::vector<bool> drop(size_t(rank), false);
  if (!present) {
    for (int64_t i = 0; i < rank; ++i) drop[size_t(i)] = x->shape[size_t(i)] == 1;
  }
  for (int64_t a : axes) {
    OP_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, ctx));
    if (x->shape[size_t(n)] != 1) {
      return ctx.error("axis " + std::to_string(a) + " has size " +
                       std::to_string(x->shape[size_t(n)]) + ", not 1");
    }
    drop[size_t(n)] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[size_t(i)]) out.push_back(x->shape[size_t(i)]);
  }
  ctx.set_output(0, x->dtype, out);
  ctx.set_alias(0, 0);
  return std::unique_ptr<Kernel>();
}

Result<std::unique_ptr<Kernel>> build_unsqueeze(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  bool present;
  OP_ASSIGN_OR_RETURN(auto axes, axes_of(ctx, &present));
  if (!present) return ctx.error("axes are required");
  int64_t rank = int64_t(x->shape.size() + axes.size());
  std::vector<bool> add(size_t(rank), false);
  for (int64_t a : axes) {
    OP_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, rank, ctx));
    if (add[size_t(n)]) return ctx.error("axis " + std::to_string(a) + " is repeated");
    add[size_t(n)] = true;
  }
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(add[size_t(i)] ? 1 : x->shape[j++]);
  ctx.set_output(0, x->dtype, out);
  ctx.set_alias(0, 0);
  return std::unique_ptr<Kernel>();
}

Result<std::unique_ptr<Kernel>> build_identity(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  ctx.set_output(0, x->dtype, x->shape);
  ctx.set_alias(0, 0);
  return std::unique_ptr<Kernel>();
}

Result<std::unique_ptr<Kernel>> build_shape(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  int64_t rank = int64_t(x->shape.size());
  int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  int64_t n = std::max<int64_t>(0, end - start);
  auto t = HostTensor::allocate(kInt64, {n});
  auto* d = static_cast<int64_t*>(t.mutable_data());
  for (int64_t i = 0; i < n; ++i) d[i] = x->shape[size_t(start + i)];
  ctx.set_output_value(0, std::move(t));
  return std::unique_ptr<Kernel>();
}

Result<std::unique_ptr<Kernel>> build_constant(BuildContext& ctx) {
  const auto& node = ctx.node();
  if (node.attribute_size() != 1) return ctx.error("needs exactly one value attribute");
  const auto& a = node.attribute(0);
  HostTensor t;
  if (a.name() == "value") {
    auto r = host_tensor_from_proto(a.t(), nullptr, ctx.where() + " value", nullptr);
    if (!r.ok()) return r.status();
    // Own a copy: the proto may be re-parsed while the constant lives on.
    t = HostTensor::allocate(r->dtype(), r->shape());
    if (r->nbytes()) std::memcpy(t.mutable_data(), r->data(), r->nbytes());
  } else if (a.name() == "value_float") {
    t = HostTensor::allocate(kFloat, {});
    *static_cast<float*>(t.mutable_data()) = a.f();
  } else if (a.name() == "value_floats") {
    t = HostTensor::allocate(kFloat, {a.floats_size()});
    std::copy(a.floats().begin(), a.floats().end(), static_cast<float*>(t.mutable_data()));
  } else if (a.name() == "value_int") {
    t = HostTensor::allocate(kInt64, {});
    *static_cast<int64_t*>(t.mutable_data()) = a.i();
  } else if (a.name() == "value_ints") {
    t = HostTensor::allocate(kInt64, {a.ints_size()});
    std::copy(a.ints().begin(), a.ints().end(), static_cast<int64_t*>(t.mutable_data()));
  } else {
    return ctx.error("attribute '" + a.name() + "' is not supported");
  }
  ctx.set_output_value(0, std::move(t));
  if (a.name() == "value" && a.t().data_type() != t.dtype()) {
    ctx.set_output_model_dtype(0, a.t().data_type());
  }
  return std::unique_ptr<Kernel>();
}

Result<std::unique_ptr<Kernel>> build_constant_of_shape(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(auto shape, ctx.const_ints(0, "shape"));
  if (checked_numel(Shape(shape.begin(), shape.end())) < 0) {
    return ctx.error("shape " + shape_string(Shape(shape.begin(), shape.end())) +
                     " has a negative or overflowing size");
  }
  int32_t dt = kFloat;
  std::vector<uint8_t> fill(4, 0);
  if (const auto* a = ctx.attr("value")) {
    auto r = host_tensor_from_proto(a->t(), nullptr, ctx.where() + " value", nullptr);
    if (!r.ok()) return r.status();
    if (r->numel() != 1) return ctx.error("value must hold one element");
    dt = r->dtype();
    fill.assign(static_cast<const uint8_t*>(r->data()),
                static_cast<const uint8_t*>(r->data()) + r->nbytes());
  }
  Shape out(shape.begin(), shape.end());
  OP_ASSIGN_OR_RETURN(uint64_t bytes, checked_tensor_bytes(dt, out, ctx.where() + " output"));
  int64_t n = shape_numel(out);  // dims-lint: ok (checked_tensor_bytes above)
  size_t w = dtype_size(dt);
  if (bytes <= (uint64_t(1) << 24)) {  // small: a plan-time constant
    OP_ASSIGN_OR_RETURN(auto t, HostTensor::try_allocate(dt, out, ctx.where() + " output"));
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(static_cast<uint8_t*>(t.mutable_data()) + i * int64_t(w), fill.data(), w);
    ctx.set_output_value(0, std::move(t));
    return std::unique_ptr<Kernel>();
  }
  ctx.set_output(0, dt, out);
  return std::unique_ptr<Kernel>(new FnKernel([n, w, fill](const KernelIO& io) {
    auto* o = static_cast<uint8_t*>(io.out[0]);
    for (int64_t i = 0; i < n; ++i) std::memcpy(o + i * int64_t(w), fill.data(), w);
  }));
}

Result<std::unique_ptr<Kernel>> build_expand(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(auto shape, ctx.const_ints(1, "shape"));
  if (checked_numel(Shape(shape.begin(), shape.end())) < 0) {
    return ctx.error("shape has a negative or overflowing size");
  }
  auto r = broadcast_shapes(x->shape, Shape(shape.begin(), shape.end()));
  if (!r.ok()) return ctx.error(r.status().message());
  Shape out = *r;
  OP_RETURN_IF_ERROR(checked_tensor_bytes(x->dtype, out, ctx.where() + " output").status());
  ctx.set_output(0, x->dtype, out);
  auto plan = make_broadcast_plan({x->shape}, out);
  std::unique_ptr<Kernel> k;
  bool ok = dispatch_width(dtype_size(x->dtype), [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<FnKernel>([plan](const KernelIO& io) {
      const T* in = static_cast<const T*>(io.in[0]);
      T* o = static_cast<T*>(io.out[0]);
      int64_t rows = plan.outer_count();
      int64_t off[1];
      for (int64_t r = 0; r < rows; ++r) {
        plan.offsets(r, off);
        T* dst = o + r * plan.inner;
        if (plan.inner_stride[0] == 1)
          std::memcpy(dst, in + off[0], size_t(plan.inner) * sizeof(T));
        else
          std::fill(dst, dst + plan.inner, in[off[0]]);
      }
    });
  });
  if (!ok) return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
