#include "types/struct_type.h"

#include <unordered_map>
#include <unordered_set>

#include "base/checked_arith.h"
#include "format/data_type.h"
#include "types/constant.h"

namespace onnx_prepack::types {
namespace {

using onnx::StructTypeProto;
using onnx::TypeProto;

// base's checked arithmetic in the out-parameter form the walk below uses:
// true when a * b (a + b) does not fit.
bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) {
  const std::optional<uint64_t> r = base::checked_mul(a, b);
  if (r) *out = *r;
  return !r;
}
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) {
  const std::optional<uint64_t> r = base::checked_add(a, b);
  if (r) *out = *r;
  return !r;
}

// Size (bits, when concrete), leaf count and height of a (sub)type.
struct Info {
  std::optional<uint64_t> bits;
  uint64_t leaves = 0;
  uint32_t height = 0;
};

// Walks declarations below one root. `dims` is the root's dims when concrete;
// nullopt for a symbolic walk. Catalogue references start a new root context
// with no parameters, so their results are memoised independently of `dims`.
class Walker {
 public:
  Walker(const Catalogue& catalogue, const TypeLimits& limits,
         std::optional<std::span<const uint64_t>> dims)
      : catalogue_(catalogue), limits_(limits), dims_(dims) {}

  Result<Info> root_info(const StructTypeProto& type) {
    if (type.kind_case() == StructTypeProto::kTypeIndex) {
      return invalid_argument("type is a static reference (type_index " +
                              std::to_string(type.type_index()) + "), not a concrete declaration");
    }
    OP_RETURN_IF_ERROR(check_root_dims(type));
    return decl_info(type, 1, /*params=*/type.dims_param_size());
  }

  // The count of an Array/PackedArray: constant or root parameter.
  template <typename A>
  Result<LeafDim> count_of(const A& a, int params) const {
    switch (a.count_case()) {
      case A::kDimension:
        return LeafDim{a.dimension(), -1};
      case A::kDimsIndex: {
        if (a.dims_index() >= uint32_t(params)) {
          return invalid_argument("dims_index " + std::to_string(a.dims_index()) +
                                  " is out of range (" + std::to_string(params) +
                                  " dimension parameters)");
        }
        if (dims_) return LeafDim{(*dims_)[a.dims_index()], -1};
        return LeafDim{0, int32_t(a.dims_index())};
      }
      case A::COUNT_NOT_SET:
        break;
    }
    return invalid_argument("count is not set (neither dimension nor dims_index)");
  }

  // params: number of root parameters visible here (0 below a type_index).
  Result<Info> decl_info(const StructTypeProto& d, uint32_t depth, int params) {
    if (depth > limits_.max_nesting_depth) {
      return resource_exhausted("nesting depth exceeds the limit of " +
                                std::to_string(limits_.max_nesting_depth));
    }
    Info info;
    switch (d.kind_case()) {
      case StructTypeProto::kArray: {
        OP_ASSIGN_OR_RETURN(LeafDim count, count_of(d.array(), params));
        if (!d.array().has_element_type()) return invalid_argument("array has no element_type");
        auto elem = member_info(d.array().element_type(), depth, params);
        if (!elem.ok()) return elem.status().with_context("array.element_type");
        info.leaves = elem->leaves;
        info.height = elem->height + 1;
        if (count.param < 0 && elem->bits) {
          uint64_t b;
          if (mul_overflows(count.value, *elem->bits, &b)) {
            return out_of_range("size overflows uint64: " + std::to_string(count.value) +
                                " elements of " + std::to_string(*elem->bits) + " bits");
          }
          info.bits = b;
        }
        return info;
      }
      case StructTypeProto::kPackedArray: {
        const auto& p = d.packed_array();
        if (uint32_t(p.component_size()) > limits_.max_fields) {
          return resource_exhausted("packed_array has " + std::to_string(p.component_size()) +
                                    " components, the limit is " +
                                    std::to_string(limits_.max_fields));
        }
        OP_ASSIGN_OR_RETURN(LeafDim count, count_of(p, params));
        uint64_t width = 0;
        for (int i = 0; i < p.component_size(); ++i) {
          uint32_t w = p.component(i).bit_width();
          if (w == 0 || w > 64) {
            return invalid_argument("packed_array.component[" + std::to_string(i) + "] '" +
                                    p.component(i).name() + "': bit_width " + std::to_string(w) +
                                    " is not in 1..64");
          }
          width += w;
        }
        info.leaves = uint64_t(p.component_size());
        info.height = 1;
        if (count.param < 0) {
          uint64_t b;
          if (mul_overflows(count.value, width, &b)) {
            return out_of_range("size overflows uint64: " + std::to_string(count.value) +
                                " elements of " + std::to_string(width) + " bits");
          }
          info.bits = b;
        }
        return info;
      }
      case StructTypeProto::kStructure: {
        const auto& s = d.structure();
        if (uint32_t(s.field_size()) > limits_.max_fields) {
          return resource_exhausted("structure has " + std::to_string(s.field_size()) +
                                    " fields, the limit is " + std::to_string(limits_.max_fields));
        }
        info.bits = 0;
        info.height = 1;
        for (int i = 0; i < s.field_size(); ++i) {
          const auto& f = s.field(i);
          std::string ctx = "structure.field[" + std::to_string(i) + "] '" + f.name() + "'";
          if (f.has_constant()) {
            auto cs = constant_byte_size(f.constant());
            if (!cs.ok()) return cs.status().with_context(ctx);
            if (add_overflows(info.leaves, 1, &info.leaves))
              return out_of_range("leaf count overflows");
            continue;
          }
          if (!f.has_type()) return invalid_argument(ctx + ": has neither type nor constant");
          auto m = member_info(f.type(), depth, params);
          if (!m.ok()) return m.status().with_context(ctx);
          if (add_overflows(info.leaves, m->leaves, &info.leaves))
            return out_of_range("leaf count overflows");
          info.height = std::max(info.height, m->height + 1);
          if (info.bits && m->bits) {
            uint64_t b;
            if (add_overflows(*info.bits, *m->bits, &b))
              return out_of_range("size overflows uint64");
            info.bits = b;
          } else {
            info.bits.reset();
          }
        }
        if (!dims_ && params > 0) {
          // Symbolic walk: a structure below parameterised arrays still has a
          // static size unless a member is parameterised; keep what we found.
        }
        return info;
      }
      case StructTypeProto::kTypeIndex:
        return invalid_argument(
            "a static reference (type_index) cannot be used as a declaration here");
      case StructTypeProto::KIND_NOT_SET:
        break;
    }
    return invalid_argument("struct type kind is not set (unconstrained)");
  }

