// onnx-prepack run MODEL [--input NAME=FILE.npy|random[:DxD...]]... [--output-dir DIR]
//   [--cache DIR|off] [--verify full|memo|off] [--threads N] [--repeat N] [--seed N]
//   [--weights packed|plain] [--json]
// Runs a model on the CPU runtime with cache-aware weight preparation and
// reports phase timings and each weight's hit or miss (docs/cli.md, "run").
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "base/json.h"
#include "base/thread_pool.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "device/device_match.h"
#include "format/model.h"
#include "resolve/cache_store.h"
#include "resolve/resolver.h"
#include "runtime/npy.h"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"

namespace onnx_prepack::cli {
namespace {

using base::Json;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: onnx-prepack run MODEL [--input NAME=FILE.npy|random[:DxD...]]... [--output-dir DIR]\n"
    "         [--cache DIR|off] [--verify full|memo|off] [--threads N] [--repeat N]\n"
    "         [--seed N] [--weights packed|plain] [--json]\n";

double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// RssAnon / RssFile of this process in KiB (Linux), 0 when unavailable.
std::pair<uint64_t, uint64_t> rss_split_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  uint64_t anon = 0, file = 0;
  while (std::getline(f, line)) {
    if (line.rfind("RssAnon:", 0) == 0) anon = std::strtoull(line.c_str() + 8, nullptr, 10);
    if (line.rfind("RssFile:", 0) == 0) file = std::strtoull(line.c_str() + 8, nullptr, 10);
  }
  return {anon, file};
}

// Largest valid index for a random integer input: the smallest Gather data
// dimension it indexes (so ids stay in range), else 10.
int64_t int_bound(const onnx::GraphProto& g, const std::string& input) {
  int64_t bound = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Gather" || n.input_size() < 2 || n.input(1) != input) continue;
    int64_t axis = 0;
    for (const auto& a : n.attribute()) {
      if (a.name() == "axis") axis = a.i();
    }
    for (const auto& t : g.initializer()) {
      if (t.name() != n.input(0)) continue;
      if (axis < 0) axis += t.dims_size();
      if (axis >= 0 && axis < t.dims_size()) {
        bound = bound == 0 ? t.dims(int(axis)) : std::min<int64_t>(bound, t.dims(int(axis)));
      }
    }
  }
  return bound > 0 ? bound : 10;
}

Result<runtime::HostTensor> random_input(const runtime::GraphInput& in, const std::string& spec,
                                         const onnx::GraphProto& g, uint64_t seed) {
  runtime::Shape shape;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    std::string dims = spec.substr(colon + 1);
    size_t p = 0;
    while (p <= dims.size()) {
      size_t x = dims.find('x', p);
      std::string part = dims.substr(p, x == std::string::npos ? std::string::npos : x - p);
      char* end = nullptr;
      long long v = std::strtoll(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || v < 0 || v > (1ll << 32)) {
        return invalid_argument("--input " + in.name + ": bad shape '" + dims + "'");
      }
      shape.push_back(v);
      if (x == std::string::npos) break;
      p = x + 1;
    }
  } else {
    for (int64_t d : in.dims) shape.push_back(d < 0 ? 1 : d);  // symbolic dims default to 1
  }
  OP_ASSIGN_OR_RETURN(auto t,
                      runtime::HostTensor::try_allocate(in.dtype, shape, "--input " + in.name));
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + std::hash<std::string>()(in.name);
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  int64_t n = t.numel();
  void* d = t.mutable_data();
  int64_t bound = int_bound(g, in.name);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = next();
    switch (in.dtype) {
      case runtime::kFloat:
        static_cast<float*>(d)[i] = float(r >> 40) / float(1 << 23) - 1.0f;
        break;
      case runtime::kDouble:
        static_cast<double*>(d)[i] = double(r >> 11) / double(1ull << 52) - 1.0;
        break;
      case runtime::kInt64:
        static_cast<int64_t*>(d)[i] = int64_t(r % uint64_t(bound));
        break;
      case runtime::kInt32:
        static_cast<int32_t*>(d)[i] = int32_t(r % uint64_t(bound));
        break;
      case runtime::kBool:
        static_cast<bool*>(d)[i] = (r & 1) != 0;
        break;
      default:
        return invalid_argument("--input " + in.name + "=random: type " +
                                runtime::dtype_name(in.dtype) + " is not supported");
    }
  }
  return t;
}

