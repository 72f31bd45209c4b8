// The generator (include/onnx_prepack/generator.hpp) against a step-by-step
// loop over Engine::run that feeds each present back as the next past with a
// growing attention mask (what tests/runtime/decoder_vs_ort.py runs against
// ONNX Runtime): the same tokens and bitwise the same logits, in both decoder
// forms, batch 1 and 2; the KV cache bound in place; sampling, stop ids and
// bad parameters.
#include "onnx_prepack/generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "runtime/generate.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace onnx_prepack {
namespace {

namespace fs = std::filesystem;
using runtime::HostTensor;
using runtime::Tensor;

const std::vector<int64_t> kPrompt = {5, 17, 300, 42, 7, 99, 128, 3};
const std::vector<int64_t> kShort = {11, 23, 250, 4, 61};

std::string write_tiny(const std::string& form) {
  const fs::path dir = fs::temp_directory_path() / ("op_generator_test_" + form);
  fs::create_directories(dir);
  const std::string path = (dir / "model.onnx").string();
  auto opts = runtime::decoder_preset("tiny");
  EXPECT_TRUE(opts.ok());
  opts->form = form;
  auto written = runtime::write_decoder(*opts, path, false);
  EXPECT_TRUE(written.ok()) << written.status().message();
  return path;
}

std::unique_ptr<Engine> open(const std::string& path) {
  EngineOptions o;
  o.threads = 1;
  auto e = Engine::open(path, o);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return std::move(*e);
}

// A greedy generator of `max_new_tokens` on the tiny genai decoder, its prompt step run.
std::unique_ptr<Generator> prompted(Engine& engine, int64_t max_new_tokens) {
  GeneratorParams p;
  p.max_new_tokens = max_new_tokens;
  auto gen = Generator::create(engine, p);
  EXPECT_TRUE(gen.ok()) << gen.status().message();
  if (!gen.ok()) return nullptr;
  const Status st = (*gen)->append_tokens({kPrompt});
  EXPECT_TRUE(st.ok()) << st.message();
  return st.ok() ? std::move(*gen) : nullptr;
}

HostTensor ints(runtime::Shape shape, const std::vector<int64_t>& v) {
  HostTensor t = HostTensor::allocate(runtime::kInt64, std::move(shape));
  std::memcpy(t.mutable_data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

struct Reference {
  std::vector<std::vector<int64_t>> tokens;  // per sequence
  std::vector<std::vector<float>> logits;    // per step: [batch x vocab], each row's last token
};

// Greedy, `steps` decode steps after the prompt, through Engine::run: the
// attention mask grows by one each step; genai right-padded, optimum left-padded.
Reference reference_loop(Engine& engine, bool genai, const std::vector<std::vector<int64_t>>& rows,
                         int steps) {
  const int64_t B = int64_t(rows.size());
  int64_t S = 0;
  for (const auto& r : rows) S = std::max<int64_t>(S, int64_t(r.size()));
  std::map<std::string, HostTensor> past;
  for (const auto& in : engine.inputs()) {
    if (in.name.rfind("past_key_values.", 0) == 0)
      past[in.name] = HostTensor::allocate(in.dtype, {B, in.dims[1], 0, in.dims[3]});
  }
  const bool has_pos = engine.find_input("position_ids") != nullptr;
  Reference ref;
  ref.tokens.resize(size_t(B));
  std::vector<int64_t> last;
  for (int step = 0; step <= steps; ++step) {
    std::vector<int64_t> ids, mask, pos, rows_at;
    const int64_t s = step == 0 ? S : 1;
    const int64_t T = S + step;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = int64_t(rows[size_t(b)].size()), pad = S - n;
      if (step == 0) {
        for (int64_t j = 0; j < S; ++j) {
          const bool real = genai ? j < n : j >= pad;
          const int64_t k = genai ? j : j - pad;
          ids.push_back(real ? rows[size_t(b)][size_t(k)] : 0);
          mask.push_back(real);
          pos.push_back(real ? k : 1);
        }
        rows_at.push_back(genai ? n - 1 : S - 1);
      } else {
        ids.push_back(last[size_t(b)]);
        for (int64_t j = 0; j < T; ++j) mask.push_back(genai ? j < n + step : j >= pad);
        pos.push_back(n + step - 1);
        rows_at.push_back(0);
      }
    }
    std::map<std::string, HostTensor> feeds;
    feeds["input_ids"] = ints({B, s}, ids);
    feeds["attention_mask"] = ints({B, T}, mask);
    if (has_pos) feeds["position_ids"] = ints({B, s}, pos);
    std::map<std::string, Tensor> in;
    for (auto& [k, v] : feeds) in[k] = v.view();
    for (auto& [k, v] : past) in[k] = v.view();
    auto out = engine.run(in);
    EXPECT_TRUE(out.ok()) << out.status().message();
    if (!out.ok()) return ref;
    const auto& names = engine.output_names();
    std::vector<float> step_logits;
    last.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "logits") {
        const HostTensor& l = (*out)[i];
        const int64_t V = l.shape()[2];
        for (int64_t b = 0; b < B; ++b) {
          const float* row = l.as<float>() + (b * s + rows_at[size_t(b)]) * V;
          step_logits.insert(step_logits.end(), row, row + V);
          last.push_back(std::max_element(row, row + V) - row);
          ref.tokens[size_t(b)].push_back(last.back());
        }
      } else if (names[i].rfind("present.", 0) == 0) {
        past["past_key_values." + names[i].substr(8)] = std::move((*out)[i]);
      }
    }
    ref.logits.push_back(std::move(step_logits));
  }
  return ref;
}

