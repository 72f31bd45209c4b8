// onnx-prepack generate mlp|transformer|llm -o OUT.onnx [--layers N] [--width N]
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

int cmd_generate(int argc, char** argv) {
  const CommandSpec& spec = *find_command("generate");
  auto args = Args::parse(argc, argv, spec);  // "-o PATH" is the short form of "--output PATH"
  if (!args.ok()) return usage_error(spec, args.status().message());
  if (args->has("help")) return print_help(spec);
  const std::vector<std::string>& pos = args->positionals();
  std::optional<std::string> out = args->get("output");
  if (pos.size() != 1) {
    return usage_error(spec, "expected one kind (mlp, transformer or llm), got " +
                                 std::to_string(pos.size()) + " operands");
  }
  if (pos[0] != "mlp" && pos[0] != "transformer" && pos[0] != "llm") {
    std::string message = "unknown kind '" + pos[0] + "', expected mlp, transformer or llm";
    if (auto near = closest(pos[0], {"mlp", "transformer", "llm"}))
      message += "; did you mean '" + *near + "'?";
    return usage_error(spec, message);
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
