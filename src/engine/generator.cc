// The KV-cache loop of include/onnx_prepack/generator.hpp over one Engine.
// Each step feeds the token ids, the attention mask (and position ids) and
// binds the KV buffers, sized once for max_length, as the step's past and
// present: genai's GroupQueryAttention writes the new rows into the one
// buffer it reads (shared buffer), optimum's Concat writes past + new rows
// into the other buffer of a pair, read as past by the next step.
#include "onnx_prepack/generator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "engine/decoder_signature.h"
#include "engine/token_sampler.h"
#include "kernels/vec_math/vec_half.h"
#include "runtime/tensor.h"

namespace onnx_prepack {
namespace {

using Clock = std::chrono::steady_clock;
using engine::DecoderForm;
using runtime::HostTensor;
using runtime::Shape;
using runtime::Tensor;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status check_params(const GeneratorParams& p) {
  const auto bad = [](const std::string& what) { return invalid_argument("generator: " + what); };
  if (p.max_length < 0) return bad("max_length " + std::to_string(p.max_length) + " is negative");
  if (p.max_new_tokens < 0)
    return bad("max_new_tokens " + std::to_string(p.max_new_tokens) + " is negative");
  if (p.max_length == 0 && p.max_new_tokens == 0)
    return bad("set max_length or max_new_tokens (both are 0)");
  if (p.do_sample && !(p.temperature > 0 && std::isfinite(p.temperature)))
    return bad("temperature " + number(p.temperature) + " must be finite and > 0");
  if (p.top_k < 0) return bad("top_k " + std::to_string(p.top_k) + " is negative");
  if (!(p.top_p > 0 && p.top_p <= 1)) return bad("top_p " + number(p.top_p) + " must be in (0, 1]");
  if (p.pad_token_id < 0)
    return bad("pad_token_id " + std::to_string(p.pad_token_id) + " is negative");
  for (int64_t id : p.stop_ids)
    if (id < 0) return bad("stop id " + std::to_string(id) + " is negative");
  return ok_status();
}

// An integer tensor of `dtype` (INT64 or INT32) holding `values`.
Result<HostTensor> int_tensor(int32_t dtype, Shape shape, const std::vector<int64_t>& values,
                              const char* what) {
  OP_ASSIGN_OR_RETURN(HostTensor t, HostTensor::try_allocate(dtype, std::move(shape), what));
  if (dtype == runtime::kInt64) {
    std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(int64_t));
  } else {
    auto* d = static_cast<int32_t*>(t.mutable_data());
    for (size_t i = 0; i < values.size(); ++i) d[i] = int32_t(values[i]);
  }
  return t;
}

Tensor view_as(const HostTensor& buffer, Shape shape) {
  return Tensor{buffer.dtype(), std::move(shape), const_cast<void*>(buffer.data())};
}

}  // namespace

struct Generator::State {
  Engine* engine = nullptr;
  GeneratorParams params;
  engine::DecoderSignature sig;
  engine::TokenSampler sampler;
  State(Engine& e, GeneratorParams p, engine::DecoderSignature s)
      : engine(&e),
        params(std::move(p)),
        sig(std::move(s)),
        sampler({params.do_sample, params.temperature, params.top_k, params.top_p}, params.seed) {}

  bool started = false;
  size_t batch = 0;
  int64_t max_length = 0;
  int64_t padded_prompt = 0;  // S of the prompt step (the longest prompt)
  std::vector<std::vector<int64_t>> seqs;
  std::vector<int64_t> prompt_lens;
  std::vector<int64_t> cached;     // genai: each sequence's rows in the cache
  int64_t past_len = 0;            // optimum: rows in the current past buffers (all sequences)
  std::vector<int64_t> generated;  // per sequence
  std::vector<bool> done;
  std::vector<int64_t> next;
  // Per KV tensor: genai one max-length buffer; optimum two, swapped each step.
  std::vector<HostTensor> kv[2];
  int current = 0;
  HostTensor logits;
  std::vector<float> last_logits;
  int64_t vocab = 0;
  GenerationStats stats;

