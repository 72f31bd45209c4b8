#include "runtime/kernel.h"

#include <algorithm>
#include <cstdlib>

#include "runtime/weights.h"

namespace onnx_prepack::runtime {

Workspace::~Workspace() {
  for (Slot& s : slots_) std::free(s.data);
}

void Workspace::reserve_workers(size_t workers) {
  if (slots_.size() < workers) slots_.resize(workers);
}

void* Workspace::get(size_t worker, size_t bytes) {
  if (worker >= slots_.size()) return nullptr;
  Slot& s = slots_[worker];
  if (s.size < bytes || s.data == nullptr) {
    std::free(s.data);
    size_t size = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    s.data = std::aligned_alloc(64, size);
    s.size = s.data ? size : 0;
  }
  return s.data;
}

size_t Workspace::bytes_held() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.size;
  return n;
}

Result<const ValueDesc*> BuildContext::require_input(int i) const {
  if (!has_input(i)) {
    return error("input " + std::to_string(i) + " is required");
  }
  return inputs_[size_t(i)];
}

Result<std::vector<int64_t>> BuildContext::const_ints(int i, std::string_view what) const {
  OP_ASSIGN_OR_RETURN(const ValueDesc* d, require_input(i));
  if (d->value == nullptr) {
    needed_unknown_value_ = true;
    return error(std::string(what) + " (input " + std::to_string(i) + " '" + d->name +
                 "') must be known before running: a constant or computed from shapes");
  }
  auto r = to_int64_vector(*d->value, what);
  if (!r.ok()) return r.status().with_context(where());
  return r;
}

void BuildContext::set_output(int i, int32_t dtype, Shape shape) {
  if (i >= output_count()) return;
  auto& o = outputs_[size_t(i)];
  o.dtype = dtype;
  o.shape = std::move(shape);
  o.set = true;
}

void BuildContext::set_output_value(int i, HostTensor value) {
  if (i >= output_count()) return;
  set_output(i, value.dtype(), value.shape());
  outputs_[size_t(i)].value = std::move(value);
}

const onnx::AttributeProto* BuildContext::attr(std::string_view name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

void BuildContext::check_repeated_attrs() {
  const auto& as = node_.attribute();
  for (int i = 0; i < as.size() && attr_status_.ok(); ++i) {
    for (int j = 0; j < i; ++j) {
      if (as[i].name() == as[j].name()) {
        attr_status_ = error("attribute '" + as[i].name() + "' is given more than once");
        break;
      }
    }
  }
}

const onnx::AttributeProto* BuildContext::typed_attr(
    std::string_view name, onnx::AttributeProto::AttributeType want) const {
  const auto* a = attr(name);
  if (a == nullptr) return nullptr;
  // Models older than IR version 2 leave the type unset: read the field.
  if (a->type() == want || a->type() == onnx::AttributeProto::UNDEFINED) return a;
  if (attr_status_.ok()) {
    attr_status_ = error("attribute '" + std::string(name) + "' must be " +
                         onnx::AttributeProto::AttributeType_Name(want) + ", got " +
                         onnx::AttributeProto::AttributeType_Name(a->type()));
  }
  return nullptr;
}

int64_t BuildContext::attr_int(std::string_view name, int64_t fallback) const {
  const auto* a = typed_attr(name, onnx::AttributeProto::INT);
  return a ? a->i() : fallback;
}

float BuildContext::attr_float(std::string_view name, float fallback) const {
  const auto* a = typed_attr(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : fallback;
}

std::optional<std::vector<int64_t>> BuildContext::attr_ints(std::string_view name) const {
  const auto* a = typed_attr(name, onnx::AttributeProto::INTS);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string BuildContext::attr_string(std::string_view name, std::string fallback) const {
  const auto* a = typed_attr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : fallback;
}

std::string BuildContext::where() const {
  return "node '" + node_.name() + "' (" + node_.op_type() + ")";
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return invalid_argument("shapes " + shape_string(a) + " and " + shape_string(b) +
                              " do not broadcast (dimension " + std::to_string(i) + ": " +
                              std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  // Each operand is a checked shape, but their broadcast ([2^32, 1] with
  // [1, 2^32]) may not be: every caller takes its element count.
  if (!checked_product(out)) {
    return invalid_argument("shapes " + shape_string(a) + " and " + shape_string(b) +
                            " broadcast to " + shape_string(out) + ", past 2^62 elements");
  }
  return out;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const BuildContext& ctx) {
  if (axis < -rank || axis >= rank) {
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

namespace {

std::vector<OpEntry> all_ops() {
  std::vector<OpEntry> v;
  // An operator belongs to one family (ops/README.md); a name listed twice
  // would be found in the earlier list.
  for (auto list : {math_ops(), linalg_ops(), norm_ops(), tensor_ops(), conv_ops(), control_ops(),
                    quant_ops(), attention_ops()}) {
    v.insert(v.end(), list.begin(), list.end());
  }
  return v;
}

std::string_view canonical_domain(std::string_view d) { return d == "ai.onnx" ? "" : d; }

}  // namespace

const OpEntry* find_op(std::string_view domain, std::string_view op_type) {
  static const std::vector<OpEntry> ops = all_ops();
  domain = canonical_domain(domain);
  for (const auto& e : ops) {
    if (op_type == e.op_type && domain == canonical_domain(e.domain)) return &e;
  }
  return nullptr;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> names;
  for (const auto& e : all_ops()) {
    std::string_view d = canonical_domain(e.domain);
    names.push_back(d.empty() ? std::string(e.op_type) : std::string(d) + "::" + e.op_type);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<PreparedPack> BuildContext::prepare_weight(
    int index, std::function<Status(std::span<uint8_t>)> pack) const {
  if (weights_ == nullptr) return PreparedPack{};
  const ValueDesc& v = input(index);
  WeightRequest r;
  r.node = &node_;
  r.input = index;
  r.source = v.name;
  r.value = v.value;
  r.model_type = v.model_dtype;
  r.pack = std::move(pack);
  Result<PreparedPack> got = weights_->prepare_pack(r);
  if (!got.ok()) return got.status().with_context(where());
  return got;
}

}  // namespace onnx_prepack::runtime
