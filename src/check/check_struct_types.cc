// Struct-type rules of format.md §3: declarations, references, counts, names,
// constants, limits and codec signatures, reported exhaustively with paths.
#include <map>
#include <set>

#include "base/checked_arith.h"
#include "check/checker.h"
#include "format/data_type.h"
#include "format/model.h"
#include "types/codec.h"
#include "types/constant.h"

namespace onnx_prepack::check {

using onnx::StructTypeProto;
using onnx::TypeProto;

namespace {

std::string idx(std::string_view base, int i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

std::string_view codec_rule(types::CodecProblemKind k) {
  switch (k) {
    case types::CodecProblemKind::kInputCount:
      return rules::kCodecInputCount;
    case types::CodecProblemKind::kInputType:
      return rules::kCodecInputType;
    case types::CodecProblemKind::kOutput:
      return rules::kCodecOutput;
    case types::CodecProblemKind::kOperator:
      return rules::kCodecOperator;
    case types::CodecProblemKind::kCapture:
      return rules::kCodecCapture;
    case types::CodecProblemKind::kExternalData:
      return rules::kCodecExternalData;
    case types::CodecProblemKind::kGraphAttribute:
      return rules::kCodecGraphAttribute;
  }
  return rules::kCodecOperator;
}

}  // namespace

void Checker::check_catalogue() {
  const auto& cat = proto().struct_types();
  if (uint64_t(cat.size()) > options_.max_catalogue_entries) {
    error(rules::kLimitCatalogueEntries, "struct_types",
          "struct_types has " + std::to_string(cat.size()) + " entries, the limit is " +
              std::to_string(options_.max_catalogue_entries));
    catalogue_usable_ = false;
    return;
  }
  state_.assign(size_t(cat.size()), 0);
  memo_.assign(size_t(cat.size()), Summary{});
  std::map<std::string, int, std::less<>> names;
  for (int i = 0; i < cat.size(); ++i) {
    const std::string& name = cat[i].name();
    std::string path = idx("struct_types", i);
    if (name.empty()) {
      error(rules::kCatalogueName, path + ".name", path + ": catalogue entry has an empty name");
    } else if (auto [it, fresh] = names.emplace(name, i); !fresh) {
      error(rules::kCatalogueName, path + ".name",
            path + ": name '" + name + "' is already used by struct_types[" +
                std::to_string(it->second) + "]");
    }
  }
  for (int i = 0; i < cat.size(); ++i) entry_summary(i, idx("struct_types", i), 1);
}

Summary Checker::entry_summary(int i, const std::string& ref_path, uint32_t depth) {
  const uint32_t max_depth = options_.max_nesting_depth;
  if (state_[size_t(i)] == 2) {
    Summary m = memo_[size_t(i)];
    if (depth - 1 + m.height > max_depth) {
      m.incomplete = true;
      m.bad = true;
    }
    return m;
  }
  const StructTypeProto& entry = proto().struct_types(i);
  if (state_[size_t(i)] == 1) {
    error(rules::kCycle, ref_path,
          ref_path + ": type_index " + std::to_string(i) + " ('" + entry.name() +
              "') closes a reference cycle back to a type being declared");
    Summary s;
    s.bad = true;
    return s;
  }
  if (depth > max_depth) {
    Summary s;
    s.bad = s.incomplete = true;
    return s;
  }
  state_[size_t(i)] = 1;
  std::string path = idx("struct_types", i);
  Summary s = walk_root(entry, path, depth);
  if (s.incomplete) {
    if (depth > 1) {
      state_[size_t(i)] = 0;  // walk it again as a root of its own
      return s;
    }
    error(rules::kLimitNestingDepth, path,
          path + ": '" + entry.name() + "' nests deeper than " + std::to_string(max_depth) +
              " declarations");
    s.incomplete = false;
    s.bad = true;
    s.height = max_depth + 1;
  }
  memo_[size_t(i)] = s;
  state_[size_t(i)] = 2;
  return s;
}

Summary Checker::inline_root(const StructTypeProto& type, const std::string& path) {
  Summary s = walk_root(type, path, 1);
  if (s.incomplete) {
    error(rules::kLimitNestingDepth, path,
          path + ": inline type nests deeper than " + std::to_string(options_.max_nesting_depth) +
              " declarations");
    s.incomplete = false;
    s.bad = true;
  }
  return s;
}

Summary Checker::walk_root(const StructTypeProto& d, const std::string& path, uint32_t depth) {
  Summary bad;
  bad.bad = true;
  if (d.kind_case() == StructTypeProto::kTypeIndex) {
    error(rules::kNotConcrete, path,
          path + ": is a static reference (type_index " + std::to_string(d.type_index()) +
              "); a declaration here must be an array, packed_array or structure");
    return bad;
  }
  if (d.kind_case() == StructTypeProto::KIND_NOT_SET) {
    error(rules::kUnconstrained, path,
          path + ": kind is unset (unconstrained); a declaration here must be concrete");
    return bad;
  }
  bool names_bad = false;
  {
    std::set<std::string_view> seen;
    for (int j = 0; j < d.dims_param_size(); ++j) {
      const std::string& p = d.dims_param(j);
      std::string pp = idx(path + ".dims_param", j);
      if (p.empty()) {
        error(rules::kDimsParamName, pp, pp + ": dimension parameter name is empty");
        names_bad = true;
      } else if (!seen.insert(p).second) {
        error(rules::kDimsParamName, pp, pp + ": dimension parameter '" + p + "' is repeated");
        names_bad = true;
      }
    }
  }
  std::vector<bool> used(size_t(d.dims_param_size()), false);
  Ctx ctx{d.dims_param_size(), &used};
  Summary s = walk_decl(d, path, depth, /*is_root=*/true, ctx);
  s.bad = s.bad || names_bad;
  if (s.incomplete) return s;
  for (int j = 0; j < d.dims_param_size(); ++j) {
    if (!used[size_t(j)]) {
      std::string pp = idx(path + ".dims_param", j);
      error(rules::kDimsParamUnused, pp,
            pp + ": dimension parameter '" + d.dims_param(j) + "' is not used by any count");
      s.bad = true;
    }
  }
  if (s.leaves > options_.max_leaves) {
    error(rules::kLimitLeaves, path,
          path + ": '" + d.name() + "' has " + std::to_string(s.leaves) +
              " canonical leaves, the limit is " + std::to_string(options_.max_leaves));
    s.bad = true;
  }
  if (!s.bad) check_codecs(d, path, &s);
  return s;
}

template <typename A>
bool Checker::check_count(const A& a, const std::string& path, Ctx& ctx,
                          std::optional<uint64_t>* count) {
  count->reset();
  switch (a.count_case()) {
    case A::kDimension:
      *count = a.dimension();
      return true;
    case A::kDimsIndex:
      if (a.dims_index() >= uint32_t(ctx.params)) {
        error(rules::kDimsIndexRange, path + ".dims_index",
              path + ": dims_index " + std::to_string(a.dims_index()) +
                  " is out of range (the root declares " + std::to_string(ctx.params) +
                  " dims_param)");
        return false;
      }
      (*ctx.used)[a.dims_index()] = true;
      return true;
    case A::COUNT_NOT_SET:
      break;
  }
  error(rules::kCountUnset, path, path + ": count is unset (neither dimension nor dims_index)");
  return false;
}

// s.bits = count * each bits, reporting an overflow at `where`.
void Checker::multiply_bits(Summary& s, std::optional<uint64_t> count, std::optional<uint64_t> each,
                            const std::string& where) {
  if (!count || !each) return;
  const std::optional<uint64_t> b = base::checked_mul(*count, *each);
  if (!b) {
    error(rules::kSizeOverflow, where,
          where + ": " + std::to_string(*count) + " elements of " + std::to_string(*each) +
              " bits overflow uint64");
    s.bad = true;
  } else {
    s.bits = *b;
  }
}

Summary Checker::walk_decl(const StructTypeProto& d, const std::string& path, uint32_t depth,
                           bool is_root, Ctx& ctx) {
  Summary s;
  if (depth > options_.max_nesting_depth) {
    s.bad = s.incomplete = true;
    return s;
  }
  s.height = 1;
  if (!is_root && d.dims_param_size() > 0) {
    error(rules::kNestedDimsParam, path + ".dims_param",
          path + ": a nested declaration declares " + std::to_string(d.dims_param_size()) +
              " dims_param; only a root may");
    s.bad = true;
  }
  check_metadata(d.metadata_props(), path + ".metadata_props");
  switch (d.kind_case()) {
    case StructTypeProto::kArray:
      return walk_array(d, path, depth, ctx, s);
    case StructTypeProto::kPackedArray:
      return walk_packed_array(d, path, ctx, s);
    case StructTypeProto::kStructure:
      return walk_structure(d, path, depth, ctx, s);
    case StructTypeProto::kTypeIndex:
    case StructTypeProto::KIND_NOT_SET:
      break;
  }
  error(rules::kUnconstrained, path, path + ": kind is unset (unconstrained)");
  s.bad = true;
  return s;
}

Summary Checker::walk_array(const StructTypeProto& d, const std::string& path, uint32_t depth,
                            Ctx& ctx, Summary s) {
  std::string pa = path + ".array";
  std::optional<uint64_t> count;
  if (!check_count(d.array(), pa, ctx, &count)) s.bad = true;
  if (!d.array().has_element_type()) {
    error(rules::kMemberType, pa + ".element_type", pa + ": array has no element_type");
    s.bad = true;
    return s;
  }
  Summary m = walk_member(d.array().element_type(), pa + ".element_type", depth, ctx);
  s.bad = s.bad || m.bad;
  s.incomplete = m.incomplete;
  s.height = m.height + 1;
  s.leaves = m.leaves;
  if (!s.bad) multiply_bits(s, count, m.bits, pa);
  return s;
}

Summary Checker::walk_packed_array(const StructTypeProto& d, const std::string& path, Ctx& ctx,
                                   Summary s) {
  const auto& p = d.packed_array();
  std::string pp = path + ".packed_array";
  if (uint64_t(p.component_size()) > options_.max_fields_per_structure) {
    error(rules::kLimitFields, pp,
          pp + ": " + std::to_string(p.component_size()) + " components, the limit is " +
              std::to_string(options_.max_fields_per_structure));
    s.bad = true;
    return s;
  }
  std::optional<uint64_t> count;
  if (!check_count(p, pp, ctx, &count)) s.bad = true;
  std::set<std::string_view> names;
  uint64_t width = 0;
  for (int c = 0; c < p.component_size(); ++c) {
    const auto& comp = p.component(c);
    std::string pc = idx(pp + ".component", c);
    if (comp.name().empty()) {
      error(rules::kComponentName, pc, pc + ": component name is empty");
      s.bad = true;
    } else if (!names.insert(comp.name()).second) {
      error(rules::kComponentName, pc, pc + ": component name '" + comp.name() + "' is repeated");
      s.bad = true;
    }
    if (comp.bit_width() == 0 || comp.bit_width() > 64) {
      error(rules::kComponentWidth, pc + ".bit_width",
            pc + ": component '" + comp.name() + "' has bit_width " +
                std::to_string(comp.bit_width()) + ", expected 1..64");
      s.bad = true;
    }
    width += comp.bit_width();  // <= 4096 * 2^32: no overflow
  }
  s.leaves = uint64_t(p.component_size());
  if (!s.bad) multiply_bits(s, count, width, pp);
  return s;
}

Summary Checker::walk_structure(const StructTypeProto& d, const std::string& path, uint32_t depth,
                                Ctx& ctx, Summary s) {
  const auto& st = d.structure();
  std::string ps = path + ".structure";
  if (uint64_t(st.field_size()) > options_.max_fields_per_structure) {
    error(rules::kLimitFields, ps,
          ps + ": " + std::to_string(st.field_size()) + " fields, the limit is " +
              std::to_string(options_.max_fields_per_structure));
    s.bad = true;
    return s;
  }
  std::set<std::string_view> names;
  s.bits = 0;
  for (int f = 0; f < st.field_size(); ++f) {
    const auto& field = st.field(f);
    std::string pf = idx(ps + ".field", f);
    if (field.name().empty()) {
      error(rules::kFieldName, pf, pf + ": field name is empty");
      s.bad = true;
    } else if (!names.insert(field.name()).second) {
      error(rules::kFieldName, pf, pf + ": field name '" + field.name() + "' is repeated");
      s.bad = true;
    }
    if (field.has_constant()) {
      check_constant(field.constant(), pf + ".constant", &s);
      s.leaves += 1;
      continue;
    }
    if (!field.has_type()) {
      error(rules::kMemberType, pf,
            pf + ": field '" + field.name() + "' has neither type nor constant");
      s.bad = true;
      s.bits.reset();
      continue;
    }
    Summary m = walk_member(field.type(), pf + ".type", depth, ctx);
    s.bad = s.bad || m.bad;
    s.incomplete = s.incomplete || m.incomplete;
    s.height = std::max(s.height, m.height + 1);
    s.leaves = base::saturating_add(s.leaves, m.leaves);
    if (s.bits && m.bits) {
      const std::optional<uint64_t> b = base::checked_add(*s.bits, *m.bits);
      if (!b) {
        error(rules::kSizeOverflow, ps, ps + ": the sum of the field sizes overflows uint64 bits");
        s.bad = true;
        s.bits.reset();
      } else {
        s.bits = *b;
      }
    } else {
      s.bits.reset();
    }
  }
  if (s.bad) s.bits.reset();
  return s;
}

Summary Checker::walk_member(const TypeProto& t, const std::string& path, uint32_t depth,
                             Ctx& ctx) {
  Summary s;
  if (t.has_tensor_type()) {
    int32_t et = t.tensor_type().elem_type();
    uint32_t bits = format::data_type_bits(et);
    if (bits == 0) {
      error(rules::kLeafType, path + ".tensor_type.elem_type",
            path + ": leaf element type " + std::to_string(et) + " (" +
                std::string(format::data_type_name(et)) + ") has no fixed width");
      s.bad = true;
    }
    if (t.tensor_type().has_shape() && t.tensor_type().shape().dim_size() > 0) {
      error(rules::kLeafNotScalar, path + ".tensor_type.shape",
            path + ": leaf has rank " + std::to_string(t.tensor_type().shape().dim_size()) +
                "; leaves are rank 0 and repetition is an array");
      s.bad = true;
    }
    s.leaves = 1;
    if (!s.bad) s.bits = bits;
    return s;
  }
  if (!t.has_struct_type()) {
    error(rules::kMemberType, path, path + ": member type is neither tensor_type nor struct_type");
    s.bad = true;
    return s;
  }
  const StructTypeProto& st = t.struct_type();
  std::string sp = path + ".struct_type";
  switch (st.kind_case()) {
    case StructTypeProto::kTypeIndex: {
      bool bad = check_static_form(st, sp);
      int32_t r = st.type_index();
      if (!catalogue_usable_) {
        s.bad = true;
        return s;
      }
      if (r < 0 || r >= proto().struct_types_size()) {
        error(rules::kTypeIndexRange, sp + ".type_index",
              sp + ": type_index " + std::to_string(r) + " is out of range (" +
                  std::to_string(proto().struct_types_size()) + " struct_types)");
        s.bad = true;
        return s;
      }
      const StructTypeProto& target = proto().struct_types(r);
      if (target.dims_param_size() > 0) {
        error(rules::kNestedDimsParam, sp + ".type_index",
              sp + ": type_index " + std::to_string(r) + " references '" + target.name() +
                  "' which declares " + std::to_string(target.dims_param_size()) +
                  " dims_param; nested types have none");
        bad = true;
      }
      s = entry_summary(r, sp + ".type_index", depth + 1);
      s.bad = s.bad || bad;
      return s;
    }
    case StructTypeProto::KIND_NOT_SET:
      check_static_form(st, sp);
      error(rules::kUnconstrained, sp,
            sp + ": an unconstrained struct type (kind unset) cannot be an element or field type");
      s.bad = true;
      return s;
    default:
      break;
  }
  return walk_decl(st, sp, depth + 1, /*is_root=*/false, ctx);
}

bool Checker::check_static_form(const StructTypeProto& s, const std::string& path) {
  std::string what;
  auto add = [&](const char* w) { what += what.empty() ? w : std::string(", ") + w; };
  if (s.has_decoder()) add("decoder");
  if (s.has_encoder()) add("encoder");
  if (s.has_name()) add("name");
  if (s.dims_param_size() > 0) add("dims_param");
  if (s.metadata_props_size() > 0) add("metadata_props");
  if (what.empty()) return false;
  error(rules::kStaticFormFields, path, path + ": a static form carries " + what);
  return true;
}

void Checker::check_constant(const onnx::TensorProto& t, const std::string& path, Summary* s) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0) {
    error(rules::kConstantExternal, path,
          path + ": constant '" + t.name() + "' uses external data; constants are inline");
    s->bad = true;
    return;
  }
  auto size = types::constant_byte_size(t);
  if (!size.ok()) {
    error(rules::kConstantInvalid, path, path + ": " + size.status().message());
    s->bad = true;
    return;
  }
  if (!counted_constants_.insert(&t).second) return;
  constant_bytes_ = base::saturating_add(constant_bytes_, *size);
  if (constant_bytes_ > options_.max_constant_bytes) {
    if (!constant_limit_reported_) {
      error(rules::kLimitConstantBytes, path,
            path + ": constants reach " + std::to_string(constant_bytes_) +
                " bytes, the limit per model is " + std::to_string(options_.max_constant_bytes));
      constant_limit_reported_ = true;
    }
    s->bad = true;
  }
}