  Status check_ids(const std::vector<std::vector<int64_t>>& rows) const;
  Status allocate_kv();
  // One step: `ids` [batch, s] (row-major), the mask's ones per row (genai:
  // the first n of max_length; optimum: laid out by optimum_mask), position
  // ids when the model takes them. Fills last_logits from row `rows[b]`.
  Status step(const std::vector<int64_t>& ids, int64_t s, const std::vector<int64_t>& mask,
              int64_t mask_len, const std::vector<int64_t>& positions,
              const std::vector<int64_t>& rows);
  void choose_tokens();
};

Generator::Generator(std::unique_ptr<State> state) : s_(std::move(state)) {}
Generator::~Generator() = default;

Result<std::unique_ptr<Generator>> Generator::create(Engine& engine, GeneratorParams params) {
  OP_RETURN_IF_ERROR(check_params(params));
  OP_ASSIGN_OR_RETURN(engine::DecoderSignature sig, engine::read_decoder_signature(engine));
  if (sig.vocab > 0 && params.pad_token_id >= sig.vocab) {
    return invalid_argument("generator: pad_token_id " + std::to_string(params.pad_token_id) +
                            " is not below the vocabulary size " + std::to_string(sig.vocab));
  }
  return std::unique_ptr<Generator>(
      new Generator(std::make_unique<State>(engine, std::move(params), std::move(sig))));
}

Status Generator::State::check_ids(const std::vector<std::vector<int64_t>>& rows) const {
  if (rows.empty()) return invalid_argument("generator: append_tokens got no rows");
  for (size_t b = 0; b < rows.size(); ++b) {
    if (rows[b].empty())
      return invalid_argument("generator: row " + std::to_string(b) + " of the tokens is empty");
    for (int64_t id : rows[b]) {
      if (id < 0 || (sig.vocab > 0 && id >= sig.vocab) ||
          (sig.ids_dtype == runtime::kInt32 && id > INT32_MAX)) {
        return invalid_argument("generator: token id " + std::to_string(id) + " in row " +
                                std::to_string(b) + " is outside [0, " +
                                (sig.vocab > 0 ? std::to_string(sig.vocab) : "vocabulary") + ")");
      }
    }
  }
  return ok_status();
}

Status Generator::State::allocate_kv() {
  const int buffers = sig.form == DecoderForm::kGenai ? 1 : 2;
  for (int i = 0; i < buffers; ++i) {
    kv[i].clear();
    for (const engine::KvTensor& t : sig.kv) {
      OP_ASSIGN_OR_RETURN(
          HostTensor h,
          HostTensor::try_allocate(sig.kv_dtype, {int64_t(batch), t.heads, max_length, t.head_size},
                                   "generator: the KV cache '" + t.past + "'"));
      kv[i].push_back(std::move(h));
    }
  }
  return ok_status();
}