void expect_matches_reference(const std::string& form,
                              const std::vector<std::vector<int64_t>>& rows) {
  const std::string path = write_tiny(form);
  const int steps = 12;
  Reference ref;
  {
    auto engine = open(path);
    ref = reference_loop(*engine, form == "genai", rows, steps);
  }
  auto engine = open(path);
  GeneratorParams p;
  p.max_new_tokens = steps + 1;
  auto gen = Generator::create(*engine, p);
  ASSERT_TRUE(gen.ok()) << gen.status().message();
  EXPECT_STREQ((*gen)->form(), form.c_str());
  auto st = (*gen)->append_tokens(rows);
  ASSERT_TRUE(st.ok()) << st.message();
  // Every past and present (tiny: 2 layers, key and value), the logits and
  // the fed ids, mask (and positions) are in the generator's buffers.
  const size_t bound = 2 * 4 + 1 + (form == "genai" ? 2 : 3);
  EXPECT_EQ(engine->plan_stats().bound_values, bound);
  int step = 0;
  EXPECT_EQ((*gen)->last_logits(), ref.logits[size_t(step)]) << "prompt step";
  while (!(*gen)->is_done()) {
    st = (*gen)->generate_next_token();
    ASSERT_TRUE(st.ok()) << st.message();
    ++step;
    ASSERT_LT(step, int(ref.logits.size()));
    EXPECT_EQ((*gen)->last_logits(), ref.logits[size_t(step)]) << "step " << step;
    EXPECT_EQ(engine->plan_stats().bound_values, bound);
  }
  EXPECT_EQ(step, steps);
  for (size_t b = 0; b < rows.size(); ++b) {
    std::vector<int64_t> want = rows[b];
    want.insert(want.end(), ref.tokens[b].begin(), ref.tokens[b].end());
    EXPECT_EQ((*gen)->sequence(b), want) << "sequence " << b;
  }
  const GenerationStats& stats = (*gen)->stats();
  EXPECT_EQ(stats.decode_steps, steps);
  EXPECT_EQ(stats.new_tokens, int64_t(rows.size()) * (steps + 1));
  EXPECT_GT(stats.first_token_ms, 0);
}

TEST(Generator, GenaiBatch1MatchesTheCopyingLoopBitwise) {
  expect_matches_reference("genai", {kPrompt});
}
TEST(Generator, GenaiBatch2RightPaddedMatchesTheCopyingLoopBitwise) {
  expect_matches_reference("genai", {kPrompt, kShort});
}
TEST(Generator, OptimumBatch1MatchesTheCopyingLoopBitwise) {
  expect_matches_reference("optimum", {kPrompt});
}
TEST(Generator, OptimumBatch2LeftPaddedMatchesTheCopyingLoopBitwise) {
  expect_matches_reference("optimum", {kPrompt, kShort});
}

// The decode steps of a genai decoder keep one plan: the mask is max_length wide.
TEST(Generator, GenaiDecodeStepsKeepOnePlan) {
  auto engine = open(write_tiny("genai"));
  auto gen = prompted(*engine, 8);
  ASSERT_NE(gen, nullptr);
  ASSERT_TRUE(gen->generate_next_token().ok());
  const double planned = gen->stats().plan_ms;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(gen->generate_next_token().ok());
  // A replan of the tiny model takes over a millisecond; the check costs microseconds.
  EXPECT_LT(gen->stats().plan_ms - planned, 0.5);
}

std::vector<int64_t> sample(Engine& engine, uint64_t seed) {
  GeneratorParams p;
  p.max_new_tokens = 16;
  p.do_sample = true;
  p.temperature = 1.5f;
  p.top_k = 50;
  p.top_p = 0.95f;
  p.seed = seed;
  auto r = generate(engine, {kPrompt}, p);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->new_tokens[0] : std::vector<int64_t>{};
}

