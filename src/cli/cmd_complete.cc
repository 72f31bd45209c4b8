// onnx-prepack complete MODEL|DIR --prompt IDS [--prompt IDS]... [--max-new-tokens N]
//   [--max-length N] [--sample] [--temperature T] [--top-k K] [--top-p P] [--seed N]
//   [--stop-id ID]... [--pad-id ID] [engine flags] [--json]
// Generates token ids from a decoder with the engine's Generator
// (include/onnx_prepack/generator.hpp) and prints them with the time to the
// first token and the decode rate (docs/cli.md, "complete"). A thin adapter:
// the defaults of genai_config.json and their precedence are the engine's
// (engine/genai_config.h).
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
#include "engine/genai_config.h"
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

// The flags the caller gave, as the engine's SearchOptions: genai_config.json
// fills the rest (engine/genai_config.h applies the precedence).
Result<engine::SearchOptions> search_options(const Args& args) {
  engine::SearchOptions o;
  const auto integer = [&](const char* name, long long max, std::optional<int64_t>& out) -> Status {
    if (!args.has(name)) return ok_status();
    OP_ASSIGN_OR_RETURN(long long v, args.get_int(name, 0, 0, max));
    out = v;
    return ok_status();
  };
  OP_RETURN_IF_ERROR(integer("max-new-tokens", 1ll << 40, o.max_new_tokens));
  OP_RETURN_IF_ERROR(integer("max-length", 1ll << 40, o.max_length));
  OP_RETURN_IF_ERROR(integer("top-k", 1ll << 40, o.top_k));
  OP_RETURN_IF_ERROR(integer("pad-id", INT64_MAX, o.pad_token_id));
  std::optional<int64_t> seed;
  OP_RETURN_IF_ERROR(integer("seed", INT64_MAX, seed));
  if (seed) o.seed = uint64_t(*seed);
  if (args.has("temperature")) {
    OP_ASSIGN_OR_RETURN(double t, get_real(args, "temperature", 1.0));
    o.temperature = t;
  }
  if (args.has("top-p")) {
    OP_ASSIGN_OR_RETURN(double t, get_real(args, "top-p", 1.0));
    o.top_p = t;
  }
  if (args.has("sample")) o.do_sample = true;
  if (args.has("stop-id")) {
    o.stop_ids.emplace();
    for (const std::string& s : args.get_all("stop-id")) {
      OP_ASSIGN_OR_RETURN(std::vector<int64_t> ids, parse_ids(s, "--stop-id"));
      o.stop_ids->insert(o.stop_ids->end(), ids.begin(), ids.end());
    }
  }
  return o;
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
  auto search = search_options(*args);
  if (!search.ok()) return report_error("complete", search.status());
  auto options = engine_options(*args);
  if (!options.ok()) return report_error("complete", options.status());
  // A model file or a folder; genai_config.json beside the model gives defaults.
  auto located = engine::locate_genai_model(args->positionals()[0]);
  if (!located.ok()) return report_error("complete", located.status());
  const std::string& model = located->model_path;
  const GeneratorParams params =
      engine::resolve_params(*search, located->config ? &*located->config : nullptr);
  auto engine = Engine::open(model, *options);
  if (!engine.ok()) return report_error("complete", engine.status());
  auto gen = Generator::create(**engine, params);
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
    j["genai_config"] = located->config ? Json(located->config->path) : Json(nullptr);
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
