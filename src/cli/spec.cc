#include "cli/spec.h"

#include <algorithm>

#include "onnx_prepack/options.hpp"

namespace onnx_prepack::cli {
namespace {

constexpr std::string_view kMemoDefault =
    "$ONNX_PREPACK_MEMO_DIR, else $XDG_CACHE_HOME/onnx-prepack/memo, else "
    "~/.cache/onnx-prepack/memo";
constexpr std::string_view kModelExits =
    "0 success; 2 usage error, missing or malformed model; 3 I/O or internal failure";

OptionSpec json_option(std::string_view what) { return {"json", "", "off (text)", what}; }

// The engine's flags (cli/engine_flags.h) as `run` and `complete` take them,
// in front of the command's own options.
std::vector<OptionSpec> with_engine_options(std::vector<OptionSpec> own) {
  std::vector<OptionSpec> v = {
      {"cache", "DIR|off", "off", "write-back cache store (created if missing)"},
      {"verify", "full|memo|off", verify_policy_name(kDefaultVerifyPolicy),
       "source digest policy (docs/format.md, 7.2)"},
      {"threads", "N", "0 (all cores)", "size of the one thread pool, 0..1024"},
      {"weights", "packed|plain", weight_mode_name(kDefaultWeightMode),
       "plain skips the resolver and packs B at every run (comparison only)"},
      {"qdq", "exact|integer", qdq_mode_name(kDefaultQdqMode),
       "weight-only QDQ units: the graph's float product, or the int8 kernels with A "
       "quantized on the fly (ONNX Runtime's way; changes the output)"},
      {"memo-dir", "DIR", kMemoDefault, "memo records for --verify memo"},
      {"cache-max-mib", "N", "4096", "size bound of the cache store in MiB (0 = unbounded)"},
      {"float16-intermediates", "float16|float", "float16",
       "float keeps FLOAT16 values in float between float-computed nodes, as ONNX Runtime"}};
  v.insert(v.begin(), own.begin(), own.end() - 1);  // the command's own, then these, then --json
  v.push_back(own.back());
  return v;
}

std::vector<CommandSpec> make_specs() {
  std::vector<CommandSpec> v;
  v.push_back({"inspect",
               "summarise a model and its compiled tensors",
               "MODEL",
               {json_option("print one JSON object (keys in docs/cli.md, \"inspect\")")},
               {"onnx-prepack inspect model.onnx", "onnx-prepack inspect model.onnx --json"},
               kModelExits});
  v.push_back({"check",
               "validate struct types and compiled tensors",
               "MODEL",
               {json_option("print {\"valid\", \"errors\", \"warnings\"}")},
               {"onnx-prepack check model.compiled.onnx", "onnx-prepack check m.onnx --json"},
               "0 valid (warnings allowed); 1 errors found; 2 usage error, missing or malformed "
               "model; 3 I/O or internal failure"});
  v.push_back({"digest",
               "canonical digests of the initializers",
               "MODEL",
               {{"algorithm", "NAME", "blake3", "digest algorithm: blake3 or sha256"},
                {"threads", "N", "0 (one per hardware thread)",
                 "threads hashing large tensors, 0..1024; the digest never depends on it"},
                json_option("print a JSON list, one object per initializer")},
               {"onnx-prepack digest model.onnx",
                "onnx-prepack digest model.onnx --algorithm "
                "sha256 --json"},
               "0 all digested; 1 some initializers have no digest; 2 usage error, missing or "
               "malformed model; 3 I/O or internal failure"});
  v.push_back(
      {"explain",
       "which compiled entries this host would use, and why",
       "MODEL",
       {{"arch", "STR", "the detected host",
         "pretend the host is exactly this architecture (x86_64-v3, x86_64-avx2-fma)"},
        {"verify", "full|memo|off", verify_policy_name(kDefaultVerifyPolicy),
         "source digest policy (docs/format.md, 7.2)"},
        {"cache", "DIR", "off", "also consult this cache store (read-only) after the model misses"},
        {"memo-dir", "DIR", kMemoDefault, "memo store folder for --verify memo"},
        {"input", "NAME", "none",
         "treat graph input NAME as fed in this run (its initializer is overridden)", 0, true},
        {"fail-on-miss", "", "off", "exit 1 when any weight misses"},
        json_option("print one JSON object (keys in docs/cli.md, \"explain\")")},
       {"onnx-prepack explain model.compiled.onnx",
        "onnx-prepack explain model.compiled.onnx --arch x86_64-v3 --verify memo --json",
        "onnx-prepack explain model.onnx --cache ~/.cache/op --fail-on-miss"},
       "0 success (misses are information); 1 a weight misses with --fail-on-miss; 2 usage "
       "error, missing or malformed model; 3 I/O or internal failure"});
  v.push_back(
      {"compile",
       "pack eligible weights into compiled tensors",
       "MODEL -o OUT",
       {{"output", "OUT", "required", "the model to write; payloads go to OUT.<16 hex>.data", 'o'},
        {"target", "host|ARCH", "host",
         "architecture to pack for (x86_64-v3, x86_64-avx512f, ...); repeatable", 0, true},
        {"digest", "ALG", "blake3", "source_digest algorithm: blake3 or sha256"},
        {"no-lift-constants", "", "off (Constant nodes are lifted)",
         "keep top-level Constant nodes instead of turning them into initializers"},
        {"lift-constants", "", "on", "deprecated: accepted for earlier versions, changes nothing"},
        {"threads", "N", "0 (hardware threads)", "pool for hashing and packing, 0..1024"},
        {"memo-dir", "DIR", kMemoDefault, "where to record the digests just computed"},
        {"no-memo", "", "off (digests are recorded)", "record no memo"},
        {"reference-source-data", "", "off (OUT stands alone)",
         "keep referencing MODEL's external data files in OUT's folder instead of copying them"},
        {"qdq", "exact|integer", qdq_mode_name(kDefaultQdqMode),
         "integer also packs weight-only QDQ weights for `run --qdq integer` (docs/runtime.md)"},
        json_option("print the summary as JSON, with the files written")},
       {"onnx-prepack compile model.onnx -o model.compiled.onnx",
        "onnx-prepack compile model.onnx -o out.onnx --target x86_64-v3 --target x86_64-v4",
        "onnx-prepack compile model.onnx -o out.onnx --digest sha256 --no-memo --json"},
       "0 written; 2 usage error, unknown --target/--digest, missing or malformed model; "
       "3 write or other I/O failure, internal failure"});
  v.push_back(
      {"run",
       "run a model with cache-aware weight preparation",
       "MODEL",
       with_engine_options(
           {{"input", "NAME=FILE.npy|NAME=random[:DxD...]",
             "random for every input no initializer provides",
             "feed a graph input from a .npy file or pseudo-random values; repeatable", 0, true},
            {"output-dir", "DIR", "none (outputs are not written)",
             "write each output as DIR/NAME.npy"},
            {"repeat", "N", "0", "steady runs after the first; the median is reported"},
            {"seed", "N", "1", "seed of the random inputs"},
            {"deadline-ms", "N", "0 (none)",
             "stop each run (the first and every --repeat) N ms after it starts; exit 4"},
            json_option("print timings, weights, plan, memory and outputs as JSON")}),
       {"onnx-prepack run model.compiled.onnx",
        "onnx-prepack run model.onnx --input x=x.npy --output-dir out --json",
        "onnx-prepack run model.onnx --input input_ids=random:1x128 --cache ~/.cache/op "
        "--repeat 10",
        "onnx-prepack run untrusted.onnx --deadline-ms 2000"},
       "0 ran; 2 usage error, missing or malformed model or input, unsupported operator, shape "
       "error; 3 I/O or internal failure; 4 a run passed --deadline-ms"});
  v.push_back(
      {"complete",
       "generate token ids from a decoder (KV-cache loop; docs/llm.md, \"Generation\")",
       "MODEL|DIR --prompt IDS",
       with_engine_options(
           {{"prompt", "IDS", "required", "prompt token ids, comma-separated; repeat for a batch",
             0, true},
            {"max-new-tokens", "N", "0 (until --max-length)",
             "tokens generated per sequence at most"},
            {"max-length", "N",
             "genai_config's search.max_length without --max-new-tokens, else 0 (longest prompt "
             "+ --max-new-tokens)",
             "tokens per sequence, prompt included: the KV cache's length"},
            {"sample", "", "off (greedy)", "sample with --temperature, --top-k, --top-p, --seed"},
            {"temperature", "T", "1", "logits divided by T before sampling; > 0"},
            {"top-k", "K", "0 (all)", "sample among the K most likely"},
            {"top-p", "P", "1", "sample from the smallest set whose probability reaches P"},
            {"seed", "N", "0", "the sampler's seed"},
            {"stop-id", "ID[,ID...]", "genai_config's eos_token_id, else none",
             "a sequence that emits one is done; repeatable", 0, true},
            {"pad-id", "ID", "genai_config's pad_token_id, else 0",
             "fills shorter prompts of a batch"},
            json_option("print sequences, new tokens and stats as JSON")}),
       {"onnx-prepack complete model.compiled.onnx --prompt 1,15043,3186 --max-new-tokens 32",
        "onnx-prepack complete m.onnx --prompt 1,2,3 --prompt 4,5 --max-length 64 --json",
        "onnx-prepack complete m.onnx --prompt 1,2 --max-new-tokens 16 --sample --top-p 0.9 "
        "--seed 7"},
       "0 generated; 2 usage error, missing or malformed model, not a decoder, bad token id or "
       "parameter; 3 I/O or internal failure"});
  v.push_back({"generate",
               "write a deterministic MLP, transformer, MatMulNBits, decoder or encoder model",
               "mlp|transformer|llm|decoder|encoder -o OUT.onnx",
               {{"output", "OUT.onnx", "required", "the model to write", 'o'},
                {"layers", "N", "2", "number of layers, 0..4096"},
                {"width", "N", "256", "hidden width"},
                {"heads", "N", "4", "attention heads (transformer); must divide --width"},
                {"seq", "N", "16", "sequence length (transformer)"},
                {"vocab", "N", "1000", "vocabulary size (transformer)"},
                {"external", "", "off", "tensors of 1 KiB or more go to OUT.onnx.data"},
                {"seed", "N", "1", "seed of the weights"},
                {"bits", "4|8", "4", "llm: bits per quantized weight"},
                {"block-size", "N", "32", "llm: quantization block, a power of 2 in [16, 256]"},
                {"accuracy-level", "0|4", "0", "llm: MatMulNBits accuracy_level"},
                {"no-zero-points", "", "off (zero points written)",
                 "llm, decoder: write no zero points (symmetric int4)"},
                {"preset", "NAME", "tiny / bert-base",
                 "decoder: tiny or 7b; encoder: bert-base, minilm-l6 or tiny"},
                {"form", "genai|optimum", "genai",
                 "decoder: onnxruntime-genai builder layout or optimum standard ops"},
                {"hidden", "N", "preset", "decoder, encoder: hidden size"},
                {"intermediate", "N", "preset", "decoder, encoder: MLP / FFN size"},
                {"kv-heads", "N", "preset", "decoder: key/value heads; must divide --heads"},
                {"max-positions", "N", "preset", "decoder: cos/sin cache rows; encoder: positions"},
                {"local-window", "N", "-1 (none)", "decoder: attention local window size"},
                {"int8", "", "off", "encoder: quantize_dynamic int8 MatMulInteger form"},
                {"dry-run", "", "off", "decoder, encoder: print the sizes, write nothing"},
                json_option("print {\"path\", \"kind\", \"weight_bytes\", ...} as JSON")},
               {"onnx-prepack generate mlp -o mlp.onnx --width 1024 --layers 4",
                "onnx-prepack generate transformer -o tf.onnx --external",
                "onnx-prepack generate llm -o llm.onnx --bits 4 --block-size 32",
                "onnx-prepack generate decoder --preset tiny -o tiny.onnx --form optimum",
                "onnx-prepack generate encoder --preset minilm-l6 --int8 -o minilm.onnx"},
               "0 written; 2 usage error; 3 write or internal failure"});
  v.push_back({"ops",
               "list the operators the CPU runtime runs",
               "",
               {json_option("print {\"operators\", \"count\"}")},
               {"onnx-prepack ops", "onnx-prepack ops --json"},
               "0 listed; 2 usage error"});
  return v;
}

void append_wrapped(std::string& out, const std::vector<std::string>& words, size_t indent) {
  size_t col = out.size() - (out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
  for (const std::string& w : words) {
    if (col + 1 + w.size() > 100 && col > indent) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
    } else {
      out += ' ';
      ++col;
    }
    out += w;
    col += w.size();
  }
}

std::string option_label(const OptionSpec& o) {
  std::string s;
  if (o.short_name != 0) s += std::string("-") + o.short_name + ", ";
  s += "--" + std::string(o.name);
  if (!o.value.empty()) s += " " + std::string(o.value);
  return s;
}

}  // namespace

const std::vector<CommandSpec>& command_specs() {
  static const std::vector<CommandSpec> specs = make_specs();
  return specs;
}

const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& c : command_specs()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const std::vector<OptionSpec>& global_options() {
  static const std::vector<OptionSpec> g = {
      {"allow-external-links", "", "off (or ONNX_PREPACK_ALLOW_EXTERNAL_LINKS=1)",
       "follow symbolic links out of the model's folder for external data"},
      {"help", "", "off", "print this help and exit 0", 'h'},
  };
  return g;
}

std::string synopsis(const CommandSpec& c) {
  std::string out = "usage: onnx-prepack " + std::string(c.name);
  if (!c.operands.empty()) out += " " + std::string(c.operands);
  std::vector<std::string> words;
  for (const OptionSpec& o : c.options) {
    if (o.default_text == "required") continue;  // in the operands
    std::string w = "[--" + std::string(o.name);
    if (!o.value.empty()) w += " " + std::string(o.value);
    w += "]";
    if (o.repeatable) w += "...";
    words.push_back(w);
  }
  append_wrapped(out, words, 8);
  return out + "\n";
}

std::string help_text(const CommandSpec& c) {
  std::string out = synopsis(c);
  out += "\n" + std::string(c.summary) + " (docs/cli.md, \"" + std::string(c.name) + "\").\n";
  size_t width = 0;
  for (const auto* list : {&c.options, &global_options()}) {
    for (const OptionSpec& o : *list) width = std::max(width, option_label(o).size());
  }
  width = std::min<size_t>(width, 34);
  auto describe = [&](const OptionSpec& o) {
    std::string label = option_label(o);
    std::string line = "  " + label;
    if (label.size() > width) {
      line += "\n" + std::string(width + 4, ' ');
    } else {
      line += std::string(width + 2 - label.size(), ' ');
    }
    line += std::string(o.description);
    if (o.repeatable && o.description.find("repeatable") == std::string_view::npos)
      line += "; repeatable";
    line += " (default: " + std::string(o.default_text) + ")\n";
    return line;
  };
  out += "\noptions:\n";
  for (const OptionSpec& o : c.options) out += describe(o);
  out += "\nglobal options:\n";
  for (const OptionSpec& o : global_options()) out += describe(o);
  out += "\nexamples:\n";
  for (std::string_view e : c.examples) out += "  " + std::string(e) + "\n";
  out += "\nexit codes: " + std::string(c.exit_codes) + "\n";
  return out;
}

std::string main_help() {
  std::string out = "usage: onnx-prepack <command> [options]\n\ncommands:\n";
  for (const CommandSpec& c : command_specs()) {
    std::string name(c.name);
    out += "  " + name + std::string(name.size() < 9 ? 9 - name.size() : 1, ' ') + " " +
           std::string(c.summary) + "\n";
  }
  out += "  help      'onnx-prepack help COMMAND' is 'onnx-prepack COMMAND --help'\n";
  out +=
      "\nglobal options: --allow-external-links (any command), --help, --version\n"
      "\nexamples:\n"
      "  onnx-prepack compile model.onnx -o model.compiled.onnx\n"
      "  onnx-prepack run model.compiled.onnx --json\n"
      "  onnx-prepack help run\n"
      "\n'onnx-prepack <command> --help' describes a command; see docs/cli.md.\n";
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance, three rows.
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = 0;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (!best || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  if (!best || best_d > 2 || best_d * 2 >= std::max<size_t>(word.size(), 2)) return std::nullopt;
  return best;
}

}  // namespace onnx_prepack::cli