TEST(Generator, SeededSamplingIsReproducibleAndSeedsDiffer) {
  auto engine = open(write_tiny("genai"));
  const auto a = sample(*engine, 7), b = sample(*engine, 7), c = sample(*engine, 8);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Generator, TopKOneIsGreedy) {
  auto engine = open(write_tiny("genai"));
  GeneratorParams p;
  p.max_new_tokens = 10;
  auto greedy = generate(*engine, {kPrompt}, p);
  ASSERT_TRUE(greedy.ok());
  p.do_sample = true;
  p.top_k = 1;
  p.seed = 3;
  auto sampled = generate(*engine, {kPrompt}, p);
  ASSERT_TRUE(sampled.ok());
  EXPECT_EQ(greedy->new_tokens, sampled->new_tokens);
}

TEST(Generator, StopIdEndsTheSequenceAndIsKept) {
  auto engine = open(write_tiny("genai"));
  GeneratorParams p;
  p.max_new_tokens = 12;
  auto full = generate(*engine, {kPrompt}, p);
  ASSERT_TRUE(full.ok());
  const auto& t = full->new_tokens[0];
  ASSERT_EQ(t.size(), 12u);
  const int64_t stop = t[4];
  const size_t first = size_t(std::find(t.begin(), t.end(), stop) - t.begin());
  p.stop_ids = {stop};
  auto stopped = generate(*engine, {kPrompt}, p);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->new_tokens[0], std::vector<int64_t>(t.begin(), t.begin() + first + 1));
}

TEST(Generator, MaxLengthBoundsTheSequence) {
  auto engine = open(write_tiny("genai"));
  GeneratorParams p;
  p.max_length = int64_t(kPrompt.size()) + 3;
  auto r = generate(*engine, {kPrompt}, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->sequences[0].size(), kPrompt.size() + 3);
}

TEST(Generator, AppendingTokensLaterMatchesOnePrompt) {
  // prompt + greedy token + more tokens, run as a later step, gives the
  // tokens that the whole sequence as one prompt gives.
  auto engine = open(write_tiny("genai"));
  auto gen = prompted(*engine, 6);
  ASSERT_NE(gen, nullptr);
  ASSERT_TRUE(gen->append_tokens({{9, 10}}).ok());
  while (!gen->is_done()) ASSERT_TRUE(gen->generate_next_token().ok());
  std::vector<int64_t> whole = gen->sequence(0);
  std::vector<int64_t> prefix(whole.begin(), whole.begin() + int64_t(kPrompt.size()) + 3);
  auto engine2 = open(write_tiny("genai"));
  GeneratorParams p;
  p.max_new_tokens = int64_t(whole.size() - prefix.size());
  auto again = generate(*engine2, {prefix}, p);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->sequences[0], whole);
}

void expect_error(Engine& engine, const GeneratorParams& p,
                  const std::vector<std::vector<int64_t>>& rows, const std::string& words) {
  auto r = generate(engine, rows, p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().message();
}

TEST(Generator, BadParametersAndPromptsAreClearErrors) {
  auto engine = open(write_tiny("genai"));
  GeneratorParams ok;
  ok.max_new_tokens = 4;
  expect_error(*engine, ok, {}, "no rows");
  expect_error(*engine, ok, {{}}, "row 0 of the tokens is empty");
  expect_error(*engine, ok, {{1, 512}}, "token id 512 in row 0 is outside [0, 512)");
  expect_error(*engine, ok, {{1, -3}}, "token id -3");
  GeneratorParams p = ok;
  p.max_new_tokens = 0;
  expect_error(*engine, p, {kPrompt}, "set max_length or max_new_tokens");
  p.max_length = 4;
  expect_error(*engine, p, {kPrompt}, "max_length 4 leaves no room after the longest prompt (8");
  p = ok;
  p.do_sample = true;
  p.temperature = 0;
  expect_error(*engine, p, {kPrompt}, "temperature");
  p = ok;
  p.top_p = 0;
  expect_error(*engine, p, {kPrompt}, "top_p");
  p = ok;
  p.max_length = int64_t(1) << 40;
  expect_error(*engine, p, {kPrompt}, "KV cache");
  p = ok;
  p.pad_token_id = 9999;
  expect_error(*engine, p, {kPrompt}, "pad_token_id 9999");
}

TEST(Generator, ModelsThatAreNoDecoderAreRefusedByName) {
  const fs::path dir = fs::temp_directory_path() / "op_generator_test_mlp";
  fs::create_directories(dir);
  runtime::GenerateOptions g;
  g.kind = "mlp";
  g.width = 32;
  auto proto = runtime::generate_model(g);
  const std::string path = (dir / "mlp.onnx").string();
  std::string bytes;
  ASSERT_TRUE(proto.SerializeToString(&bytes));
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  auto engine = open(path);
  GeneratorParams p;
  p.max_new_tokens = 2;
  auto gen = Generator::create(*engine, p);
  ASSERT_FALSE(gen.ok());
  EXPECT_NE(gen.status().message().find("is none the generator feeds"), std::string::npos)
      << gen.status().message();
}

}  // namespace
}  // namespace onnx_prepack
