// onnx-prepack explain MODEL [--arch STR] [--verify full|memo|off] [--cache DIR]
//                            [--memo-dir DIR] [--input NAME]... [--fail-on-miss] [--json]
// For every eligible weight (constant B of MatMul/Gemm), the resolver's
// decision on each candidate entry, the chosen one, and totals (format.md §4.3, 7.3);
// the report is engine::explain_model's.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "cli/text.h"
#include "engine/explain.h"
#include "pack/pack_family.h"

namespace onnx_prepack::cli {
namespace {

std::string decision_of(const resolve::CandidateDecision& c) {
  if (c.chosen) return "chosen";
  return std::string(resolve::miss_reason_id(c.reason));
}

// The text report of one weight: its decision, then one line per candidate.
std::string weight_text(const engine::ExplainedWeight& e, device::IsaLevel level,
                        const format::Model& model) {
  const engine::ExplainedWeight& w = e;
  const resolve::Resolution& r = e.resolution;
  std::string text;
  char line[512];
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
  if (e.formats.empty()) {
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
    if (c.entry >= 0) {  // format.md §4.5: the sources and attributes the entry is bound to
      std::string l;
      for (const auto& i : pack::lineage_summary(model.proto().compiled_tensors(c.entry)))
        l += (l.empty() ? "" : ", ") + i;
      if (!l.empty()) text += "        lineage: " + l + "\n";
    }
  }
  return text;
}

void print_text(const engine::ExplainReport& r) {
  const device::HostDescription& host = r.host;
  std::printf("host: %s (%s%s), runtime %s %s, verify %s\n", host.architecture.to_string().c_str(),
              host.pretended ? "--arch" : "detected",
              host.isa_cap
                  ? (", capped at " + std::string(device::isa_level_name(*host.isa_cap))).c_str()
                  : "",
              r.runtime_name.c_str(), r.runtime_version.c_str(),
              std::string(verify_policy_name(r.verify)).c_str());
  for (const auto& e : r.weights) std::fputs(weight_text(e, r.level, *r.model).c_str(), stdout);
  for (const check::Diagnostic& d : r.diagnostics) {
    std::printf("ignored: %s: %s [%s]\n", d.path.c_str(), d.message.c_str(), d.rule.c_str());
  }
  const resolve::ResolverTotals& tot = r.totals;
  std::printf(
      "totals: %zu weights, %llu hits, %llu misses; mapped %s, hashed %s, to pack %s; %.3f s\n",
      r.weights.size(), (unsigned long long)tot.hits, (unsigned long long)tot.misses,
      human_bytes(tot.bytes_mapped).c_str(), human_bytes(tot.bytes_hashed).c_str(),
      human_bytes(tot.bytes_to_pack).c_str(), r.seconds);
}

}  // namespace

int cmd_explain(int argc, char** argv) {
  const CommandSpec& spec = *find_command("explain");
  int exit_code = kExitOk;
  auto parsed = parse_model_command(argc, argv, spec, exit_code);
  if (!parsed) return exit_code;
  const Args& args = *parsed;
  engine::ExplainOptions options;
  const std::string verify(
      args.get("verify").value_or(std::string(verify_policy_name(options.verify))));
  if (auto policy = verify_policy_from_name(verify)) {
    options.verify = *policy;
  } else {
    return report_error("explain",
                        invalid_argument("--verify '" + verify + "': expected full, memo or off"));
  }
  options.arch = args.get("arch").value_or("");
  options.cache = cache_location_from_arg(args.get("cache").value_or(std::string(kCacheOffName)));
  options.memo_dir = args.get("memo-dir").value_or("");
  options.fed_inputs = args.get_all("input");
  auto report = engine::explain_model(args.positionals()[0], options);
  if (!report.ok()) return report_error("explain", report.status());
  if (args.has("json")) {
    std::printf("%s\n", engine::explain_json(*report).dump().c_str());
  } else {
    print_text(*report);
  }
  return args.has("fail-on-miss") && report->totals.misses > 0 ? kExitFindings : kExitOk;
}

}  // namespace onnx_prepack::cli