Status Generator::State::step(const std::vector<int64_t>& ids, int64_t s,
                              const std::vector<int64_t>& mask, int64_t mask_len,
                              const std::vector<int64_t>& positions,
                              const std::vector<int64_t>& rows) {
  const int64_t B = int64_t(batch);
  std::map<std::string, HostTensor> owned;
  OP_ASSIGN_OR_RETURN(owned[engine::kInputIds],
                      int_tensor(sig.ids_dtype, {B, s}, ids, "generator: input_ids"));
  OP_ASSIGN_OR_RETURN(owned[engine::kAttentionMask],
                      int_tensor(sig.mask_dtype, {B, mask_len}, mask, "generator: attention_mask"));
  if (sig.has_position_ids) {
    OP_ASSIGN_OR_RETURN(
        owned[engine::kPositionIds],
        int_tensor(sig.position_dtype, {B, s}, positions, "generator: position_ids"));
  }
  std::map<std::string, Tensor> inputs;
  for (const auto& [name, t] : owned) inputs[name] = t.view();
  std::map<std::string, Tensor> outputs;
  const bool genai = sig.form == DecoderForm::kGenai;
  const int in_buf = genai ? 0 : current, out_buf = genai ? 0 : 1 - current;
  for (size_t i = 0; i < sig.kv.size(); ++i) {
    const engine::KvTensor& t = sig.kv[i];
    const int64_t past_rows = genai ? max_length : past_len;
    const int64_t present_rows = genai ? max_length : past_len + s;
    inputs[t.past] = view_as(kv[in_buf][i], {B, t.heads, past_rows, t.head_size});
    outputs[t.present] = view_as(kv[out_buf][i], {B, t.heads, present_rows, t.head_size});
  }
  // The plan's outputs: the KV cache must be what the binding assumes.
  std::vector<std::string> bound;
  for (const auto& [name, t] : outputs) bound.push_back(name);
  bound.push_back(engine::kLogits);
  const auto t0 = Clock::now();
  OP_ASSIGN_OR_RETURN(std::vector<Engine::OutputShape> shapes, engine->plan_outputs(inputs, bound));
  stats.plan_ms += ms_since(t0);
  const auto& names = engine->output_names();
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = outputs.find(names[i]);
    if (it != outputs.end() && shapes[i].shape != it->second.shape) {
      return invalid_argument(
          "generator: output '" + names[i] + "' of this step is " +
          runtime::shape_string(shapes[i].shape) + ", the KV cache binding needs " +
          runtime::shape_string(it->second.shape) +
          (genai ? " (a GroupQueryAttention present as long as its max-length past)"
                 : " (present = past + the step's rows)"));
    }
    if (names[i] == engine::kLogits) {
      const Shape& ls = shapes[i].shape;
      if (ls.size() != 3 || ls[0] != B || ls[1] != s || ls[2] <= 0) {
        return invalid_argument("generator: logits of this step are " + runtime::shape_string(ls) +
                                ", expected [" + std::to_string(B) + ", " + std::to_string(s) +
                                ", vocabulary]");
      }
      vocab = ls[2];
      if (logits.shape() != ls || logits.dtype() != shapes[i].dtype) {
        OP_ASSIGN_OR_RETURN(logits,
                            HostTensor::try_allocate(shapes[i].dtype, ls, "generator: logits"));
      }
      outputs[names[i]] = logits.view();
    }
  }
  OP_RETURN_IF_ERROR(engine->run_bound(inputs, outputs));
  if (!genai) {
    current = out_buf;
    past_len += s;
  }
  // The row of each sequence's last token, as float.
  last_logits.resize(size_t(B * vocab));
  for (int64_t b = 0; b < B; ++b) {
    const size_t at = size_t((b * s + rows[size_t(b)]) * vocab);
    float* dst = last_logits.data() + size_t(b * vocab);
    if (logits.dtype() == runtime::kFloat) {
      std::memcpy(dst, logits.as<float>() + at, size_t(vocab) * sizeof(float));
    } else {
      const auto* h = logits.as<uint16_t>() + at;
      for (int64_t v = 0; v < vocab; ++v) dst[v] = kernels::vec::half_to_float(h[v]);
    }
  }
  return ok_status();
}

void Generator::State::choose_tokens() {
  for (size_t b = 0; b < batch; ++b) {
    if (done[b]) {
      next[b] = params.pad_token_id;
      continue;
    }
    const int64_t t = sampler.choose(
        std::span<const float>(last_logits.data() + b * size_t(vocab), size_t(vocab)));
    next[b] = t;
    seqs[b].push_back(t);
    ++generated[b];
    ++stats.new_tokens;
    const bool stop =
        std::find(params.stop_ids.begin(), params.stop_ids.end(), t) != params.stop_ids.end();
    // The cache holds max_length rows per sequence: genai's right-padded
    // sequences each their own, optimum's left-padded ones the padded length.
    const int64_t length =
        sig.form == DecoderForm::kGenai ? int64_t(seqs[b].size()) : padded_prompt + generated[b];
    if (stop || length >= max_length ||
        (params.max_new_tokens > 0 && generated[b] >= params.max_new_tokens))
      done[b] = true;
  }
}

