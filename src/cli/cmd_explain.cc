// onnx-prepack explain MODEL [--arch STR] [--verify full|memo|off] [--cache DIR]
//                            [--memo-dir DIR] [--input NAME]... [--fail-on-miss] [--json]
// For every eligible weight (constant B of MatMul/Gemm), the resolver's
// decision on each candidate entry, the chosen one, and totals (SPEC 4.3, 7.3).
#include <chrono>
#include <cstdio>
#include <map>

#include "base/json.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/text.h"
#include "device/device_match.h"
#include "format/data_type.h"
#include "format/model.h"
#include "format/tensor_info.h"
#include "pack/format_list.h"
#include "pack/gemm_b_weights.h"
#include "pack/q_gemm_b.h"
#include "resolve/resolver.h"

namespace onnx_prepack::cli {
namespace {

using base::Json;

device::IsaLevel level_of(const device::HostDescription& h) {
  using device::Feature;
  const auto& f = h.architecture.features;
  const bool avx2 = f.has(Feature::kAvx2) && f.has(Feature::kFma) && f.has(Feature::kF16c);
  const bool avx512 = avx2 && f.has(Feature::kAvx512f) && f.has(Feature::kAvx512bw) &&
                      f.has(Feature::kAvx512dq) && f.has(Feature::kAvx512vl);
  return avx512 ? device::IsaLevel::kAvx512
         : avx2 ? device::IsaLevel::kAvx2
                : device::IsaLevel::kRef;
}

Json null_or(int v) { return v < 0 ? Json() : Json(int64_t(v)); }

std::string decision_of(const resolve::CandidateDecision& c) {
  if (c.chosen) return "chosen";
  return std::string(resolve::miss_reason_id(c.reason));
}

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

Json host_json(const device::HostDescription& h, const resolve::ResolverOptions& o) {
  Json j = Json::object();
  j["device_type"] = h.device_type;
  j["architecture"] = h.architecture.to_string();
  j["detected"] = !h.pretended;
  j["isa_cap"] = h.isa_cap ? Json(std::string(device::isa_level_name(*h.isa_cap))) : Json();
  j["kernel_level"] = std::string(device::isa_level_name(level_of(h)));
  j["runtime"] = o.runtime_name;
  j["runtime_version"] = o.runtime_version;
  return j;
}

}  // namespace

int cmd_explain(int argc, char** argv) {
  auto parsed = Args::parse(argc, argv, {"json", "fail-on-miss"},
                            {"arch", "verify", "cache", "memo-dir", "input"});
  if (!parsed.ok()) return report_error("explain", parsed.status());
  const Args& args = *parsed;
  if (args.positionals().size() != 1) {
    std::fprintf(stderr,
                 "usage: onnx-prepack explain MODEL [--arch STR] [--verify full|memo|off] "
                 "[--cache DIR] [--memo-dir DIR] [--input NAME]... [--fail-on-miss] [--json]\n");
    return kExitUsage;
  }
  const auto t0 = std::chrono::steady_clock::now();

  resolve::ResolverOptions opts;
  if (auto v = args.get("verify")) {
    auto p = resolve::verify_policy_from_name(*v);
    if (!p) {
      return report_error("explain",
                          invalid_argument("--verify '" + *v + "': expected full, memo or off"));
    }
    opts.verify = *p;
  }
  if (auto d = args.get("memo-dir")) opts.memo_dir = *d;
  for (const std::string& name : args.get_all("input")) opts.fed_inputs.insert(name);

  device::HostDescription host = device::HostDescription::detect();
  if (auto a = args.get("arch")) {
    auto h = device::HostDescription::pretend(*a);
    if (!h.ok()) return report_error("explain", h.status().with_context("--arch"));
    host = std::move(h).value();
  }
  std::unique_ptr<resolve::CacheStore> store;
  if (auto c = args.get("cache")) {
    // explain only reads: the store is opened read-only.
    auto s = resolve::CacheStore::open(*c, resolve::CacheMode::kReadOnly);
    if (!s.ok()) return report_error("explain", s.status());
    store = std::move(s).value();
    opts.cache = store.get();
  }

  auto loaded = format::Model::load(args.positionals()[0]);
  if (!loaded.ok())
    return report_error("explain", loaded.status().with_context(args.positionals()[0]));
  const format::Model& model = **loaded;
  base::ThreadPool& pool = base::ThreadPool::shared();
  opts.pool = &pool;

  const device::IsaLevel level = level_of(host);
  resolve::Resolver resolver(model, host, opts);
  const std::vector<pack::GemmBWeight> weights = pack::gemm_b_weights(model);

  Json jweights = Json::array();
  std::string text;
  char line[512];
  // GEMM B weights, then MatMulNBits weights (lineage-bound, pack/q_gemm_b.h).
  struct Weight {
    std::string name, consumer, layout;
    resolve::PackRequest req;
  };
  std::vector<Weight> items;
  for (const pack::GemmBWeight& w : weights) {
    resolve::PackRequest req;
    req.source_name = w.name;
    req.formats = pack::gemm_b_acceptable_formats(w.layout, w.data_type, level);
    items.push_back({w.name, w.consumer, w.layout == kernels::PackSourceLayout::kKN ? "kn" : "nk",
                     std::move(req)});
  }
  for (const pack::QGemmBJob& job : pack::q_gemm_b_jobs(model)) {
    items.push_back({job.source, job.node->name().empty() ? "MatMulNBits" : job.node->name(),
                     "n_kblocks_blob", pack::q_gemm_b_request(job)});
  }
  for (const Weight& w : items) {
    const resolve::PackRequest& req = w.req;
    resolve::Resolution r = resolver.resolve(req);
    Json jw = Json::object();
    jw["name"] = w.name;
    jw["consumer"] = w.consumer;
    jw["layout"] = w.layout;
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
    for (const resolve::AcceptableFormat& f : req.formats) {
      accept.push_back(Json(f.name + " v" + f.format_version));
    }
    jw["acceptable_formats"] = std::move(accept);
    Json cands = Json::array();
    for (const auto& c : r.candidates) {
      Json jc = candidate_json(c);
      if (c.entry >= 0) {
        Json lineage = Json::array();
        for (auto& i : pack::lineage_summary(model.proto().compiled_tensors(c.entry))) {
          lineage.push_back(Json(i));
        }
        jc["lineage"] = std::move(lineage);
      }
      cands.push_back(std::move(jc));
    }
    jw["candidates"] = std::move(cands);
    jweights.push_back(std::move(jw));

    if (r.is_hit()) {
      const std::string where = r.hit->entry >= 0
                                    ? "compiled_tensors[" + std::to_string(r.hit->entry) + "]"
                                    : "cache " + r.hit->cache_path;
      std::snprintf(line, sizeof line, "%s (%s): hit %s, %s, %s mapped%s\n", w.name.c_str(),
                    w.consumer.c_str(), where.c_str(), r.hit->type->name().c_str(),
                    human_bytes(r.bytes_mapped).c_str(), r.verified ? "" : ", unverified");
    } else {
      std::snprintf(line, sizeof line, "%s (%s): miss %s, %s to pack\n", w.name.c_str(),
                    w.consumer.c_str(), std::string(resolve::miss_reason_id(r.reason)).c_str(),
                    human_bytes(r.bytes_to_pack).c_str());
    }
    text += line;
    if (!r.is_hit()) text += "    " + r.detail + "\n";
    if (req.formats.empty()) {
      text += "    (kernel level " + std::string(device::isa_level_name(level)) +
              ": the packed kernels need x86_64 with avx2, fma and f16c, or avx512f/bw/dq/vl)\n";
    }
    for (const auto& c : r.candidates) {
      const std::string where = c.entry >= 0 ? "[" + std::to_string(c.entry) + "]" : "[cache]";
      // Request-level misses (no acceptable format, fed input, ...) reject every
      // candidate before it is examined: there is no format to show then.
      text += "    " + where + " " +
              (c.format.empty() ? std::string("not examined")
                                : c.format + " v" + c.format_version + " " + c.architecture) +
              ": " + decision_of(c);
      if (!c.chosen && !c.detail.empty() && c.detail != r.detail) text += " (" + c.detail + ")";
      text += "\n";
      if (c.entry >= 0) {  // SPEC 4.5: the sources and attributes the entry is bound to
        const auto items = pack::lineage_summary(model.proto().compiled_tensors(c.entry));
        if (!items.empty()) {
          std::string l;
          for (const auto& i : items) l += (l.empty() ? "" : ", ") + i;
          text += "        lineage: " + l + "\n";
        }
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const resolve::ResolverTotals& tot = resolver.totals();

  Json diags = Json::array();
  for (const check::Diagnostic& d : resolver.diagnostics()) {
    Json o = Json::object();
    o["rule"] = d.rule;
    o["path"] = d.path;
    o["message"] = d.message;
    diags.push_back(std::move(o));
  }
  if (args.has("json")) {
    Json j = Json::object();
    j["model"] = model.path();
    j["host"] = host_json(host, opts);
    j["verify"] = std::string(resolve::verify_policy_name(opts.verify));
    j["cache"] = store ? Json(store->dir()) : Json();
    j["weights"] = std::move(jweights);
    j["ignored_entries"] = std::move(diags);
    Json t = Json::object();
    t["weights"] = uint64_t(items.size());
    t["hits"] = tot.hits;
    t["misses"] = tot.misses;
    t["bytes_mapped"] = tot.bytes_mapped;
    t["bytes_hashed"] = tot.bytes_hashed;
    t["bytes_to_pack"] = tot.bytes_to_pack;
    t["memo_hits"] = tot.memo_hits;
    t["seconds"] = seconds;
    j["totals"] = std::move(t);
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("host: %s (%s%s), runtime %s %s, verify %s\n",
                host.architecture.to_string().c_str(), host.pretended ? "--arch" : "detected",
                host.isa_cap
                    ? (", capped at " + std::string(device::isa_level_name(*host.isa_cap))).c_str()
                    : "",
                opts.runtime_name.c_str(), opts.runtime_version.c_str(),
                std::string(resolve::verify_policy_name(opts.verify)).c_str());
    std::fputs(text.c_str(), stdout);
    for (const check::Diagnostic& d : resolver.diagnostics()) {
      std::printf("ignored: %s: %s [%s]\n", d.path.c_str(), d.message.c_str(), d.rule.c_str());
    }
    std::printf(
        "totals: %zu weights, %llu hits, %llu misses; mapped %s, hashed %s, to pack %s; %.3f s\n",
        items.size(), (unsigned long long)tot.hits, (unsigned long long)tot.misses,
        human_bytes(tot.bytes_mapped).c_str(), human_bytes(tot.bytes_hashed).c_str(),
        human_bytes(tot.bytes_to_pack).c_str(), seconds);
  }
  return args.has("fail-on-miss") && tot.misses > 0 ? kExitFindings : kExitOk;
}

}  // namespace onnx_prepack::cli