  Result<Info> member_info(const TypeProto& t, uint32_t depth, int params) {
    if (t.has_tensor_type()) {
      int32_t et = t.tensor_type().elem_type();
      uint32_t bits = format::data_type_bits(et);
      if (bits == 0) {
        return invalid_argument("leaf element type " + std::to_string(et) + " (" +
                                std::string(format::data_type_name(et)) + ") has no fixed width");
      }
      if (t.tensor_type().has_shape() && t.tensor_type().shape().dim_size() > 0) {
        return invalid_argument("leaf tensor_type has rank " +
                                std::to_string(t.tensor_type().shape().dim_size()) +
                                "; leaves are rank 0, repetition is an array");
      }
      Info info;
      info.bits = bits;
      info.leaves = 1;
      return info;
    }
    if (!t.has_struct_type())
      return invalid_argument("member type is neither tensor_type nor struct_type");
    const StructTypeProto& s = t.struct_type();
    if (s.kind_case() == StructTypeProto::kTypeIndex) return ref_info(s.type_index(), depth + 1);
    if (s.kind_case() == StructTypeProto::KIND_NOT_SET) {
      return invalid_argument("unconstrained struct type (kind unset) as a member");
    }
    if (s.dims_param_size() > 0)
      return invalid_argument("a nested declaration declares dims_param");
    return decl_info(s, depth + 1, params);
  }

  Result<Info> ref_info(int32_t index, uint32_t depth) {
    if (index < 0 || index >= catalogue_.size()) {
      return out_of_range("type_index " + std::to_string(index) + " is out of range (" +
                          std::to_string(catalogue_.size()) + " struct_types)");
    }
    auto it = memo_.find(index);
    if (it != memo_.end()) {
      if (it->second.height == 0) {
        return invalid_argument("type_index " + std::to_string(index) +
                                " closes a reference cycle");
      }
      if (depth - 1 + it->second.height > limits_.max_nesting_depth) {
        return resource_exhausted("nesting depth exceeds the limit of " +
                                  std::to_string(limits_.max_nesting_depth));
      }
      return it->second;
    }
    const StructTypeProto& target = catalogue_[index];
    std::string ctx = "struct_types[" + std::to_string(index) + "] '" + target.name() + "'";
    if (target.dims_param_size() > 0) {
      return invalid_argument(ctx + ": referenced by type_index but declares dims_param");
    }
    memo_[index] = Info{};  // height 0 marks "in progress"
    auto saved = dims_;
    if (dims_) dims_ = std::span<const uint64_t>();  // a reference is its own root
    auto r = decl_info(target, depth, 0);
    dims_ = saved;
    if (!r.ok()) {
      memo_.erase(index);
      return r.status().with_context(ctx);
    }
    if (!r->bits) r->bits = 0;  // cannot happen without parameters; keep it defined
    memo_[index] = *r;
    return *r;
  }

