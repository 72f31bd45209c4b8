// onnx-prepack generate mlp|transformer|llm|decoder|encoder -o OUT.onnx [--layers N] [--width N]
//   [--heads N] [--seq N] [--vocab N] [--external] [--seed N] [--json]
//   llm: [--bits 4|8] [--block-size N] [--accuracy-level 0|4] [--no-zero-points]
// Deterministic synthetic models (docs/cli.md, "generate").
#include <chrono>
#include <cstdio>

#include "base/json.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "format/model_writer.h"
#include "runtime/generate.h"

namespace onnx_prepack::cli {
namespace {

// generate decoder|encoder: a preset, then the overrides given on the command line.
int generate_llm_model(const std::string& kind, const Args& args, const std::string& out) {
  auto t0 = std::chrono::steady_clock::now();
  const bool decoder = kind == "decoder";
  // Flags of the other kinds are refused rather than silently ignored.
  std::vector<const char*> foreign = {"width", "seq", "bits"};
  if (decoder) {
    foreign.push_back("int8");
  } else {
    for (const char* f :
         {"form", "kv-heads", "local-window", "block-size", "accuracy-level", "no-zero-points"})
      foreign.push_back(f);
  }
  for (const char* f : foreign) {
    if (args.has(f)) {
      return report_error("generate",
                          invalid_argument("--" + std::string(f) + " does not apply to " + kind));
    }
  }
  std::string preset = args.get("preset").value_or(decoder ? "tiny" : "bert-base");
  auto override_int = [&](const char* name, int64_t* field, int64_t lo, int64_t hi) -> Status {
    if (!args.has(name)) return ok_status();
    auto v = args.get_int(name, *field, lo, hi);
    if (!v.ok()) return v.status();
    *field = *v;
    return ok_status();
  };
  uint64_t bytes = 0;
  base::Json j = base::Json::object();
  runtime::DecoderOptions d;
  runtime::EncoderOptions e;
  const int64_t big = int64_t(1) << 40;
  if (decoder) {
    auto p = runtime::decoder_preset(preset);
    if (!p.ok()) return report_error("generate", p.status());
    d = *p;
    d.form = args.get("form").value_or("genai");
    for (auto [name, field] : {std::pair{"layers", &d.layers},
                               {"hidden", &d.hidden},
                               {"intermediate", &d.intermediate},
                               {"heads", &d.heads},
                               {"kv-heads", &d.kv_heads},
                               {"vocab", &d.vocab},
                               {"max-positions", &d.max_positions},
                               {"block-size", &d.block_size},
                               {"accuracy-level", &d.accuracy_level},
                               {"local-window", &d.local_window}}) {
      Status s = override_int(name, field, -big, big);
      if (!s.ok()) return report_error("generate", s);
    }
    if (args.has("no-zero-points")) d.zero_points = false;
    if (args.has("seed")) {
      auto seed = args.get_int("seed", 1, 0, (1ll << 62));
      if (!seed.ok()) return report_error("generate", seed.status());
      d.seed = uint64_t(*seed);
    }
    Status s = runtime::validate_decoder(d);
    if (!s.ok()) return report_error("generate", s);
    bytes = *runtime::decoder_weight_bytes(d);
    j["form"] = d.form;
    j["layers"] = d.layers;
    j["hidden"] = d.hidden;
    j["intermediate"] = d.intermediate;
    j["heads"] = d.heads;
    j["kv_heads"] = d.kv_heads;
    j["head_size"] = d.hidden / d.heads;
    j["vocab"] = d.vocab;
    j["max_positions"] = d.max_positions;
    j["block_size"] = d.block_size;
    j["accuracy_level"] = d.accuracy_level;
    j["zero_points"] = d.zero_points;
    j["local_window"] = d.local_window;
  } else {
    auto p = runtime::encoder_preset(preset);
    if (!p.ok()) return report_error("generate", p.status());
    e = *p;
    e.int8 = args.has("int8");
    for (auto [name, field] : {std::pair{"layers", &e.layers},
                               {"hidden", &e.hidden},
                               {"intermediate", &e.intermediate},
                               {"heads", &e.heads},
                               {"vocab", &e.vocab},
                               {"max-positions", &e.max_positions}}) {
      Status s = override_int(name, field, -big, big);
      if (!s.ok()) return report_error("generate", s);
    }
    if (args.has("seed")) {
      auto seed = args.get_int("seed", 1, 0, (1ll << 62));
      if (!seed.ok()) return report_error("generate", seed.status());
      e.seed = uint64_t(*seed);
    }
    Status s = runtime::validate_encoder(e);
    if (!s.ok()) return report_error("generate", s);
    bytes = *runtime::encoder_weight_bytes(e);
    j["int8"] = e.int8;
    j["layers"] = e.layers;
    j["hidden"] = e.hidden;
    j["intermediate"] = e.intermediate;
    j["heads"] = e.heads;
    j["vocab"] = e.vocab;
    j["max_positions"] = e.max_positions;
  }
  j["kind"] = kind;
  j["preset"] = preset;
  j["weight_bytes"] = bytes;
  // Large models always stream their weights to OUT.onnx.data.
  const bool external = args.has("external") || bytes >= (uint64_t(256) << 20);
  if (args.has("dry-run")) {
    j["external"] = external;
    if (args.has("json")) {
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("%s %s: %.1f MiB of weights%s (dry run, nothing written)\n", kind.c_str(),
                  preset.c_str(), double(bytes) / (1 << 20), external ? ", external data" : "");
    }
    return kExitOk;
  }
  auto w =
      decoder ? runtime::write_decoder(d, out, external) : runtime::write_encoder(e, out, external);
  if (!w.ok()) return report_error("generate", w.status());
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (args.has("json")) {
    j["path"] = out;
    j["weight_bytes"] = w->weight_bytes;  // as written (the dry run's figure is computed)
    j["data_file"] = w->data_file;
    j["nodes"] = w->nodes;
    j["initializers"] = w->initializers;
    j["ms"] = ms;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf(
        "wrote %s: %s %s, %lld nodes, %lld initializers, %.1f MiB of weights%s%s (%.0f ms)\n",
        out.c_str(), kind.c_str(), preset.c_str(), (long long)w->nodes, (long long)w->initializers,
        double(w->weight_bytes) / (1 << 20), w->data_file.empty() ? "" : ", external data in ",
        w->data_file.c_str(), ms);
  }
  return kExitOk;
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  const CommandSpec& spec = *find_command("generate");
  auto args = Args::parse(argc, argv, spec);  // "-o PATH" is the short form of "--output PATH"
  if (!args.ok()) return usage_error(spec, args.status().message());
  if (args->has("help")) return print_help(spec);
  const std::vector<std::string>& pos = args->positionals();
  std::optional<std::string> out = args->get("output");
  if (pos.size() != 1) {
    return usage_error(spec, "expected one kind (mlp, transformer, llm, decoder or encoder), got " +
                                 std::to_string(pos.size()) + " operands");
  }
  if (pos[0] != "mlp" && pos[0] != "transformer" && pos[0] != "llm" && pos[0] != "decoder" &&
      pos[0] != "encoder") {
    std::string message =
        "unknown kind '" + pos[0] + "', expected mlp, transformer, llm, decoder or encoder";
    if (auto near = closest(pos[0], {"mlp", "transformer", "llm", "decoder", "encoder"}))
      message += "; did you mean '" + *near + "'?";
    return usage_error(spec, message);
  }
  if (pos[0] == "decoder" || pos[0] == "encoder") {
    if (!out && !args->has("dry-run")) return usage_error(spec, "-o OUT.onnx is required");
    return generate_llm_model(pos[0], *args, out ? *out : std::string());
  }
  if (!out) return usage_error(spec, "-o OUT.onnx is required");
  runtime::GenerateOptions o;
  o.kind = pos[0];
  bool tf = o.kind == "transformer";
  auto layers = args->get_int("layers", 2, 0, 4096);
  auto width = args->get_int("width", 256, 1, 1 << 16);
  auto heads = args->get_int("heads", 4, 1, 1024);
  auto seq = args->get_int("seq", 16, 1, 1 << 16);
  auto vocab = args->get_int("vocab", 1000, 1, 1 << 24);
  auto seed = args->get_int("seed", 1, 0, (1ll << 62));
  for (const auto* r : {&layers, &width, &heads, &seq, &vocab, &seed}) {
    if (!r->ok()) return report_error("generate", r->status());
  }
  o.layers = int(*layers);
  o.width = int(*width);
  o.heads = int(*heads);
  o.seq = int(*seq);
  o.vocab = int(*vocab);
  o.seed = uint64_t(*seed);
  auto bits = args->get_int("bits", 4, 4, 8);
  auto block = args->get_int("block-size", 32, 16, 256);
  auto level = args->get_int("accuracy-level", 0, 0, 4);
  for (const auto* r : {&bits, &block, &level}) {
    if (!r->ok()) return report_error("generate", r->status());
  }
  o.bits = int(*bits);
  o.block_size = int(*block);
  o.accuracy_level = int(*level);
  o.zero_points = !args->has("no-zero-points");
  if ((o.bits != 4 && o.bits != 8) || (o.block_size & (o.block_size - 1)) != 0) {
    return report_error("generate", invalid_argument("llm: --bits must be 4 or 8 and "
                                                     "--block-size a power of 2 in [16, 256]"));
  }
  if (tf && o.width % o.heads != 0) {
    return report_error(
        "generate", invalid_argument("--width " + std::to_string(o.width) +
                                     " is not a multiple of --heads " + std::to_string(o.heads)));
  }
  uint64_t bytes = runtime::generated_weight_bytes(o);
  bool external = args->has("external");
  if (!external && bytes > (uint64_t(2000) << 20)) {
    return report_error("generate", invalid_argument("weights are " + std::to_string(bytes) +
                                                     " bytes; over 2 GiB needs --external"));
  }
  auto t0 = std::chrono::steady_clock::now();
  onnx::ModelProto m = runtime::generate_model(o);
  std::string data_file;
  if (external) {
    format::WriteOptions wo;
    wo.external_threshold = 1024;
    auto r = format::write_model(m, *out, wo, nullptr);
    if (!r.ok()) return report_error("generate", r.status());
    data_file = r->data_file;
  } else {
    Status s = format::write_model_inline(m, *out);
    if (!s.ok()) return report_error("generate", s);
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (args->has("json")) {
    base::Json j = base::Json::object();
    j["path"] = *out;
    j["kind"] = o.kind;
    j["weight_bytes"] = bytes;
    j["data_file"] = data_file;
    j["nodes"] = int64_t(m.graph().node_size());
    j["initializers"] = int64_t(m.graph().initializer_size());
    j["ms"] = ms;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("wrote %s: %s, %d nodes, %d initializers, %.1f MiB of weights%s%s (%.0f ms)\n",
                out->c_str(), o.kind.c_str(), m.graph().node_size(), m.graph().initializer_size(),
                double(bytes) / (1 << 20), data_file.empty() ? "" : ", external data in ",
                data_file.c_str(), ms);
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
