#include "engine/report_json.h"

namespace onnx_prepack::engine {

using base::Json;

Json compile_json(const CompileSummary& summary) {
  Json o = Json::object();
  o["entries"] = summary.entries;
  o["payload_bytes"] = summary.payload_bytes;
  o["seconds"] = summary.seconds;
  Json ts = Json::array();
  for (const auto& a : summary.targets) ts.push_back(Json(a));
  o["targets"] = std::move(ts);
  o["weights"] = summary.weights;
  o["lifted_constants"] = int64_t(summary.lifted);
  Json sk = Json::array();
  for (const SkippedWeight& w : summary.skipped) {
    Json j = Json::object();
    j["name"] = w.name;
    j["family"] = w.family.empty() ? Json() : Json(w.family);
    j["layout"] = w.layout;
    j["reason"] = w.reason;
    sk.push_back(std::move(j));
  }
  o["skipped"] = std::move(sk);
  return o;
}

Json weight_json(const runtime::WeightDecision& d) {
  Json w = Json::object();
  w["name"] = d.name;
  w["decision"] = d.decision;
  w["reason"] = d.reason;
  w["detail"] = d.detail;
  w["format"] = d.format;
  w["verified"] = d.verified;
  w["stored"] = d.stored;
  if (!d.store_error.empty()) w["store_error"] = d.store_error;
  w["bytes_mapped"] = d.bytes_mapped;
  w["bytes_hashed"] = d.bytes_hashed;
  w["bytes_packed"] = d.bytes_packed;
  return w;
}

Json totals_json(const runtime::PreparedTotals& tot, uint64_t bytes_populated) {
  Json totals = Json::object();
  totals["hits"] = tot.hits;
  totals["misses"] = tot.misses;
  totals["stored"] = tot.stored;
  totals["bytes_mapped"] = tot.bytes_mapped;
  totals["bytes_hashed"] = tot.bytes_hashed;
  totals["bytes_packed"] = tot.bytes_packed;
  totals["bytes_populated"] = bytes_populated;
  return totals;
}

Json plan_json(const runtime::PlanStats& ps) {
  Json plan = Json::object();
  plan["nodes"] = uint64_t(ps.nodes);
  plan["kernels"] = uint64_t(ps.kernels);
  plan["folded"] = uint64_t(ps.folded);
  plan["aliases"] = uint64_t(ps.aliases);
  plan["fused"] = uint64_t(ps.fused);
  plan["qdq_exact"] = uint64_t(ps.qdq_exact);
  plan["qdq_integer"] = uint64_t(ps.qdq_integer);
  plan["transposes"] = uint64_t(ps.transposes);
  plan["transposes_folded"] = uint64_t(ps.transposes_folded);
  plan["patterns_fused"] = uint64_t(ps.patterns_fused);
  plan["attention_fused"] = uint64_t(ps.attention_fused);
  plan["conv_epilogues"] = uint64_t(ps.conv_epilogues);
  plan["arena_bytes"] = ps.arena_bytes;
  plan["value_bytes"] = ps.value_bytes;
  return plan;
}

}  // namespace onnx_prepack::engine