Status Generator::append_tokens(const std::vector<std::vector<int64_t>>& rows) {
  State& s = *s_;
  const auto t0 = Clock::now();
  OP_RETURN_IF_ERROR(s.check_ids(rows));
  if (s.started) return append_more(rows[0], rows.size(), t0);
  s.batch = rows.size();
  int64_t longest = 0;
  for (const auto& r : rows) longest = std::max(longest, int64_t(r.size()));
  s.max_length = s.params.max_length > 0 ? s.params.max_length : longest + s.params.max_new_tokens;
  if (s.max_length <= longest) {
    return invalid_argument("generator: max_length " + std::to_string(s.max_length) +
                            " leaves no room after the longest prompt (" + std::to_string(longest) +
                            " tokens)");
  }
  s.padded_prompt = longest;
  s.seqs = rows;
  s.prompt_lens.clear();
  for (const auto& r : rows) s.prompt_lens.push_back(int64_t(r.size()));
  s.generated.assign(s.batch, 0);
  s.done.assign(s.batch, false);
  s.next.assign(s.batch, s.params.pad_token_id);
  OP_RETURN_IF_ERROR(s.allocate_kv());
  s.current = 0;
  s.past_len = 0;

  const bool genai = s.sig.form == DecoderForm::kGenai;
  const int64_t S = longest;
  std::vector<int64_t> ids, mask, pos, last_rows;
  for (size_t b = 0; b < s.batch; ++b) {
    const int64_t n = s.prompt_lens[b], pad = S - n;
    for (int64_t j = 0; j < S; ++j) {
      // genai: right padding (ONNX Runtime's CPU GroupQueryAttention);
      // optimum: left padding, positions counting the real tokens.
      const bool real = genai ? j < n : j >= pad;
      const int64_t k = genai ? j : j - pad;
      ids.push_back(real ? rows[b][size_t(k)] : s.params.pad_token_id);
      mask.push_back(real ? 1 : 0);
      pos.push_back(real ? k : 1);
    }
    last_rows.push_back(genai ? n - 1 : S - 1);
  }
  OP_RETURN_IF_ERROR(s.step(ids, S, mask, S, pos, last_rows));
  s.cached = s.prompt_lens;
  s.started = true;
  s.stats.prompt_tokens = 0;
  for (int64_t n : s.prompt_lens) s.stats.prompt_tokens += n;
  s.choose_tokens();
  s.stats.first_token_ms = ms_since(t0);
  return ok_status();
}

// A later append_tokens: the last chosen token (not in the cache yet) and the
// new ones run as one step of a single sequence.
Status Generator::append_more(const std::vector<int64_t>& tokens, size_t rows,
                              std::chrono::steady_clock::time_point t0) {
  State& s = *s_;
  if (s.batch != 1 || rows != 1) {
    return invalid_argument("generator: appending tokens after the prompt step needs batch 1 (" +
                            std::to_string(s.batch) + " sequences, " + std::to_string(rows) +
                            " rows given)");
  }
  std::vector<int64_t> ids{s.next[0]};
  ids.insert(ids.end(), tokens.begin(), tokens.end());
  const int64_t n = int64_t(ids.size());
  const bool genai = s.sig.form == DecoderForm::kGenai;
  const int64_t have = genai ? s.cached[0] : s.past_len;
  if (have + n >= s.max_length) {
    return invalid_argument("generator: " + std::to_string(tokens.size()) + " more tokens after " +
                            std::to_string(have + 1) + " leave no room in max_length " +
                            std::to_string(s.max_length));
  }
  std::vector<int64_t> mask, pos;
  const int64_t mask_len = genai ? s.max_length : have + n;
  for (int64_t j = 0; j < mask_len; ++j) mask.push_back(j < have + n ? 1 : 0);
  for (int64_t j = 0; j < n; ++j) pos.push_back(have + j);
  OP_RETURN_IF_ERROR(s.step(ids, n, mask, mask_len, pos, {n - 1}));
  s.cached[0] += n;
  s.seqs[0].insert(s.seqs[0].end(), tokens.begin(), tokens.end());
  s.done[0] = false;
  s.choose_tokens();
  s.stats.decode_ms += ms_since(t0);
  return ok_status();
}

