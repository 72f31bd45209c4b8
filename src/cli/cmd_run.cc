// onnx-prepack run MODEL [--input NAME=FILE.npy|random[:DxD...]]... [--output-dir DIR]
//   [--cache DIR|off] [--verify full|memo|off] [--threads N] [--repeat N] [--seed N]
//   [--weights packed|plain] [--float16-intermediates float16|float] [--json]
// Runs a model on the CPU runtime with cache-aware weight preparation and
// reports phase timings and each weight's hit or miss (docs/cli.md, "run").
// A thin adapter of onnx_prepack::Engine.
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
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/spec.h"
#include "engine/report_json.h"
#include "format/model.h"
#include "onnx_prepack/engine.hpp"
#include "resolve/resolver.h"
#include "runtime/npy.h"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"

namespace onnx_prepack::cli {
namespace {

using base::Json;
using Clock = std::chrono::steady_clock;

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
      case runtime::kFloat16:
        static_cast<uint16_t*>(d)[i] = runtime::float_to_half(float(r >> 40) / float(1 << 23) - 1);
        break;
      case runtime::kBfloat16:
        static_cast<uint16_t*>(d)[i] =
            runtime::float_to_bfloat16(float(r >> 40) / float(1 << 23) - 1);
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

// One tensor per graph input: from --input (a .npy file or random), random for
// inputs not named, none for inputs an initializer provides.
Result<std::map<std::string, runtime::HostTensor>> read_inputs(const Args& args,
                                                               const Engine& engine,
                                                               uint64_t seed) {
  std::map<std::string, std::string> specs;
  for (const auto& spec : args.get_all("input")) {
    auto eq = spec.find('=');
    if (eq == std::string::npos) {
      return invalid_argument("--input expects NAME=FILE.npy or NAME=random, got '" + spec + "'");
    }
    specs[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  for (const auto& spec_entry : specs) {
    if (engine.find_input(spec_entry.first) == nullptr)
      return invalid_argument("--input " + spec_entry.first + ": not a graph input");
  }
  std::map<std::string, runtime::HostTensor> feeds;
  for (const auto& in : engine.inputs()) {
    auto it = specs.find(in.name);
    if (it == specs.end()) {
      if (in.has_initializer) continue;  // the initializer is its default
      it = specs.emplace(in.name, "random").first;
    }
    Result<runtime::HostTensor> t =
        it->second.rfind("random", 0) == 0
            ? random_input(in, it->second, engine.model().proto().graph(), seed)
            : runtime::read_npy_as(it->second, in.dtype);
    if (!t.ok()) return t.status();
    feeds.emplace(in.name, std::move(*t));
  }
  return feeds;
}

// "outputs" of `run --json`, writing DIR/<name>.npy with --output-dir.
Result<Json> describe_outputs(const std::vector<std::string>& names,
                              const std::vector<runtime::HostTensor>& outs,
                              const std::string& out_dir) {
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) return io_error(out_dir + ": cannot create: " + ec.message());
  }
  Json outputs = Json::object();
  for (size_t i = 0; i < outs.size(); ++i) {
    const auto& t = outs[i];
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
      OP_RETURN_IF_ERROR(runtime::write_npy(path, t.view()));
      o["file"] = path;
    }
    outputs[names[i]] = std::move(o);
  }
  return outputs;
}

// What one `run` measured, for the report.
struct RunReport {
  std::string model;
  EngineTimings timings;
  double time_to_first_output = 0;
  std::vector<double> steady;  // sorted
  Json outputs;
};

Json timings_json(const RunReport& r) {
  const EngineTimings& t = r.timings;
  Json timings = Json::object();
  timings["parse"] = t.parse;
  timings["resolve"] = t.resolve;
  timings["verify"] = t.verify;
  timings["map"] = t.map;
  timings["pack"] = t.pack;
  timings["store"] = t.store;
  timings["plan"] = t.plan;
  timings["first_run"] = t.first_run;
  timings["time_to_first_output"] = r.time_to_first_output;
  timings["steady_run_median"] = r.steady.empty() ? Json() : Json(r.steady[r.steady.size() / 2]);
  timings["steady_run_min"] = r.steady.empty() ? Json() : Json(r.steady.front());
  return timings;
}

void print_json(const Engine& engine, RunReport& r) {
  const EngineOptions& o = engine.options();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto [anon, file] = rss_split_kib();
  Json j = Json::object();
  j["model"] = r.model;
  j["threads"] = uint64_t(engine.threads());
  j["verify"] =
      o.weights == WeightMode::kPacked ? std::string(verify_policy_name(o.verify)) : "none";
  j["cache"] = std::string(cache_location_name(o.cache));
  if (!engine.store_error().empty()) j["store_error"] = engine.store_error();
  j["weights_mode"] = std::string(weight_mode_name(o.weights));
  j["qdq"] = std::string(qdq_mode_name(o.qdq));
  j["float16_intermediates"] = std::string(o.float16_float_chains ? "float" : "float16");
  j["timings_ms"] = timings_json(r);
  Json ws = Json::array();
  for (const auto& d : engine.weights()) ws.push_back(engine::weight_json(d));
  j["weights"] = std::move(ws);
  j["totals"] = engine::totals_json(engine.weight_totals(), engine.bytes_populated());
  j["plan"] = engine::plan_json(engine.plan_stats());
  Json mem = Json::object();
  mem["peak_rss_kib"] = uint64_t(ru.ru_maxrss);
  mem["rss_anon_kib"] = anon;
  mem["rss_file_kib"] = file;
  j["memory"] = std::move(mem);
  j["outputs"] = std::move(r.outputs);
  std::printf("%s\n", j.dump(2).c_str());
}

void print_text(const Engine& engine, const RunReport& r,
                const std::vector<runtime::HostTensor>& outs) {
  const EngineOptions& o = engine.options();
  const runtime::PlanStats ps = engine.plan_stats();
  const EngineTimings& t = r.timings;
  std::printf("%s: %zu kernels (%zu nodes, %zu folded, %zu fused), arena %.1f MiB, %zu threads\n",
              r.model.c_str(), ps.kernels, ps.nodes, ps.folded, ps.fused,
              double(ps.arena_bytes) / (1 << 20), engine.threads());
  if (o.weights == WeightMode::kPacked) {
    const runtime::PreparedTotals tot = engine.weight_totals();
    std::printf(
        "weights: %" PRIu64 " hits, %" PRIu64
        " misses (verify %s, cache %s), %.1f MiB mapped, %.1f MiB hashed, %.1f MiB packed\n",
        tot.hits, tot.misses, std::string(verify_policy_name(o.verify)).c_str(),
        std::string(cache_location_name(o.cache)).c_str(), double(tot.bytes_mapped) / (1 << 20),
        double(tot.bytes_hashed) / (1 << 20), double(tot.bytes_packed) / (1 << 20));
    for (const auto& d : engine.weights()) {
      std::printf("  %-40s %s%s%s\n", d.name.c_str(), d.decision.c_str(),
                  d.reason.empty() ? "" : " ", d.reason.c_str());
    }
  }
  std::printf(
      "timings (ms): parse %.2f, resolve %.2f, verify %.2f, map %.2f, pack %.2f, store %.2f, "
      "first run %.2f, time to first output %.2f",
      t.parse, t.resolve, t.verify, t.map, t.pack, t.store, t.first_run, r.time_to_first_output);
  if (!r.steady.empty())
    std::printf(", steady median %.2f (%zu runs)", r.steady[r.steady.size() / 2], r.steady.size());
  std::printf("\n");
  const auto& names = engine.output_names();
  for (size_t i = 0; i < outs.size(); ++i) {
    std::printf("output %s: %s%s\n", names[i].c_str(), runtime::dtype_name(outs[i].dtype()).c_str(),
                runtime::shape_string(outs[i].shape()).c_str());
  }
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const auto t_start = Clock::now();
  const CommandSpec& spec = *find_command("run");
  int exit_code = kExitOk;
  auto args = parse_model_command(argc, argv, spec, exit_code);
  if (!args) return exit_code;
  auto repeat = args->get_int("repeat", 0, 0, 1000000);
  auto seed = args->get_int("seed", 1, 0, 1ll << 62);
  // Up to about 31 years: a bound, not a time point that could overflow.
  auto deadline = args->get_int("deadline-ms", 0, 0, 1ll << 40);
  for (const auto* r : {&repeat, &seed, &deadline}) {
    if (!r->ok()) return report_error("run", r->status());
  }
  auto options = engine_options(*args);
  if (!options.ok()) return report_error("run", options.status());
  RunReport report;
  report.model = args->positionals()[0];
  auto engine = Engine::open(report.model, *options);
  if (!engine.ok()) return report_error("run", engine.status());
  if (!(*engine)->store_error().empty()) {
    std::fprintf(stderr, "onnx-prepack run: running without the cache store: %s\n",
                 (*engine)->store_error().c_str());
  }
  auto feeds = read_inputs(*args, **engine, uint64_t(*seed));
  if (!feeds.ok()) return report_error("run", feeds.status());
  std::map<std::string, runtime::Tensor> inputs;
  for (auto& [name, t] : *feeds) inputs[name] = t.view();

  RunOptions run_options;
  run_options.deadline_ms = uint64_t(*deadline);
  auto outs = (*engine)->run(inputs, run_options);
  if (!outs.ok()) return report_error("run", outs.status());
  report.time_to_first_output = ms(t_start, Clock::now());
  for (long long i = 0; i < *repeat; ++i) {
    auto a = Clock::now();
    auto r = (*engine)->run(inputs, run_options);
    if (!r.ok()) return report_error("run", r.status());
    report.steady.push_back(ms(a, Clock::now()));
  }
  std::sort(report.steady.begin(), report.steady.end());
  report.timings = (*engine)->timings();

  auto described =
      describe_outputs((*engine)->output_names(), *outs, args->get("output-dir").value_or(""));
  if (!described.ok()) return report_error("run", described.status());
  report.outputs = std::move(*described);
  if (args->has("json")) {
    print_json(**engine, report);
  } else {
    print_text(**engine, report, *outs);
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
