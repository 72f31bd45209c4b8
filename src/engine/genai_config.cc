// genai_config.json -> GenaiConfig, and the precedence of the search options.
// Only the keys the generator uses are read; the rest of the file (provider
// options, session options, other search values) is ignored.
#include "engine/genai_config.h"

#include <filesystem>
#include <string_view>
#include <system_error>

#include "base/atomic_file.h"
#include "base/json.h"

namespace onnx_prepack::engine {
namespace {

using base::Json;

constexpr uint64_t kMaxConfigBytes = 16ull << 20;
constexpr const char* kConfigName = "genai_config.json";

Status wrong_type(const std::string& path, std::string_view key, std::string_view want) {
  return invalid_argument(path + ": " + std::string(key) + " must be " + std::string(want));
}

// The member at `a`.`b` (nullptr when either is absent).
const Json* member(const Json& root, std::string_view a, std::string_view b) {
  const Json* x = root.find(a);
  return x == nullptr ? nullptr : x->find(b);
}

Result<std::optional<int64_t>> optional_int(const std::string& path, const Json& root,
                                            std::string_view a, std::string_view b) {
  const Json* v = member(root, a, b);
  if (v == nullptr || v->is_null()) return std::optional<int64_t>();
  const auto i = v->as_int64();
  if (!i) return wrong_type(path, std::string(a) + "." + std::string(b), "an integer");
  return std::optional<int64_t>(*i);
}

bool is_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

}  // namespace

Result<GenaiConfig> read_genai_config(const std::string& path) {
  OP_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, base::read_file(path, kMaxConfigBytes));
  OP_ASSIGN_OR_RETURN(
      Json root,
      base::parse_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                       path));
  if (!root.is_object()) return wrong_type(path, "the document", "an object");
  GenaiConfig c;
  c.path = path;
  if (const Json* f = member(root, "model", "decoder")) {
    if (const Json* name = f->find("filename"); name != nullptr && !name->is_null()) {
      if (!name->is_string() || name->as_string().empty())
        return wrong_type(path, "model.decoder.filename", "a file name");
      c.decoder_file = name->as_string();
    }
  }
  if (const Json* eos = member(root, "model", "eos_token_id"); eos != nullptr && !eos->is_null()) {
    if (eos->is_array()) {
      for (const Json& e : eos->as_array()) {
        const auto id = e.as_int64();
        if (!id) return wrong_type(path, "model.eos_token_id", "an integer or a list of integers");
        c.eos_token_ids.push_back(*id);
      }
    } else if (const auto id = eos->as_int64()) {
      c.eos_token_ids.push_back(*id);
    } else {
      return wrong_type(path, "model.eos_token_id", "an integer or a list of integers");
    }
  }
  OP_ASSIGN_OR_RETURN(c.pad_token_id, optional_int(path, root, "model", "pad_token_id"));
  OP_ASSIGN_OR_RETURN(c.max_length, optional_int(path, root, "search", "max_length"));
  return c;
}

Result<GenaiModel> locate_genai_model(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  GenaiModel m;
  if (fs::is_directory(path, ec)) {
    const std::string config = (fs::path(path) / kConfigName).string();
    if (is_file(config)) {
      OP_ASSIGN_OR_RETURN(GenaiConfig c, read_genai_config(config));
      m.config = std::move(c);
    }
    const std::string name =
        m.config && !m.config->decoder_file.empty() ? m.config->decoder_file : "model.onnx";
    m.model_path = (fs::path(path) / name).string();
    if (!is_file(m.model_path)) {
      return not_found(path + ": a folder without " + name +
                       (m.config ? " (the decoder " + config + " names)" : std::string()) +
                       "; give the model file or a folder with genai_config.json or model.onnx");
    }
    return m;
  }
  m.model_path = path;
  const fs::path parent = fs::path(path).parent_path();
  const std::string config = ((parent.empty() ? fs::path(".") : parent) / kConfigName).string();
  if (is_file(path) && is_file(config)) {
    OP_ASSIGN_OR_RETURN(GenaiConfig c, read_genai_config(config));
    m.config = std::move(c);
  }
  return m;
}

GeneratorParams resolve_params(const SearchOptions& given, const GenaiConfig* config) {
  GeneratorParams p;
  if (config != nullptr) {
    p.stop_ids = config->eos_token_ids;
    if (config->pad_token_id) p.pad_token_id = *config->pad_token_id;
    if (config->max_length && given.max_length.value_or(0) == 0 &&
        given.max_new_tokens.value_or(0) == 0) {
      p.max_length = *config->max_length;
    }
  }
  if (given.max_length) p.max_length = *given.max_length;
  if (given.max_new_tokens) p.max_new_tokens = *given.max_new_tokens;
  if (given.do_sample) p.do_sample = *given.do_sample;
  if (given.temperature) p.temperature = float(*given.temperature);
  if (given.top_k) p.top_k = *given.top_k;
  if (given.top_p) p.top_p = float(*given.top_p);
  if (given.seed) p.seed = *given.seed;
  if (given.stop_ids) p.stop_ids = *given.stop_ids;
  if (given.pad_token_id) p.pad_token_id = *given.pad_token_id;
  return p;
}

}  // namespace onnx_prepack::engine
