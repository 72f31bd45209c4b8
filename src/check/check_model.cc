// check_model: metadata, graphs, devices and compiled tensors (format.md §4.2), on
// top of the struct-type rules of check_struct_types.cc.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <set>
#include <tuple>

#include "check/checker.h"

namespace onnx_prepack::check {
namespace {

// Hand-written matchers instead of std::regex: architecture strings come from
// untrusted files, and libstdc++'s regex recurses per character (stack
// overflow on long input).
bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// ^(x86_64|aarch64)(-[a-z0-9_.]+)*$
bool cpu_arch_grammar_ok(std::string_view arch) {
  std::string_view rest;
  if (arch.substr(0, 6) == "x86_64")
    rest = arch.substr(6);
  else if (arch.substr(0, 7) == "aarch64")
    rest = arch.substr(7);
  else
    return false;
  while (!rest.empty()) {
    if (rest[0] != '-') return false;
    size_t n = 1;
    while (n < rest.size() && (is_lower_alnum(rest[n]) || rest[n] == '_' || rest[n] == '.')) ++n;
    if (n == 1) return false;
    rest = rest.substr(n);
  }
  return true;
}

// ^sm_[0-9]+[a-z]?$
bool cuda_arch_grammar_ok(std::string_view arch) {
  if (arch.substr(0, 3) != "sm_") return false;
  size_t i = 3;
  while (i < arch.size() && is_digit(arch[i])) ++i;
  if (i == 3) return false;
  if (i < arch.size() && arch[i] >= 'a' && arch[i] <= 'z') ++i;
  return i == arch.size();
}

// ^gfx[0-9a-f]+$
bool rocm_arch_grammar_ok(std::string_view arch) {
  if (arch.substr(0, 3) != "gfx" || arch.size() == 3) return false;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (!is_digit(arch[i]) && !(arch[i] >= 'a' && arch[i] <= 'f')) return false;
  }
  return true;
}

std::string idx(std::string_view base, int i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

std::string deterministic_bytes(const google::protobuf::MessageLite& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

bool known_device_type(std::string_view t) {
  static constexpr std::string_view kKnown[] = {"cpu",    "cuda",   "rocm", "metal",
                                                "vulkan", "opencl", "dml",  "npu"};
  for (auto k : kKnown) {
    if (k == t) return true;
  }
  return false;
}

// format.md §6 grammar: cpu `<machine>(-<feature>)*`, cuda `sm_<digits>[a-z]?`, rocm `gfx<hex>`.
bool architecture_grammar_ok(std::string_view type, const std::string& arch) {
  if (arch.empty()) return true;  // no constraint
  if (type == "cpu") return cpu_arch_grammar_ok(arch);
  if (type == "cuda") return cuda_arch_grammar_ok(arch);
  if (type == "rocm") return rocm_arch_grammar_ok(arch);
  return true;  // other types: no grammar known, the type warning says so
}

void walk_graph(Checker& c, const onnx::GraphProto& g, const std::string& path);

void walk_nodes(Checker& c, const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes,
                const std::string& base) {
  for (int n = 0; n < nodes.size(); ++n) {
    const auto& node = nodes[n];
    std::string pn = idx(base, n);
    c.check_metadata(node.metadata_props(), pn + ".metadata_props");
    for (int a = 0; a < node.attribute_size(); ++a) {
      const auto& attr = node.attribute(a);
      std::string pa = idx(pn + ".attribute", a);
      if (attr.has_tp()) c.check_graph_type(attr.tp(), pa + ".tp");
      for (int k = 0; k < attr.type_protos_size(); ++k) {
        c.check_graph_type(attr.type_protos(k), idx(pa + ".type_protos", k));
      }
      if (attr.has_struct_()) c.check_value(attr.struct_(), pa + ".struct");
      for (int k = 0; k < attr.structs_size(); ++k)
        c.check_value(attr.structs(k), idx(pa + ".structs", k));
      if (attr.has_t()) c.check_metadata(attr.t().metadata_props(), pa + ".t.metadata_props");
      if (attr.has_g()) walk_graph(c, attr.g(), pa + ".g");
      for (int k = 0; k < attr.graphs_size(); ++k)
        walk_graph(c, attr.graphs(k), idx(pa + ".graphs", k));
    }
  }
}

void walk_values(Checker& c, const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
                 const std::string& base) {
  for (int i = 0; i < values.size(); ++i) {
    std::string pv = idx(base, i);
    c.check_metadata(values[i].metadata_props(), pv + ".metadata_props");
    if (values[i].has_type()) c.check_graph_type(values[i].type(), pv + ".type");
  }
}

void walk_graph(Checker& c, const onnx::GraphProto& g, const std::string& path) {
  c.check_metadata(g.metadata_props(), path + ".metadata_props");
  walk_values(c, g.input(), path + ".input");
  walk_values(c, g.output(), path + ".output");
  walk_values(c, g.value_info(), path + ".value_info");
  for (int i = 0; i < g.initializer_size(); ++i) {
    c.check_metadata(g.initializer(i).metadata_props(),
                     idx(path + ".initializer", i) + ".metadata_props");
  }
  walk_nodes(c, g.node(), path + ".node");
}

}  // namespace

Checker::Checker(const format::Model& model, const CheckOptions& options, CheckReport* report)
    : model_(model), options_(options), report_(report) {}

void Checker::error(std::string_view rule, const std::string& path, const std::string& message) {
  if (!seen_.emplace(std::string(rule), path).second) return;
  report_->errors.push_back({std::string(rule), path, message});
}

void Checker::warning(std::string_view rule, const std::string& path, const std::string& message) {
  if (!seen_.emplace(std::string(rule), path).second) return;
  report_->warnings.push_back({std::string(rule), path, message});
}

void Checker::check_metadata(
    const google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>& props,
    const std::string& path) {
  if (props.size() < 2) return;
  std::map<std::string_view, int> keys;
  for (int i = 0; i < props.size(); ++i) {
    auto [it, fresh] = keys.emplace(props[i].key(), i);
    if (!fresh) {
      std::string p = idx(path, i);
      error(rules::kMetadataDuplicateKey, p,
            p + ": key '" + props[i].key() + "' repeats " + idx(path, it->second));
    }
  }
}

void Checker::run() {
  const auto& m = proto();
  check_metadata(m.metadata_props(), "metadata_props");
  check_catalogue();
  check_graphs(*this, m);
  check_devices_and_compiled(*this, model_, options_, report_);
}

void check_graphs(Checker& c, const onnx::ModelProto& m) {
  if (m.has_graph()) walk_graph(c, m.graph(), "graph");
  for (int f = 0; f < m.functions_size(); ++f) {
    std::string pf = idx("functions", f);
    c.check_metadata(m.functions(f).metadata_props(), pf + ".metadata_props");
    walk_values(c, m.functions(f).value_info(), pf + ".value_info");
    walk_nodes(c, m.functions(f).node(), pf + ".node");
  }
  for (int t = 0; t < m.training_info_size(); ++t) {
    std::string pt = idx("training_info", t);
    if (m.training_info(t).has_initialization())
      walk_graph(c, m.training_info(t).initialization(), pt + ".initialization");
    if (m.training_info(t).has_algorithm())
      walk_graph(c, m.training_info(t).algorithm(), pt + ".algorithm");
  }
}

// format.md §4.6: the resolver refuses, under full and memo, an entry whose payload it
// cannot check; say so before a load does.
void check_payload_digest(Checker& c, const onnx::CompiledTensorProto& ct, const std::string& pc) {
  const auto& props = ct.metadata_props();
  for (int i = 0; i < props.size(); ++i) {
    if (props[i].key() != "payload_digest") continue;
    const std::string& alg = ct.digest_algorithm();
    const bool known = alg == "blake3" || alg == "sha256";
    if (known && !is_hex64(props[i].value())) {
      c.warning(rules::kPayloadDigestFormat, idx(pc + ".metadata_props", i) + ".value",
                pc + ": payload_digest '" + props[i].value().substr(0, 80) +
                    "' is not 64 lower-case hex digits; verified loads report corrupt_payload");
    }
    return;
  }
  c.warning(rules::kPayloadUnverifiable, pc + ".metadata_props",
            pc + ": no payload_digest; under verify full and memo the entry always misses "
                 "(unverifiable_payload), under off it is used unchecked");
}

void check_devices_and_compiled(Checker& c, const format::Model& model, const CheckOptions&,
                                CheckReport* report) {
  const auto& m = model.proto();
  std::vector<bool> device_bad(size_t(m.devices_size()), false);
  std::map<std::string, int> descriptors;
  for (int d = 0; d < m.devices_size(); ++d) {
    const auto& dev = m.devices(d);
    std::string pd = idx("devices", d);
    size_t before = report->errors.size();
    c.check_metadata(dev.metadata_props(), pd + ".metadata_props");
    auto [it, fresh] = descriptors.emplace(deterministic_bytes(dev), d);
    if (!fresh) {
      c.error(rules::kDeviceDuplicate, pd,
              pd + ": descriptor (type '" + dev.type() + "', architecture '" + dev.architecture() +
                  "') is identical to devices[" + std::to_string(it->second) + "]");
    }
    if (!known_device_type(dev.type())) {
      c.warning(rules::kUnknownDeviceType, pd + ".type",
                pd + ": device type '" + dev.type() +
                    "' is unknown to this build; entries for it always miss");
    } else if (!architecture_grammar_ok(dev.type(), dev.architecture())) {
      c.warning(rules::kUnknownArchitecture, pd + ".architecture",
                pd + ": architecture '" + dev.architecture() + "' does not follow the " +
                    dev.type() + " grammar; entries for it always miss");
    }
    device_bad[size_t(d)] = report->errors.size() != before;
  }

  using Key = std::tuple<std::string, int32_t, std::string>;
  std::map<Key, int> keys;
  for (int k = 0; k < m.compiled_tensors_size(); ++k) {
    const auto& ct = m.compiled_tensors(k);
    std::string pc = idx("compiled_tensors", k);
    size_t before = report->errors.size();
    bool bad = false;
    int count = model.count_initializers(ct.source_name());
    if (count == 0) {
      c.error(rules::kSourceMissing, pc + ".source_name",
              pc + ": source_name '" + ct.source_name() +
                  "' names no initializer of the top-level graph");
    } else if (count > 1) {
      c.warning(rules::kSourceAmbiguous, pc + ".source_name",
                pc + ": source_name '" + ct.source_name() + "' names " + std::to_string(count) +
                    " initializers; the entry always misses");
    }
    const int32_t dev = ct.device();
    bool dev_ok = dev >= 0 && dev < m.devices_size();
    if (!dev_ok) {
      c.error(rules::kDeviceRange, pc + ".device",
              pc + ": device " + std::to_string(dev) + " is out of range (" +
                  std::to_string(m.devices_size()) + " devices)");
    } else if (device_bad[size_t(dev)]) {
      bad = true;  // reported at devices[dev]
    }
    if (ct.source_digest().empty()) {
      c.error(rules::kDigestEmpty, pc + ".source_digest", pc + ": source_digest is empty");
    }
    const std::string& alg = ct.digest_algorithm();
    if (alg.empty()) {
      c.error(rules::kAlgorithmEmpty, pc + ".digest_algorithm", pc + ": digest_algorithm is empty");
    } else if (alg == "blake3" || alg == "sha256") {
      if (!ct.source_digest().empty() && ct.source_digest().size() != 32) {
        c.error(rules::kDigestLength, pc + ".source_digest",
                pc + ": " + alg + " digest is " + std::to_string(ct.source_digest().size()) +
                    " bytes, expected 32");
      }
    } else {
      c.warning(rules::kUnknownAlgorithm, pc + ".digest_algorithm",
                pc + ": digest_algorithm '" + alg +
                    "' is unknown to this build; the entry always misses");
    }
    if (!ct.has_value()) {
      c.error(rules::kValueMissing, pc + ".value", pc + ": has no value");
    } else if (c.check_value(ct.value(), pc + ".value")) {
      bad = true;
    }
    c.check_metadata(ct.metadata_props(), pc + ".metadata_props");
    c.check_lineage(ct, pc + ".metadata_props");
    check_payload_digest(c, ct, pc);
    if (dev_ok && ct.has_value()) {
      const auto& v = ct.value();
      std::string type_key;
      if (v.type() >= 0 && !v.has_struct_type()) {
        type_key = "#" + std::to_string(v.type());
      } else if (v.type() == -1 && v.has_struct_type()) {
        type_key = "@" + deterministic_bytes(v.struct_type());
      }
      if (!type_key.empty()) {
        auto [it, fresh] = keys.emplace(Key{ct.source_name(), dev, std::move(type_key)}, k);
        if (!fresh) {
          c.error(rules::kDuplicateKey, pc,
                  pc + ": (source_name '" + ct.source_name() + "', device " + std::to_string(dev) +
                      ", same physical type) repeats compiled_tensors[" +
                      std::to_string(it->second) + "]");
        }
      }
    }
    if (bad || report->errors.size() != before) report->invalid_compiled_tensors.insert(k);
  }
}

CheckReport check_model(const format::Model& model, const CheckOptions& options) {
  CheckReport report;
  Checker checker(model, options, &report);
  checker.run();
  return report;
}

}  // namespace onnx_prepack::check
