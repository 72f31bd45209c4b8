// onnxruntime-genai's genai_config.json, read once for every frontend (CLI
// `complete`, Python's onnx_prepack.genai): where a model folder's decoder is,
// and the generation defaults it names (docs/llm.md, "genai_config.json").
// The precedence, the caller's choice over the config's over the engine's, is
// applied here too (resolve_params), so the frontends cannot differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx_prepack/generator.hpp"
#include "onnx_prepack/status.h"

namespace onnx_prepack::engine {

struct GenaiConfig {
  std::string path;                     // the file read
  std::string decoder_file;             // model.decoder.filename, "" when absent
  std::vector<int64_t> eos_token_ids;   // model.eos_token_id (an int or a list)
  std::optional<int64_t> pad_token_id;  // model.pad_token_id
  std::optional<int64_t> max_length;    // search.max_length
};

// Reads and checks `path` (at most 16 MiB): errors name the file and the key
// whose value has the wrong type.
Result<GenaiConfig> read_genai_config(const std::string& path);

// What a model argument names: an .onnx file (with the genai_config.json of
// its folder, if there is one), or a folder holding genai_config.json (its
// model.decoder.filename, else model.onnx) or model.onnx.
struct GenaiModel {
  std::string model_path;
  std::optional<GenaiConfig> config;
};
Result<GenaiModel> locate_genai_model(const std::string& path);

// The search options a caller set (a CLI flag, a Python keyword); unset ones
// come from the config, then from GeneratorParams' defaults.
struct SearchOptions {
  std::optional<int64_t> max_length, max_new_tokens, top_k, pad_token_id;
  std::optional<bool> do_sample;
  std::optional<double> temperature, top_p;
  std::optional<uint64_t> seed;
  std::optional<std::vector<int64_t>> stop_ids;
};

// `given` over `config` (may be null) over the defaults. The config's
// search.max_length is used only when the caller set neither max_length nor
// max_new_tokens (or set them to 0): a long context (4096, 131072) would otherwise size every KV
// cache for it.
GeneratorParams resolve_params(const SearchOptions& given, const GenaiConfig* config);

}  // namespace onnx_prepack::engine