  Status check_root_dims(const StructTypeProto& type) const {
    if (dims_ && dims_->size() != size_t(type.dims_param_size())) {
      return invalid_argument("dims has " + std::to_string(dims_->size()) +
                              " entries, the type declares " +
                              std::to_string(type.dims_param_size()) + " dims_param");
    }
    return ok_status();
  }

  const Catalogue& catalogue() const { return catalogue_; }
  bool concrete() const { return dims_.has_value(); }
  void enter_reference(std::optional<std::span<const uint64_t>>* saved) {
    *saved = dims_;
    if (dims_) dims_ = std::span<const uint64_t>();
  }
  void leave_reference(std::optional<std::span<const uint64_t>> saved) { dims_ = saved; }

 private:
  const Catalogue& catalogue_;
  const TypeLimits& limits_;
  std::optional<std::span<const uint64_t>> dims_;
  std::unordered_map<int32_t, Info> memo_;
};

// Collects the leaves below a declaration. `arrays` are the enclosing array
// dims (and strides) outermost first; `offset` the bit offset of instance 0.
class Collector {
 public:
  Collector(Walker& w, std::vector<Leaf>* out) : w_(w), out_(out) {}

  Status decl(const StructTypeProto& d, const std::string& prefix, uint64_t offset, int params,
              uint32_t depth) {
    switch (d.kind_case()) {
      case StructTypeProto::kArray: {
        OP_ASSIGN_OR_RETURN(LeafDim count, w_.count_of(d.array(), params));
        OP_ASSIGN_OR_RETURN(Info elem, w_.member_info(d.array().element_type(), depth, params));
        arrays_.push_back({count, elem.bits.value_or(0)});
        Status s = member(d.array().element_type(), prefix, offset, params, depth, elem);
        arrays_.pop_back();
        return s;
      }
      case StructTypeProto::kPackedArray: {
        const auto& p = d.packed_array();
        OP_ASSIGN_OR_RETURN(LeafDim count, w_.count_of(p, params));
        uint64_t width = 0;
        for (const auto& c : p.component()) width += c.bit_width();
        arrays_.push_back({count, width});
        uint64_t at = 0;
        for (const auto& c : p.component()) {
          std::string name = prefix.empty() ? c.name() : prefix + "." + c.name();
          Leaf leaf =
              make_leaf(name, component_elem_type(c.bit_width()), c.bit_width(), offset + at);
          out_->push_back(std::move(leaf));
          at += c.bit_width();
        }
        arrays_.pop_back();
        return ok_status();
      }
      case StructTypeProto::kStructure: {
        uint64_t at = offset;
        for (const auto& f : d.structure().field()) {
          std::string name = prefix.empty() ? f.name() : prefix + "." + f.name();
          if (f.has_constant()) {
            Leaf leaf;
            leaf.name = name;
            leaf.elem_type = f.constant().data_type();
            for (int64_t dim : f.constant().dims()) leaf.dims.push_back(LeafDim{uint64_t(dim), -1});
            if (w_.concrete()) leaf.stride_bits.assign(leaf.dims.size(), 0);
            leaf.constant = &f.constant();
            out_->push_back(std::move(leaf));
            continue;
          }
          OP_ASSIGN_OR_RETURN(Info m, w_.member_info(f.type(), depth, params));
          OP_RETURN_IF_ERROR(member(f.type(), name, at, params, depth, m));
          if (m.bits) at += *m.bits;  // no overflow: the total was checked
        }
        return ok_status();
      }
      default:
        break;
    }
    return internal_error("collector met an unvalidated declaration");
  }

 private:
  struct Enclosing {
    LeafDim count;
    uint64_t stride;
  };

  Status member(const TypeProto& t, const std::string& name, uint64_t offset, int params,
                uint32_t depth, const Info& info) {
    if (info.leaves == 0) return ok_status();
    if (t.has_tensor_type()) {
      int32_t et = t.tensor_type().elem_type();
      out_->push_back(
          make_leaf(name.empty() ? "element" : name, et, format::data_type_bits(et), offset));
      return ok_status();
    }
    const StructTypeProto& s = t.struct_type();
    if (s.kind_case() == StructTypeProto::kTypeIndex) {
      std::optional<std::span<const uint64_t>> saved;
      w_.enter_reference(&saved);
      Status st = decl(w_.catalogue()[s.type_index()], name, offset, 0, depth + 1);
      w_.leave_reference(saved);
      return st;
    }
    return decl(s, name, offset, params, depth + 1);
  }

  Leaf make_leaf(const std::string& name, int32_t elem_type, uint32_t bits, uint64_t offset) const {
    Leaf leaf;
    leaf.name = name.empty() ? "element" : name;
    leaf.elem_type = elem_type;
    leaf.bit_width = bits;
    leaf.offset_bits = offset;
    for (const auto& a : arrays_) {
      leaf.dims.push_back(a.count);
      if (w_.concrete()) leaf.stride_bits.push_back(a.stride);
    }
    return leaf;
  }

