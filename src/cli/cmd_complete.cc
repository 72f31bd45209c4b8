// onnx-prepack complete MODEL --prompt IDS [--prompt IDS]... [--max-new-tokens N]
//   [--max-length N] [--sample] [--temperature T] [--top-k K] [--top-p P] [--seed N]
//   [--stop-id ID]... [--pad-id ID] [engine flags] [--json]
// Generates token ids from a decoder with the engine's Generator
// (include/onnx_prepack/generator.hpp) and prints them with the time to the
// first token and the decode rate (docs/cli.md, "complete"). A thin adapter.
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/spec.h"
#include "onnx_prepack/generator.hpp"

namespace onnx_prepack::cli {
namespace {

using base::Json;
using Clock = std::chrono::steady_clock;

// "1,2,3" -> ids; `what` names the flag in the error.
Result<std::vector<int64_t>> parse_ids(const std::string& text, const char* what) {
  std::vector<int64_t> ids;
  size_t p = 0;
  while (p <= text.size()) {
    const size_t comma = text.find(',', p);
    const std::string part =
        text.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || errno == ERANGE) {
      return invalid_argument(std::string(what) + ": '" + part + "' in '" + text +
                              "' is not an integer token id");
    }
    ids.push_back(v);
    if (comma == std::string::npos) break;
    p = comma + 1;
  }
  return ids;
}

Result<double> get_real(const Args& args, const std::string& name, double fallback) {
  auto v = args.get(name);
  if (!v) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0')
    return invalid_argument("--" + name + ": '" + *v + "' is not a number");
  return d;
}

Result<GeneratorParams> generator_params(const Args& args) {
  GeneratorParams p;
  auto new_tokens = args.get_int("max-new-tokens", 0, 0, 1ll << 40);
  auto length = args.get_int("max-length", 0, 0, 1ll << 40);
  auto top_k = args.get_int("top-k", 0, 0, 1ll << 40);
  auto seed = args.get_int("seed", 0, 0, INT64_MAX);
  auto pad = args.get_int("pad-id", 0, 0, INT64_MAX);
  for (const auto* r : {&new_tokens, &length, &top_k, &seed, &pad}) {
    if (!r->ok()) return r->status();
  }
  auto temperature = get_real(args, "temperature", 1.0);
  auto top_p = get_real(args, "top-p", 1.0);
  for (const auto* r : {&temperature, &top_p}) {
    if (!r->ok()) return r->status();
  }
  p.max_new_tokens = *new_tokens;
  p.max_length = *length;
  p.top_k = *top_k;
  p.seed = uint64_t(*seed);
  p.pad_token_id = *pad;
  p.temperature = float(*temperature);
  p.top_p = float(*top_p);
  p.do_sample = args.has("sample");
  for (const std::string& s : args.get_all("stop-id")) {
    OP_ASSIGN_OR_RETURN(std::vector<int64_t> ids, parse_ids(s, "--stop-id"));
    p.stop_ids.insert(p.stop_ids.end(), ids.begin(), ids.end());
  }
  return p;
}

std::string ids_text(const std::vector<int64_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

Json ids_json(const std::vector<int64_t>& ids) {
  Json a = Json::array();
  for (int64_t id : ids) a.push_back(id);
  return a;
}

}  // namespace

int cmd_complete(int argc, char** argv) {
  const auto t_start = Clock::now();
  const CommandSpec& spec = *find_command("complete");
  int exit_code = kExitOk;
  auto args = parse_model_command(argc, argv, spec, exit_code);
  if (!args) return exit_code;
  if (args->get_all("prompt").empty()) return usage_error(spec, "--prompt IDS is required");
  std::vector<std::vector<int64_t>> prompts;
  for (const std::string& s : args->get_all("prompt")) {
    auto ids = parse_ids(s, "--prompt");
    if (!ids.ok()) return report_error("complete", ids.status());
    prompts.push_back(std::move(*ids));
  }
  auto params = generator_params(*args);
  if (!params.ok()) return report_error("complete", params.status());
  auto options = engine_options(*args);
  if (!options.ok()) return report_error("complete", options.status());
  const std::string model = args->positionals()[0];
  auto engine = Engine::open(model, *options);
  if (!engine.ok()) return report_error("complete", engine.status());
  auto gen = Generator::create(**engine, *params);
  if (!gen.ok()) return report_error("complete", gen.status());
  Status st = (*gen)->append_tokens(prompts);
  if (!st.ok()) return report_error("complete", st);
  // From the command's start: parse, resolve, map and plan included.
  const double ttft = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
  while (!(*gen)->is_done()) {
    st = (*gen)->generate_next_token();
    if (!st.ok()) return report_error("complete", st);
  }
  const GenerationStats& stats = (*gen)->stats();
  if (args->has("json")) {
    Json j = Json::object();
    j["model"] = model;
    j["form"] = (*gen)->form();
    j["threads"] = uint64_t((*engine)->threads());
    Json seqs = Json::array(), news = Json::array();
    for (size_t b = 0; b < (*gen)->batch_size(); ++b) {
      const std::vector<int64_t>& s = (*gen)->sequence(b);
      seqs.push_back(ids_json(s));
      news.push_back(
          ids_json(std::vector<int64_t>(s.begin() + int64_t(prompts[b].size()), s.end())));
    }
    j["sequences"] = std::move(seqs);
    j["new_tokens"] = std::move(news);
    Json js = Json::object();
    js["time_to_first_token_ms"] = ttft;
    js["first_token_ms"] = stats.first_token_ms;
    js["decode_ms"] = stats.decode_ms;
    js["decode_steps"] = stats.decode_steps;
    js["decode_tokens_per_second"] = stats.decode_tokens_per_second();
    js["prompt_tokens"] = stats.prompt_tokens;
    js["new_tokens"] = stats.new_tokens;
    js["plan_ms"] = stats.plan_ms;
    j["stats"] = std::move(js);
    std::printf("%s\n", j.dump().c_str());
    return kExitOk;
  }
  for (size_t b = 0; b < (*gen)->batch_size(); ++b) {
    const std::vector<int64_t>& s = (*gen)->sequence(b);
    std::printf(
        "%s\n",
        ids_text(std::vector<int64_t>(s.begin() + int64_t(prompts[b].size()), s.end())).c_str());
  }
  std::printf("first token: %.1f ms (prompt step %.1f ms, %" PRId64
              " prompt tokens); decode: %.2f tokens/s (%" PRId64
              " steps, %.1f ms); form %s, %zu threads\n",
              ttft, stats.first_token_ms, stats.prompt_tokens, stats.decode_tokens_per_second(),
              stats.decode_steps, stats.decode_ms, (*gen)->form(), (*engine)->threads());
  return kExitOk;
}

}  // namespace onnx_prepack::cli