std::string file_name_for(const std::string& output) {
  std::string s;
  for (char c : output)
    s +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return s + ".npy";
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const auto t_start = Clock::now();
  auto args = Args::parse(argc, argv, {"json", "help"},
                          {"input", "output-dir", "cache", "verify", "threads", "repeat", "seed",
                           "weights", "cache-max-mib", "memo-dir"});
  if (!args.ok()) return report_error("run", args.status());
  if (args->has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (args->positionals().size() != 1) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  auto threads = args->get_int("threads", 0, 0, 1024);
  auto repeat = args->get_int("repeat", 0, 0, 1000000);
  auto seed = args->get_int("seed", 1, 0, 1ll << 62);
  auto cache_max = args->get_int("cache-max-mib", 4096, 0, 1ll << 30);
  for (const auto* r : {&threads, &repeat, &seed, &cache_max}) {
    if (!r->ok()) return report_error("run", r->status());
  }
  std::string verify_name = args->get("verify").value_or("full");
  auto policy = resolve::verify_policy_from_name(verify_name);
  if (!policy)
    return report_error(
        "run", invalid_argument("--verify must be full, memo or off, got '" + verify_name + "'"));
  std::string weights_mode = args->get("weights").value_or("packed");
  if (weights_mode != "packed" && weights_mode != "plain") {
    return report_error(
        "run", invalid_argument("--weights must be packed or plain, got '" + weights_mode + "'"));
  }
  std::string cache_dir = args->get("cache").value_or("off");
  base::ThreadPool& pool = base::ThreadPool::shared(size_t(*threads));

  // parse
  auto t0 = Clock::now();
  auto loaded = format::Model::load(args->positionals()[0]);
  if (!loaded.ok()) return report_error("run", loaded.status());
  std::shared_ptr<format::Model> model(std::move(*loaded));
  auto t_parse = Clock::now();

  auto session_r = runtime::Session::create(model, runtime::SessionOptions{});
  if (!session_r.ok()) return report_error("run", session_r.status());
  auto& session = *session_r;

  // inputs
  std::map<std::string, runtime::HostTensor> feeds_data;
  std::map<std::string, std::string> specs;
  for (const auto& spec : args->get_all("input")) {
    auto eq = spec.find('=');
    if (eq == std::string::npos)
      return report_error(
          "run",
          invalid_argument("--input expects NAME=FILE.npy or NAME=random, got '" + spec + "'"));
    specs[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  for (const auto& spec_entry : specs) {
    const std::string& name = spec_entry.first;
    auto it = std::find_if(session->inputs().begin(), session->inputs().end(),
                           [&](const runtime::GraphInput& g) { return g.name == name; });
    if (it == session->inputs().end())
      return report_error("run", invalid_argument("--input " + name + ": not a graph input"));
  }
  for (const auto& in : session->inputs()) {
    auto it = specs.find(in.name);
    if (it == specs.end()) {
      if (in.has_initializer) continue;  // the initializer is its default
      specs[in.name] = "random";
      it = specs.find(in.name);
    }
    Result<runtime::HostTensor> t =
        it->second.rfind("random", 0) == 0
            ? random_input(in, it->second, model->proto().graph(), uint64_t(*seed))
            : runtime::read_npy(it->second);
    if (!t.ok()) return report_error("run", t.status());
    // numpy has no bfloat16: a uint16 .npy for a bfloat16 input holds its bit patterns.
    if (in.dtype == runtime::kBfloat16 && t->dtype() == runtime::kUint16) {
      auto bits =
          runtime::HostTensor::try_allocate(runtime::kBfloat16, t->shape(), "--input " + in.name);
      if (!bits.ok()) return report_error("run", bits.status());
      if (t->nbytes() > 0) std::memcpy(bits->mutable_data(), t->data(), t->nbytes());
      *t = std::move(*bits);
    }
    feeds_data.emplace(in.name, std::move(*t));
  }
  std::map<std::string, runtime::Session::Feed> feeds;
  std::map<std::string, runtime::Tensor> inputs;
  std::vector<runtime::Tensor> views;
  for (auto& [name, t] : feeds_data) {
    feeds[name] = {t.dtype(), t.shape(), nullptr};
    inputs[name] = t.view();
  }

  // resolver + weights
  std::unique_ptr<resolve::CacheStore> store;
  if (cache_dir != "off") {
    auto s = resolve::CacheStore::open(cache_dir, resolve::CacheMode::kReadWrite,
                                       uint64_t(*cache_max) << 20);
    if (!s.ok()) return report_error("run", s.status());
    store = std::move(*s);
  }
  resolve::ResolverOptions ro;
  ro.verify = *policy;
  ro.cache = store.get();
  ro.pool = &pool;
  if (auto m = args->get("memo-dir")) ro.memo_dir = *m;
  for (const auto& [name, t] : feeds_data) ro.fed_inputs.insert(name);
  std::unique_ptr<resolve::Resolver> resolver;
  std::unique_ptr<runtime::ResolvedWeights> prepared;
  runtime::SessionOptions so;
  if (weights_mode == "packed") {
    resolver = std::make_unique<resolve::Resolver>(*model, device::HostDescription::detect(), ro);
    prepared =
        std::make_unique<runtime::ResolvedWeights>(resolver.get(), device::host_isa_level(), &pool);
    so.weights = prepared.get();
  }
  // The session above checked the graph; plan with the weight preparer.
  auto session2 = runtime::Session::create(model, so);
  if (!session2.ok()) return report_error("run", session2.status());
  auto t_plan0 = Clock::now();
  Status st = (*session2)->plan(feeds);
  if (!st.ok() && st.message().find(runtime::kNeedsValue) != std::string::npos) {
    for (auto& [name, f] : feeds) f.value = &inputs[name];  // shape inputs fed as data
    st = (*session2)->plan(feeds);
  }
  if (!st.ok()) return report_error("run", st);
  auto t_map0 = Clock::now();
  uint64_t populated = prepared ? prepared->populate_hits(&pool) : 0;
  auto t_plan = Clock::now();
  double populate_ms = ms(t_map0, t_plan);

  auto outs = (*session2)->run(inputs);
  if (!outs.ok()) return report_error("run", outs.status());
  auto t_first = Clock::now();
  std::vector<double> steady;
  for (long long i = 0; i < *repeat; ++i) {
    auto a = Clock::now();
    auto r = (*session2)->run(inputs);
    if (!r.ok()) return report_error("run", r.status());
    steady.push_back(ms(a, Clock::now()));
  }
  std::sort(steady.begin(), steady.end());

  // outputs
  std::string out_dir = args->get("output-dir").value_or("");
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return report_error("run", io_error(out_dir + ": cannot create: " + ec.message()));
  }
  Json outputs = Json::object();
  const auto& names = (*session2)->output_names();
  for (size_t i = 0; i < outs->size(); ++i) {
    const auto& t = (*outs)[i];
    Json o = Json::object();
    o["dtype"] = runtime::dtype_name(t.dtype());
    Json shape = Json::array();
    for (int64_t dd : t.shape()) shape.push_back(Json(dd));
    o["shape"] = std::move(shape);
    if (t.dtype() == runtime::kFloat) {
      double sum = 0, mx = 0;
      for (int64_t k = 0; k < t.numel(); ++k) {
        sum += t.as<float>()[k];
        mx = std::max(mx, double(std::fabs(t.as<float>()[k])));
      }
      o["sum"] = sum;
      o["max_abs"] = mx;
    }
    if (!out_dir.empty()) {
      std::string path = out_dir + "/" + file_name_for(names[i]);
      Status ws = runtime::write_npy(path, t.view());
      if (!ws.ok()) return report_error("run", ws);
      o["file"] = path;
    }
    outputs[names[i]] = std::move(o);
  }

  runtime::PreparedTotals tot = prepared ? prepared->totals() : runtime::PreparedTotals();
  double verify_ms = 0;
  if (prepared) {
    for (const auto& d : prepared->decisions()) {
      if (d.bytes_hashed > 0) verify_ms += d.resolve_ms;
    }
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto [anon, file] = rss_split_kib();
  const auto& ps = (*session2)->stats();
  double plan_total = ms(t_plan0, t_map0);
  Json timings = Json::object();
  timings["parse"] = ms(t0, t_parse);
  timings["resolve"] = tot.resolve_ms - verify_ms;
  timings["verify"] = verify_ms;
  timings["map"] = ps.init_ms + populate_ms;
  timings["pack"] = tot.pack_ms;
  timings["store"] = tot.store_ms;
  timings["plan"] = plan_total - tot.resolve_ms - tot.pack_ms - tot.store_ms - ps.init_ms;
  timings["first_run"] = ms(t_plan, t_first);
  timings["time_to_first_output"] = ms(t_start, t_first);
  timings["steady_run_median"] = steady.empty() ? Json() : Json(steady[steady.size() / 2]);
  timings["steady_run_min"] = steady.empty() ? Json() : Json(steady.front());

  if (args->has("json")) {
    Json j = Json::object();
    j["model"] = args->positionals()[0];
    j["threads"] = uint64_t(pool.size());
    j["verify"] =
        weights_mode == "packed" ? std::string(resolve::verify_policy_name(*policy)) : "none";
    j["cache"] = cache_dir;
    j["weights_mode"] = weights_mode;
    j["timings_ms"] = std::move(timings);
    Json ws = Json::array();
    if (prepared) {
      for (const auto& d : prepared->decisions()) {
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
        ws.push_back(std::move(w));
      }
    }
    j["weights"] = std::move(ws);
    Json totals = Json::object();
    totals["hits"] = tot.hits;
    totals["misses"] = tot.misses;
    totals["stored"] = tot.stored;
    totals["bytes_mapped"] = tot.bytes_mapped;
    totals["bytes_hashed"] = tot.bytes_hashed;
    totals["bytes_packed"] = tot.bytes_packed;
    totals["bytes_populated"] = populated;
    j["totals"] = std::move(totals);
    Json plan = Json::object();
    plan["nodes"] = uint64_t(ps.nodes);
    plan["kernels"] = uint64_t(ps.kernels);
    plan["folded"] = uint64_t(ps.folded);
    plan["aliases"] = uint64_t(ps.aliases);
    plan["arena_bytes"] = ps.arena_bytes;
    plan["value_bytes"] = ps.value_bytes;
    j["plan"] = std::move(plan);
    Json mem = Json::object();
    mem["peak_rss_kib"] = uint64_t(ru.ru_maxrss);
    mem["rss_anon_kib"] = anon;
    mem["rss_file_kib"] = file;
    j["memory"] = std::move(mem);
    j["outputs"] = std::move(outputs);
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s: %zu kernels (%zu nodes, %zu folded), arena %.1f MiB, %zu threads\n",
                args->positionals()[0].c_str(), ps.kernels, ps.nodes, ps.folded,
                double(ps.arena_bytes) / (1 << 20), pool.size());
    if (prepared) {
      std::printf(
          "weights: %" PRIu64 " hits, %" PRIu64
          " misses (verify %s, cache %s), %.1f MiB mapped, %.1f MiB hashed, %.1f MiB packed\n",
          tot.hits, tot.misses, std::string(resolve::verify_policy_name(*policy)).c_str(),
          cache_dir.c_str(), double(tot.bytes_mapped) / (1 << 20),
          double(tot.bytes_hashed) / (1 << 20), double(tot.bytes_packed) / (1 << 20));
      for (const auto& d : prepared->decisions()) {
        std::printf("  %-40s %s%s%s\n", d.name.c_str(), d.decision.c_str(),
                    d.reason.empty() ? "" : " ", d.reason.c_str());
      }
    }
    std::printf(
        "timings (ms): parse %.2f, resolve %.2f, verify %.2f, map %.2f, pack %.2f, store %.2f, "
        "first run %.2f, time to first output %.2f",
        ms(t0, t_parse), tot.resolve_ms - verify_ms, verify_ms, ps.init_ms + populate_ms,
        tot.pack_ms, tot.store_ms, ms(t_plan, t_first), ms(t_start, t_first));
    if (!steady.empty())
      std::printf(", steady median %.2f (%zu runs)", steady[steady.size() / 2], steady.size());
    std::printf("\n");
    for (size_t i = 0; i < outs->size(); ++i) {
      std::printf("output %s: %s%s\n", names[i].c_str(),
                  runtime::dtype_name((*outs)[i].dtype()).c_str(),
                  runtime::shape_string((*outs)[i].shape()).c_str());
    }
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
