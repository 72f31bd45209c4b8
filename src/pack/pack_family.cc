#include "pack/pack_family.h"

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "digest/canonical_tensor.h"

namespace onnx_prepack::pack {

// Each family's one object, defined in its own file.
const PackFamily& gemm_b_family();
const PackFamily& conv_filter_family();
const PackFamily& q_gemm_b_family();
const PackFamily& i8_gemm_b_family();

namespace {

const PackFamily* const* registry() {
  // Adding a family: its files plus one line here.
  static const PackFamily* const kFamilies[] = {
      &gemm_b_family(),
      &conv_filter_family(),
      &q_gemm_b_family(),
      &i8_gemm_b_family(),
  };
  return kFamilies;
}
constexpr size_t kFamilyCount = 4;

}  // namespace

std::span<const PackFamily* const> pack_families() { return {registry(), kFamilyCount}; }

const PackFamily* find_pack_family(std::string_view name) {
  for (const PackFamily* f : pack_families()) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

const PackFamily* family_of_format(std::string_view format_name, FormatInfo* format) {
  for (const PackFamily* f : pack_families()) {
    for (const FormatInfo& i : f->formats()) {
      if (i.name != format_name) continue;
      if (format != nullptr) *format = i;
      return f;
    }
  }
  return nullptr;
}

const PackFamily* family_for(const onnx::NodeProto& node, int input, int32_t data_type,
                             std::span<const int64_t> dims) {
  for (const PackFamily* f : pack_families()) {
    if (f->eligible(node, input, data_type, dims)) return f;
  }
  return nullptr;
}

resolve::PackRequest pack_request(const PackFamily& family, const WeightUse& use,
                                  device::IsaLevel level) {
  resolve::PackRequest r;
  r.source_name = use.source;
  for (const FormatInfo& f : family.accepted(use, level)) {
    resolve::AcceptableFormat a;
    a.name = std::string(f.name);
    a.format_version = std::string(f.version);
    a.required_architecture = std::string(f.architecture);
    a.check_dims = [&family, use, f](const onnx::TensorProto&, const onnx::StructTypeProto& type,
                                     std::span<const uint64_t> dims) {
      return family.check_entry(use, f, type, dims);
    };
    r.formats.push_back(std::move(a));
  }
  if (r.formats.empty()) {
    if (const std::optional<device::Machine> m = level_machine(level);
        m && !has_machine_formats(family, *m)) {
      r.no_format_detail = no_machine_format_message(family, *m);
    }
  }
  r.lineage = family.lineage(use);
  return r;
}

std::optional<device::Machine> level_machine(device::IsaLevel level) {
  switch (device::isa_chain(level)) {
    case 1:
      return device::Machine::kX86_64;
    case 2:
      return device::Machine::kAarch64;
    default:
      return std::nullopt;  // ref: either machine
  }
}

bool has_machine_formats(const PackFamily& family, device::Machine machine) {
  for (const FormatInfo& f : family.formats()) {
    const Result<device::Architecture> arch = device::parse_architecture(f.architecture);
    if (arch.ok() && arch->machine == machine) return true;
  }
  return false;
}

std::string no_machine_format_message(const PackFamily& family, device::Machine machine) {
  return "no packed format for family " + std::string(family.name()) + " on " +
         std::string(device::machine_name(machine));
}

namespace {

void walk_scope(const onnx::GraphProto& g, int depth, const std::set<std::string>& shadowed,
                const std::set<std::string>& body_initializers,
                const std::function<void(const ScopedNode&)>& fn) {
  for (const onnx::NodeProto& n : g.node()) {
    fn(ScopedNode{&n, depth, &shadowed, &body_initializers});
    for (const onnx::AttributeProto& a : n.attribute()) {
      std::vector<const onnx::GraphProto*> bodies;
      if (a.has_g()) bodies.push_back(&a.g());
      for (const onnx::GraphProto& b : a.graphs()) bodies.push_back(&b);
      for (const onnx::GraphProto* b : bodies) {
        std::set<std::string> inner = shadowed;
        std::set<std::string> own;
        for (const auto& i : b->input()) inner.insert(i.name());
        for (const auto& t : b->initializer()) {
          inner.insert(t.name());
          own.insert(t.name());
        }
        for (const auto& bn : b->node())
          for (const auto& o : bn.output()) inner.insert(o);
        walk_scope(*b, depth + 1, inner, own, fn);
      }
    }
  }
}

}  // namespace

void for_each_scoped_node(const onnx::GraphProto& g,
                          const std::function<void(const ScopedNode&)>& fn) {
  const std::set<std::string> none;
  walk_scope(g, 0, none, none, fn);
}

std::vector<ModelWeightUse> model_weight_uses(const format::Model& model) {
  const onnx::GraphProto& g = model.proto().graph();
  std::set<std::string> inputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  std::vector<ModelWeightUse> out;
  std::set<std::tuple<const PackFamily*, std::string, std::string>> seen;
  for_each_scoped_node(g, [&](const ScopedNode& sn) {
    const onnx::NodeProto& n = *sn.node;
    for (int i = 0; i < n.input_size(); ++i) {
      if (sn.shadowed->count(n.input(i))) continue;  // a body's own value
      const onnx::TensorProto* t = model.find_initializer(n.input(i));
      if (t == nullptr) continue;
      const std::vector<int64_t> dims(t->dims().begin(), t->dims().end());
      const PackFamily* family = family_for(n, i, t->data_type(), dims);
      if (family == nullptr) continue;
      ModelWeightUse u;
      u.family = family;
      u.use = {n.input(i), n.name().empty() ? n.op_type() : n.name(), &n, i, t->data_type(), dims,
               &model};
      if (!seen.insert({family, u.use.source, family->use_key(u.use)}).second) continue;
      u.graph_input = inputs.count(n.input(i)) > 0;
      u.duplicated = model.count_initializers(n.input(i)) != 1;
      out.push_back(std::move(u));
    }
  });
  return out;
}

ContentFn model_content(const format::Model& model) {
  // Copies (typed fields, unaligned raw bytes) kept per name for the function's life.
  struct Copy {
    std::vector<uint32_t> words;
    size_t size = 0;
  };
  auto copies = std::make_shared<std::map<std::string, Copy>>();
  return [&model, copies](const std::string& name) -> Result<std::span<const uint8_t>> {
    if (auto it = copies->find(name); it != copies->end()) {
      return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(it->second.words.data()),
                                      it->second.size);
    }
    const onnx::TensorProto* t = model.find_initializer(name);
    if (t == nullptr) return not_found("initializer '" + name + "' is not in the model");
    const std::string ctx = format::tensor_context(model.initializer_index(name), name);
    std::span<const uint8_t> content;
    std::vector<uint8_t> converted;
    auto tb = model.tensor_bytes(*t, ctx);
    if (tb.ok() &&
        (tb->storage == format::Storage::kRaw || tb->storage == format::Storage::kExternal)) {
      content = tb->bytes;
      // Raw bytes inside a protobuf string may be unaligned for float loads.
      if (reinterpret_cast<uintptr_t>(content.data()) % 4 == 0) return content;
    } else {
      digest::VectorSink sink;
      OP_ASSIGN_OR_RETURN(uint64_t n, digest::write_canonical_tensor(model, *t, ctx, sink));
      const auto& all = sink.bytes();
      converted.assign(all.end() - ptrdiff_t(n), all.end());
      content = converted;
    }
    Copy& copy = (*copies)[name];
    copy.words.assign((content.size() + 3) / 4, 0);
    copy.size = content.size();
    if (!content.empty()) std::memcpy(copy.words.data(), content.data(), content.size());
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(copy.words.data()), copy.size);
  };
}

}  // namespace onnx_prepack::pack