Status Generator::generate_next_token() {
  State& s = *s_;
  if (!s.started) return invalid_argument("generator: append_tokens (the prompt) comes first");
  if (is_done()) return invalid_argument("generator: every sequence is done");
  const auto t0 = Clock::now();
  const bool genai = s.sig.form == DecoderForm::kGenai;
  const int64_t B = int64_t(s.batch);
  std::vector<int64_t> ids(s.next), mask, pos, rows(size_t(B), 0);
  int64_t mask_len = 0;
  if (genai) {
    // A max-length mask: the plan (and the total_sequence_length GroupQueryAttention
    // reads from its shape) stays the same every step; the ones count the rows.
    mask_len = s.max_length;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t j = 0; j < mask_len; ++j) mask.push_back(j <= s.cached[size_t(b)] ? 1 : 0);
      pos.push_back(s.cached[size_t(b)]);
    }
  } else {
    mask_len = s.past_len + 1;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t pad = s.padded_prompt - s.prompt_lens[size_t(b)];
      for (int64_t j = 0; j < mask_len; ++j) mask.push_back(j >= pad ? 1 : 0);
      pos.push_back(s.past_len - pad);
    }
  }
  OP_RETURN_IF_ERROR(s.step(ids, 1, mask, mask_len, pos, rows));
  for (int64_t& c : s.cached) ++c;
  s.choose_tokens();
  ++s.stats.decode_steps;
  s.stats.decode_ms += ms_since(t0);
  return ok_status();
}

bool Generator::is_done() const {
  if (!s_->started) return false;
  return std::all_of(s_->done.begin(), s_->done.end(), [](bool d) { return d; });
}
std::vector<int64_t> Generator::next_tokens() const { return s_->next; }
const std::vector<int64_t>& Generator::sequence(size_t b) const {
  static const std::vector<int64_t> none;
  return b < s_->seqs.size() ? s_->seqs[b] : none;
}
size_t Generator::batch_size() const { return s_->batch; }
const std::vector<float>& Generator::last_logits() const { return s_->last_logits; }
int64_t Generator::vocab_size() const { return s_->vocab > 0 ? s_->vocab : s_->sig.vocab; }
const GenerationStats& Generator::stats() const { return s_->stats; }
const GeneratorParams& Generator::params() const { return s_->params; }
const char* Generator::form() const {
  return s_->sig.form == DecoderForm::kGenai ? "genai" : "optimum";
}

Result<GenerateResult> generate(Engine& engine, const std::vector<std::vector<int64_t>>& prompts,
                                const GeneratorParams& params) {
  OP_ASSIGN_OR_RETURN(std::unique_ptr<Generator> gen, Generator::create(engine, params));
  OP_RETURN_IF_ERROR(gen->append_tokens(prompts));
  while (!gen->is_done()) OP_RETURN_IF_ERROR(gen->generate_next_token());
  GenerateResult r;
  for (size_t b = 0; b < gen->batch_size(); ++b) {
    r.sequences.push_back(gen->sequence(b));
    r.new_tokens.emplace_back(r.sequences.back().begin() + int64_t(prompts[b].size()),
                              r.sequences.back().end());
  }
  r.stats = gen->stats();
  return r;
}

}  // namespace onnx_prepack
