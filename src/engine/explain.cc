#include "engine/explain.h"

#include <chrono>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "pack/pack_family.h"

namespace onnx_prepack::engine {
namespace {

using base::Json;

Json null_or(int v) { return v < 0 ? Json() : Json(int64_t(v)); }

Json candidate_json(const resolve::CandidateDecision& c) {
  Json o = Json::object();
  o["entry"] = null_or(c.entry);
  o["origin"] = c.entry >= 0 ? std::string("model") : c.origin;
  o["format"] = c.format;
  o["format_version"] = c.format_version;
  o["architecture"] = c.architecture;
  o["decision"] = c.chosen ? "chosen" : "rejected";
  o["reason"] = c.chosen ? Json() : Json(std::string(resolve::miss_reason_id(c.reason)));
  o["detail"] = c.detail;
  return o;
}

Json host_json(const ExplainReport& r) {
  const device::HostDescription& h = r.host;
  Json j = Json::object();
  j["device_type"] = h.device_type;
  j["architecture"] = h.architecture.to_string();
  j["detected"] = !h.pretended;
  j["isa_cap"] = h.isa_cap ? Json(std::string(device::isa_level_name(*h.isa_cap))) : Json();
  j["kernel_level"] = std::string(device::isa_level_name(r.level));
  j["runtime"] = r.runtime_name;
  j["runtime_version"] = r.runtime_version;
  return j;
}

Json weight_json(const ExplainedWeight& e, const format::Model& model) {
  const resolve::Resolution& r = e.resolution;
  Json jw = Json::object();
  jw["name"] = e.name;
  jw["consumer"] = e.consumer;
  jw["layout"] = e.layout;
  jw["decision"] = r.is_hit() ? "hit" : "miss";
  jw["reason"] = r.is_hit() ? Json() : Json(std::string(resolve::miss_reason_id(r.reason)));
  jw["detail"] = r.detail;
  jw["entry"] = r.is_hit() ? null_or(r.hit->entry) : Json();
  jw["origin"] = r.is_hit() ? (r.hit->entry >= 0 ? "model" : r.hit->cache_path) : Json();
  jw["format"] = r.is_hit() ? Json(r.hit->type->name()) : Json();
  jw["verified"] = r.verified;
  jw["memo_used"] = r.memo_used;
  jw["bytes_hashed"] = r.bytes_hashed;
  jw["bytes_mapped"] = r.bytes_mapped;
  jw["bytes_to_pack"] = r.bytes_to_pack;
  Json accept = Json::array();
  for (const resolve::AcceptableFormat& f : e.formats) {
    accept.push_back(Json(f.name + " v" + f.format_version));
  }
  jw["acceptable_formats"] = std::move(accept);
  Json cands = Json::array();
  for (const auto& c : r.candidates) {
    Json jc = candidate_json(c);
    if (c.entry >= 0) {
      Json lineage = Json::array();
      for (auto& i : pack::lineage_summary(model.proto().compiled_tensors(c.entry)))
        lineage.push_back(Json(i));
      jc["lineage"] = std::move(lineage);
    }
    cands.push_back(std::move(jc));
  }
  jw["candidates"] = std::move(cands);
  return jw;
}

}  // namespace

Result<ExplainReport> explain_model(const std::string& path, const ExplainOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  ExplainReport report;
  resolve::ResolverOptions opts;
  opts.verify = options.verify;
  opts.memo_dir = options.memo_dir;
  for (const std::string& name : options.fed_inputs) opts.fed_inputs.insert(name);
  report.host = device::HostDescription::detect();
  if (!options.arch.empty()) {
    auto h = device::HostDescription::pretend(options.arch);
    if (!h.ok()) return h.status().with_context("--arch");
    report.host = std::move(h).value();
  }
  if (options.cache.enabled()) {
    OP_ASSIGN_OR_RETURN(
        report.store, resolve::CacheStore::open(options.cache.dir, resolve::CacheMode::kReadOnly));
    opts.cache = report.store.get();
  }
  auto loaded = format::Model::load(path);
  if (!loaded.ok()) return loaded.status().with_context(path);
  report.model = std::shared_ptr<const format::Model>(std::move(*loaded));
  opts.pool = &base::ThreadPool::shared();

  report.level = device::kernel_level(report.host);
  report.verify = opts.verify;
  report.runtime_name = opts.runtime_name;
  report.runtime_version = opts.runtime_version;
  resolve::Resolver resolver(*report.model, report.host, opts);
  auto explain = [&](std::string name, std::string consumer, std::string layout,
                     resolve::PackRequest req) {
    ExplainedWeight e;
    e.name = std::move(name);
    e.consumer = std::move(consumer);
    e.layout = std::move(layout);
    e.formats = req.formats;
    e.resolution = resolver.resolve(req);
    report.weights.push_back(std::move(e));
  };
  // Every family's weights, requested exactly as the runtime requests them
  // (pack::pack_request at the kernel level): explain prints the run's decisions.
  for (const pack::ModelWeightUse& u : pack::model_weight_uses(*report.model)) {
    explain(u.use.source, u.use.consumer, u.family->label(u.use),
            pack::pack_request(*u.family, u.use, report.level));
  }
  report.diagnostics = resolver.diagnostics();
  report.totals = resolver.totals();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

Json explain_json(const ExplainReport& report) {
  Json jweights = Json::array();
  for (const ExplainedWeight& e : report.weights) jweights.push_back(weight_json(e, *report.model));
  Json diags = Json::array();
  for (const check::Diagnostic& d : report.diagnostics) {
    Json o = Json::object();
    o["rule"] = d.rule;
    o["path"] = d.path;
    o["message"] = d.message;
    diags.push_back(std::move(o));
  }
  const resolve::ResolverTotals& tot = report.totals;
  Json j = Json::object();
  j["model"] = report.model->path();
  j["host"] = host_json(report);
  j["verify"] = std::string(resolve::verify_policy_name(report.verify));
  j["cache"] = report.store ? Json(report.store->dir()) : Json();
  j["weights"] = std::move(jweights);
  j["ignored_entries"] = std::move(diags);
  Json t = Json::object();
  t["weights"] = uint64_t(report.weights.size());
  t["hits"] = tot.hits;
  t["misses"] = tot.misses;
  t["bytes_mapped"] = tot.bytes_mapped;
  t["bytes_hashed"] = tot.bytes_hashed;
  t["bytes_to_pack"] = tot.bytes_to_pack;
  t["memo_hits"] = tot.memo_hits;
  t["seconds"] = report.seconds;
  j["totals"] = std::move(t);
  return j;
}

}  // namespace onnx_prepack::engine