void Checker::check_codecs(const StructTypeProto& d, const std::string& path, Summary* s) {
  if (!d.has_decoder() && !d.has_encoder()) return;
  types::TypeLimits limits;
  limits.max_nesting_depth = options_.max_nesting_depth;
  limits.max_fields = options_.max_fields_per_structure;
  limits.max_leaves = options_.max_leaves;
  auto leaves = types::leaf_signature(proto().struct_types(), d, limits);
  if (!leaves.ok()) return;  // the walk above reported why
  std::vector<types::CodecProblem> problems;
  if (d.has_decoder()) problems = types::check_decoder(d.decoder(), *leaves, path + ".decoder");
  if (d.has_encoder()) {
    std::optional<uint64_t> bytes;
    if (d.dims_param_size() == 0 && s->bits && *s->bits % 8 == 0) bytes = *s->bits / 8;
    auto more = types::check_encoder(d.encoder(), d.has_decoder() ? &d.decoder() : nullptr, bytes,
                                     path + ".encoder");
    problems.insert(problems.end(), more.begin(), more.end());
  }
  for (const auto& p : problems) error(codec_rule(p.kind), p.path, p.message);
  if (!problems.empty()) s->bad = true;
}

void Checker::check_graph_type(const TypeProto& t, const std::string& path) {
  switch (t.value_case()) {
    case TypeProto::kSequenceType:
      if (t.sequence_type().has_elem_type()) {
        check_graph_type(t.sequence_type().elem_type(), path + ".sequence_type.elem_type");
      }
      return;
    case TypeProto::kOptionalType:
      if (t.optional_type().has_elem_type()) {
        check_graph_type(t.optional_type().elem_type(), path + ".optional_type.elem_type");
      }
      return;
    case TypeProto::kMapType:
      if (t.map_type().has_value_type())
        check_graph_type(t.map_type().value_type(), path + ".map_type.value_type");
      return;
    case TypeProto::kStructType:
      break;
    default:
      return;
  }
  const StructTypeProto& s = t.struct_type();
  std::string sp = path + ".struct_type";
  switch (s.kind_case()) {
    case StructTypeProto::kTypeIndex:
      check_static_form(s, sp);
      if (catalogue_usable_ &&
          (s.type_index() < 0 || s.type_index() >= proto().struct_types_size())) {
        error(rules::kTypeIndexRange, sp + ".type_index",
              sp + ": type_index " + std::to_string(s.type_index()) + " is out of range (" +
                  std::to_string(proto().struct_types_size()) + " struct_types)");
      }
      return;
    case StructTypeProto::KIND_NOT_SET:
      check_static_form(s, sp);
      return;
    default:
      error(rules::kMisplacedDeclaration, sp,
            sp + ": a concrete declaration in a graph value type; declare it in "
                 "ModelProto.struct_types and "
                 "refer to it with type_index");
      return;
  }
}

