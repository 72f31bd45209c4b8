#include "engine/model_reports.h"

#include <algorithm>
#include <map>

#include "base/json.h"
#include "engine/struct_type_summary.h"
#include "format/data_type.h"
#include "format/model.h"
#include "format/tensor_info.h"

namespace onnx_prepack::engine {

using base::Json;

Json check_json(const check::CheckReport& report) {
  auto diagnostics = [](const std::vector<check::Diagnostic>& ds) {
    Json a = Json::array();
    for (const auto& d : ds) {
      Json o = Json::object();
      o["rule"] = d.rule;
      o["path"] = d.path;
      o["message"] = d.message;
      a.push_back(std::move(o));
    }
    return a;
  };
  Json j = Json::object();
  j["valid"] = report.valid();
  j["errors"] = diagnostics(report.errors);
  j["warnings"] = diagnostics(report.warnings);
  return j;
}

Json digest_json(const onnx::TensorProto& t, const digest::TensorDigest& d,
                 digest::Algorithm algorithm) {
  Json o = Json::object();
  o["name"] = t.name();
  o["data_type"] = std::string(format::data_type_name(t.data_type()));
  Json dims = Json::array();
  for (auto dim : t.dims()) dims.push_back(Json(int64_t(dim)));
  o["dims"] = std::move(dims);
  o["bytes"] = d.content_bytes;
  o["algorithm"] = std::string(digest::algorithm_name(algorithm));
  o["digest"] = base::hex_lower(d.digest.data(), d.digest.size());
  return o;
}

namespace {

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

}  // namespace

Json inspect_json(const format::Model& model) {
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

}  // namespace onnx_prepack::engine
