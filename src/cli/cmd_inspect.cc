// onnx-prepack inspect MODEL [--json]
#include <algorithm>
#include <cstdio>
#include <map>

#include "base/json.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/struct_type_summary.h"
#include "cli/text.h"
#include "format/data_type.h"
#include "format/model.h"
#include "format/tensor_info.h"

namespace onnx_prepack::cli {
namespace {

using base::Json;

constexpr size_t kLargestShown = 10;

Json dims_json(const onnx::TensorProto& t) {
  Json a = Json::array();
  for (auto d : t.dims()) a.push_back(Json(int64_t(d)));
  return a;
}

Json value_infos_json(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vs) {
  Json a = Json::array();
  for (const auto& v : vs) {
    Json o = Json::object();
    o["name"] = v.name();
    o["type"] = format::type_string(v.type());
    a.push_back(std::move(o));
  }
  return a;
}

Json build(const format::Model& model) {
  const auto& p = model.proto();
  const auto& g = p.graph();
  Json j = Json::object();
  j["path"] = model.path();
  j["ir_version"] = int64_t(p.ir_version());
  Json opsets = Json::array();
  for (const auto& o : p.opset_import()) {
    Json e = Json::object();
    e["domain"] = o.domain();
    e["version"] = int64_t(o.version());
    opsets.push_back(std::move(e));
  }
  j["opsets"] = std::move(opsets);
  j["producer"] =
      p.producer_name() + (p.producer_version().empty() ? "" : " " + p.producer_version());
  j["graph_name"] = g.name();
  j["inputs"] = value_infos_json(g.input());
  j["outputs"] = value_infos_json(g.output());

  std::map<std::string, int64_t> ops;
  for (const auto& n : g.node()) {
    ops[n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type()
                                                      : n.domain() + "::" + n.op_type()]++;
  }
  Json nodes = Json::object();
  for (const auto& [k, v] : ops) nodes[k] = v;
  j["nodes"] = std::move(nodes);
  j["node_count"] = int64_t(g.node_size());

  Json inits = Json::object();
  uint64_t total = 0;
  Json items = Json::array();
  for (int i = 0; i < g.initializer_size(); ++i) {
    const auto& t = g.initializer(i);
    uint64_t bytes = format::tensor_byte_size(t);
    total += bytes;
    Json o = Json::object();
    o["name"] = t.name();
    o["data_type"] = std::string(format::data_type_name(t.data_type()));
    o["dims"] = dims_json(t);
    o["bytes"] = bytes;
    o["storage"] = std::string(format::storage_name(format::storage_of(t)));
    if (format::storage_of(t) == format::Storage::kExternal) {
      auto ref = format::parse_external_entries(t.external_data());
      if (ref.ok()) {
        o["location"] = ref->location;
        o["offset"] = ref->offset;
      }
    }
    items.push_back(std::move(o));
  }
  inits["count"] = int64_t(g.initializer_size());
  inits["bytes"] = total;
  inits["items"] = std::move(items);
  j["initializers"] = std::move(inits);

  auto consts = model.constant_tensors();
  uint64_t cbytes = 0;
  for (const auto& c : consts) cbytes += format::tensor_byte_size(*c.tensor);
  Json cj = Json::object();
  cj["count"] = int64_t(consts.size());
  cj["bytes"] = cbytes;
  j["constants"] = std::move(cj);

  Json sts = Json::array();
  for (int i = 0; i < p.struct_types_size(); ++i)
    sts.push_back(struct_type_summary(p, p.struct_types(i)));
  j["struct_types"] = std::move(sts);

  Json devs = Json::array();
  for (const auto& d : p.devices()) {
    Json o = Json::object();
    o["type"] = d.type();
    if (d.has_index()) o["index"] = int64_t(d.index());
    o["architecture"] = d.architecture();
    o["runtime"] = d.runtime();
    o["runtime_version"] = d.runtime_version();
    devs.push_back(std::move(o));
  }
  j["devices"] = std::move(devs);

  Json cts = Json::array();
  for (const auto& c : p.compiled_tensors()) {
    Json o = Json::object();
    o["source"] = c.source_name();
    o["device"] = int64_t(c.device());
    const auto& v = c.value();
    std::string fmt;
    if (v.type() >= 0 && v.type() < p.struct_types_size())
      fmt = p.struct_types(v.type()).name();
    else if (v.has_struct_type())
      fmt = v.struct_type().name();
    o["format"] = fmt;
    o["digest_algorithm"] = c.digest_algorithm();
    o["digest"] = base::hex_lower(reinterpret_cast<const uint8_t*>(c.source_digest().data()),
                                  c.source_digest().size());
    if (v.external_data_size() > 0) {
      o["storage"] = "external";
      auto ref = format::parse_external_entries(v.external_data());
      if (ref.ok()) {
        o["payload_bytes"] = ref->length < 0 ? Json(nullptr) : Json(int64_t(ref->length));
        o["location"] = ref->location;
        o["offset"] = ref->offset;
      }
    } else {
      o["storage"] = "inline";
      o["payload_bytes"] = uint64_t(v.raw_data().size());
    }
    cts.push_back(std::move(o));
  }
  j["compiled_tensors"] = std::move(cts);
  return j;
}

void print_human(const Json& j, const format::Model& model) {
  const auto& p = model.proto();
  const auto& g = p.graph();
  std::printf("model        %s\n", model.path().c_str());
  std::printf("ir_version   %lld\n", (long long)p.ir_version());
  std::printf("opsets      ");
  for (const auto& o : p.opset_import()) {
    std::printf(" %s:%lld", o.domain().empty() ? "ai.onnx" : o.domain().c_str(),
                (long long)o.version());
  }
  std::printf("\nproducer     %s %s\n", p.producer_name().c_str(), p.producer_version().c_str());
  std::printf("\ninputs\n");
  for (const auto& v : g.input())
    std::printf("  %-32s %s\n", v.name().c_str(), format::type_string(v.type()).c_str());
  std::printf("outputs\n");
  for (const auto& v : g.output())
    std::printf("  %-32s %s\n", v.name().c_str(), format::type_string(v.type()).c_str());

  std::printf("\nnodes (%d)\n", g.node_size());
  std::map<std::string, int> ops;
  for (const auto& n : g.node()) ops[n.op_type()]++;
  std::vector<std::pair<int, std::string>> sorted;
  for (auto& [k, v] : ops) sorted.push_back({-v, k});
  std::sort(sorted.begin(), sorted.end());
  for (auto& [nv, k] : sorted) std::printf("  %-24s %6d\n", k.c_str(), -nv);

  uint64_t total = 0;
  std::vector<std::pair<uint64_t, int>> by_size;
  for (int i = 0; i < g.initializer_size(); ++i) {
    uint64_t b = format::tensor_byte_size(g.initializer(i));
    total += b;
    by_size.push_back({b, i});
  }
  std::sort(by_size.begin(), by_size.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::printf("\ninitializers %d, %s\n", g.initializer_size(), human_bytes(total).c_str());
  for (size_t k = 0; k < std::min(kLargestShown, by_size.size()); ++k) {
    const auto& t = g.initializer(by_size[k].second);
    std::printf("  %-40s %-9s %-20s %12s  %s\n", t.name().c_str(),
                std::string(format::data_type_name(t.data_type())).c_str(),
                format::dims_string(t).c_str(), human_bytes(by_size[k].first).c_str(),
                std::string(format::storage_name(format::storage_of(t))).c_str());
  }
  if (by_size.size() > kLargestShown)
    std::printf("  ... %zu more\n", by_size.size() - kLargestShown);

  auto consts = model.constant_tensors();
  uint64_t cbytes = 0;
  for (const auto& c : consts) cbytes += format::tensor_byte_size(*c.tensor);
  std::printf("constants    %zu, %s\n", consts.size(), human_bytes(cbytes).c_str());

  std::printf("\nstruct_types %d\n", p.struct_types_size());
  for (const auto& st : j.as_object()) {
    if (st.first != "struct_types") continue;
    for (const auto& e : st.second.as_array()) std::printf("  %s\n", e.dump(-1).c_str());
  }
  std::printf("devices      %d\n", p.devices_size());
  for (int i = 0; i < p.devices_size(); ++i) {
    const auto& d = p.devices(i);
    std::printf("  [%d] %-6s %-28s %s %s\n", i, d.type().c_str(), d.architecture().c_str(),
                d.runtime().c_str(), d.runtime_version().c_str());
  }
  std::printf("compiled_tensors %d\n", p.compiled_tensors_size());
  for (const auto& st : j.as_object()) {
    if (st.first != "compiled_tensors") continue;
    for (const auto& e : st.second.as_array()) {
      std::string src, fmt, storage;
      int64_t dev = 0;
      std::string bytes;
      for (const auto& [k, v] : e.as_object()) {
        std::string s = v.dump(-1);
        if (k == "source")
          src = s;
        else if (k == "format")
          fmt = s;
        else if (k == "storage")
          storage = s;
        else if (k == "device")
          dev = std::stoll(s);
        else if (k == "payload_bytes")
          bytes = s;
      }
      std::printf("  %-40s dev %lld  %-36s %12s  %s\n", src.c_str(), (long long)dev, fmt.c_str(),
                  bytes.c_str(), storage.c_str());
    }
  }
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  auto args = Args::parse(argc, argv, {"json", "help"}, {});
  if (!args.ok()) return report_error("inspect", args.status());
  if (args->has("help") || args->positionals().size() != 1) {
    std::fprintf(args->has("help") ? stdout : stderr,
                 "usage: onnx-prepack inspect MODEL [--json]\n");
    return args->has("help") ? kExitOk : kExitUsage;
  }
  auto model = format::Model::load(args->positionals()[0]);
  if (!model.ok()) return report_error("inspect", model.status());
  Json j = build(**model);
  if (args->has("json")) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    print_human(j, **model);
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