bool Checker::check_value(const onnx::StructProto& v, const std::string& path) {
  const size_t errors_before = report_->errors.size();
  const StructTypeProto* root = nullptr;
  bool bad = false;
  const int32_t t = v.type();
  if (t >= 0) {
    if (v.has_struct_type()) {
      error(rules::kValueTypeConflict, path,
            path + ": has type " + std::to_string(t) +
                " and an inline struct_type; use one (type -1 for inline)");
      bad = true;
    }
    if (!catalogue_usable_) {
      bad = true;
    } else if (t >= proto().struct_types_size()) {
      error(rules::kValueTypeRange, path + ".type",
            path + ": type " + std::to_string(t) + " is out of range (" +
                std::to_string(proto().struct_types_size()) + " struct_types)");
      bad = true;
    } else {
      root = &proto().struct_types(t);
      if (memo_[size_t(t)].bad) bad = true;  // reported at struct_types[t]
    }
  } else if (t == -1) {
    if (!v.has_struct_type()) {
      error(rules::kValueTypeConflict, path,
            path + ": type is -1 but there is no inline struct_type");
      bad = true;
    } else {
      root = &v.struct_type();
      if (inline_root(*root, path + ".struct_type").bad) bad = true;
    }
  } else {
    error(rules::kValueTypeRange, path + ".type",
          path + ": type " + std::to_string(t) +
              " is negative; only -1 (inline struct_type) is allowed");
    bad = true;
  }

  std::optional<uint64_t> size;
  if (root && !bad) {
    if (v.dims_size() != root->dims_param_size()) {
      error(rules::kValueDims, path + ".dims",
            path + ": has " + std::to_string(v.dims_size()) + " dims, type '" + root->name() +
                "' declares " + std::to_string(root->dims_param_size()) + " dims_param");
    } else {
      std::span<const uint64_t> dims(v.dims().data(), size_t(v.dims_size()));
      auto bits = types::struct_type_bits(proto().struct_types(), *root, dims);
      if (!bits.ok()) {
        error(rules::kSizeOverflow, path, path + ": " + bits.status().message());
      } else if (*bits % 8 != 0) {
        error(rules::kNotWholeBytes, path,
              path + ": type '" + root->name() + "' is " + std::to_string(*bits) +
                  " bits, not a whole number of bytes");
      } else {
        size = *bits / 8;
      }
    }
  }
  if (v.external_data_size() > 0) {
    std::string pe = path + ".external_data";
    if (!v.raw_data().empty()) {
      error(rules::kValueExternalData, path, path + ": has both raw_data and external_data");
    }
    auto ref = format::parse_external_entries(v.external_data());
    if (!ref.ok()) {
      error(rules::kValueExternalData, pe, pe + ": " + ref.status().message());
    } else if (ref->length < 0) {
      error(rules::kValueExternalData, pe,
            pe + ": has no 'length' key; a struct payload declares its length");
    } else {
      if (size && uint64_t(ref->length) != *size) {
        error(rules::kSizeMismatch, path,
              path + ": external payload is " + std::to_string(ref->length) + " bytes, type '" +
                  root->name() + "' needs " + std::to_string(*size));
      }
      if (options_.check_external_payloads) {
        auto span = model_.resolve_external(v.external_data(), pe);
        if (!span.ok()) error(rules::kValueExternalData, pe, span.status().message());
      }
    }
  } else if (size && v.raw_data().size() != *size) {
    error(rules::kSizeMismatch, path,
          path + ": payload is " + std::to_string(v.raw_data().size()) + " bytes, type '" +
              root->name() + "' needs " + std::to_string(*size));
  }
  return bad || report_->errors.size() != errors_before;
}

}  // namespace onnx_prepack::check