  Walker& w_;
  std::vector<Leaf>* out_;
  std::vector<Enclosing> arrays_;
};

Result<std::vector<Leaf>> collect(const Catalogue& catalogue, const StructTypeProto& type,
                                  std::optional<std::span<const uint64_t>> dims,
                                  const TypeLimits& limits) {
  Walker w(catalogue, limits, dims);
  OP_ASSIGN_OR_RETURN(Info info, w.root_info(type));
  if (info.leaves > limits.max_leaves) {
    return resource_exhausted("type has " + std::to_string(info.leaves) + " leaves, the limit is " +
                              std::to_string(limits.max_leaves));
  }
  if (dims && !info.bits) return internal_error("concrete walk without a size");
  std::vector<Leaf> leaves;
  leaves.reserve(size_t(info.leaves));
  Collector c(w, &leaves);
  OP_RETURN_IF_ERROR(c.decl(type, "", 0, type.dims_param_size(), 1));
  return leaves;
}

}  // namespace

int32_t component_elem_type(uint32_t w) {
  if (w == 0 || w > 64) return 0;
  if (w <= 8) return onnx::TensorProto::UINT8;
  if (w <= 16) return onnx::TensorProto::UINT16;
  if (w <= 32) return onnx::TensorProto::UINT32;
  return onnx::TensorProto::UINT64;
}

Result<uint64_t> struct_type_bits(const Catalogue& catalogue, const StructTypeProto& type,
                                  std::span<const uint64_t> dims) {
  TypeLimits limits;
  Walker w(catalogue, limits, dims);
  OP_ASSIGN_OR_RETURN(Info info, w.root_info(type));
  if (!info.bits) return internal_error("concrete walk without a size");
  return *info.bits;
}

Result<TypeShape> type_shape(const Catalogue& catalogue, const StructTypeProto& type,
                             const TypeLimits& limits) {
  Walker w(catalogue, limits, std::nullopt);
  OP_ASSIGN_OR_RETURN(Info info, w.root_info(type));
  return TypeShape{info.leaves, info.height};
}

std::optional<uint64_t> static_byte_size(const onnx::ModelProto& model,
                                         const StructTypeProto& type) {
  if (type.dims_param_size() > 0) return std::nullopt;
  auto bits = struct_type_bits(model.struct_types(), type, {});
  if (!bits.ok() || *bits % 8 != 0) return std::nullopt;
  return *bits / 8;
}

Result<const StructTypeProto*> value_type(const onnx::ModelProto& model,
                                          const onnx::StructProto& value) {
  int32_t t = value.type();
  if (t >= 0) {
    if (value.has_struct_type()) {
      return invalid_argument("value has type " + std::to_string(t) +
                              " and an inline struct_type; only one");
    }
    if (t >= model.struct_types_size()) {
      return out_of_range("value type " + std::to_string(t) + " is out of range (" +
                          std::to_string(model.struct_types_size()) + " struct_types)");
    }
    return &model.struct_types(t);
  }
  if (t == -1) {
    if (!value.has_struct_type())
      return invalid_argument("value type is -1 but it has no inline struct_type");
    return &value.struct_type();
  }
  return invalid_argument("value type " + std::to_string(t) +
                          " is negative (only -1 means inline)");
}

Result<uint64_t> value_byte_size(const onnx::ModelProto& model, const onnx::StructProto& value) {
  OP_ASSIGN_OR_RETURN(const StructTypeProto* type, value_type(model, value));
  std::span<const uint64_t> dims(value.dims().data(), size_t(value.dims_size()));
  if (dims.size() != size_t(type->dims_param_size())) {
    return invalid_argument("value has " + std::to_string(dims.size()) + " dims, its type '" +
                            type->name() + "' declares " + std::to_string(type->dims_param_size()) +
                            " dims_param");
  }
  OP_ASSIGN_OR_RETURN(uint64_t bits, struct_type_bits(model.struct_types(), *type, dims));
  if (bits % 8 != 0) {
    return invalid_argument("type '" + type->name() + "' is " + std::to_string(bits) +
                            " bits, not a whole number of bytes");
  }
  return bits / 8;
}

Result<std::vector<Leaf>> leaf_signature(const Catalogue& catalogue, const StructTypeProto& type,
                                         const TypeLimits& limits) {
  return collect(catalogue, type, std::nullopt, limits);
}

Result<std::vector<Leaf>> leaf_layout(const Catalogue& catalogue, const StructTypeProto& type,
                                      std::span<const uint64_t> dims, const TypeLimits& limits) {
  return collect(catalogue, type, dims, limits);
}

}  // namespace onnx_prepack::types
