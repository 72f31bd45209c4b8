// op_generator_* (the C API's token generation): the same tokens as the C++
// Generator on the same model, in both decoder forms, greedy batch 2 with
// ragged prompts and seeded sampling; the engine's errors (bad ids, missing
// length) and the adapter's own (NULL arguments, short buffers) as status
// codes with messages naming them.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_prepack/c_api.h"
#include "onnx_prepack/generator.hpp"
#include "onnx_prepack/onnx_prepack.hpp"
#include "runtime/generate.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using Rows = std::vector<std::vector<int64_t>>;

const Rows kBatch = {{5, 17, 300, 42, 7, 99, 128, 3}, {11, 23, 250, 4, 61}};

std::string write_tiny(const testing::TempDir& dir, const std::string& form) {
  const std::string path = dir.file(form + ".onnx");
  auto opts = runtime::decoder_preset("tiny");
  EXPECT_TRUE(opts.ok());
  opts->form = form;
  auto written = runtime::write_decoder(*opts, path, false);
  EXPECT_TRUE(written.ok()) << written.status().message();
  return path;
}

// The C++ Generator's sequences: the reference the C API must reproduce.
Rows cpp_sequences(const std::string& path, const GeneratorParams& params, const Rows& prompts) {
  EngineOptions o;
  o.threads = 1;
  auto engine = Engine::open(path, o);
  EXPECT_TRUE(engine.ok()) << engine.status().message();
  auto r = generate(**engine, prompts, params);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->sequences : Rows{};
}

api::Session open_session(const std::string& path) {
  op_session_options o = op_session_options_default();
  o.n_threads = 1;
  api::Session s;
  EXPECT_EQ(api::Session::create(path.c_str(), &o, &s), OP_STATUS_OK) << api::last_error();
  return s;
}

struct GeneratorDeleter {
  void operator()(op_generator* g) const { op_generator_free(g); }
};
using GeneratorPtr = std::unique_ptr<op_generator, GeneratorDeleter>;

GeneratorPtr create(op_session* s, const op_generator_params& p) {
  op_generator* g = nullptr;
  EXPECT_EQ(op_generator_create(s, &p, &g), OP_STATUS_OK) << op_last_error_message();
  return GeneratorPtr(g);
}

op_status_code append(op_generator* g, const Rows& rows) {
  std::vector<int64_t> ids;
  std::vector<uint64_t> lengths;
  for (const auto& r : rows) {
    ids.insert(ids.end(), r.begin(), r.end());
    lengths.push_back(r.size());
  }
  return op_generator_append_tokens(g, ids.data(), lengths.data(), lengths.size());
}

// The C API's loop: append, step until done, read each sequence.
Rows c_sequences(op_session* s, const op_generator_params& p, const Rows& prompts) {
  GeneratorPtr g = create(s, p);
  if (!g) return {};
  EXPECT_EQ(append(g.get(), prompts), OP_STATUS_OK) << op_last_error_message();
  int done = 0;
  for (int steps = 0; steps < 1000; ++steps) {
    EXPECT_EQ(op_generator_is_done(g.get(), &done), OP_STATUS_OK);
    if (done) break;
    EXPECT_EQ(op_generator_generate_next_token(g.get()), OP_STATUS_OK) << op_last_error_message();
  }
  EXPECT_EQ(done, 1);
  Rows out;
  for (uint64_t b = 0; b < prompts.size(); ++b) {
    uint64_t n = 0;
    EXPECT_EQ(op_generator_get_sequence(g.get(), b, nullptr, 0, &n),
              prompts[b].empty() ? OP_STATUS_OK : OP_STATUS_OUT_OF_RANGE);
    std::vector<int64_t> seq(n);
    uint64_t m = 0;
    EXPECT_EQ(op_generator_get_sequence(g.get(), b, seq.data(), seq.size(), &m), OP_STATUS_OK);
    EXPECT_EQ(m, n);
    out.push_back(seq);
  }
  op_generation_stats st{};
  EXPECT_EQ(op_generator_get_stats(g.get(), &st), OP_STATUS_OK);
  uint64_t prompt_tokens = 0;
  for (const auto& r : prompts) prompt_tokens += r.size();
  EXPECT_EQ(st.prompt_tokens, prompt_tokens);
  uint64_t generated = 0;
  for (size_t b = 0; b < out.size(); ++b) generated += out[b].size() - prompts[b].size();
  EXPECT_EQ(st.new_tokens, generated);
  return out;
}

class CApiGenerator : public ::testing::TestWithParam<std::string> {};

TEST_P(CApiGenerator, GreedyBatchMatchesTheCppGenerator) {
  testing::TempDir dir;
  const std::string path = write_tiny(dir, GetParam());
  GeneratorParams gp;
  gp.max_new_tokens = 6;
  const Rows want = cpp_sequences(path, gp, kBatch);
  ASSERT_EQ(want.size(), 2u);
  api::Session s = open_session(path);
  op_generator_params p = op_generator_params_default();
  p.max_new_tokens = 6;
  EXPECT_EQ(c_sequences(s.get(), p, kBatch), want);
  EXPECT_EQ(want[0].size(), kBatch[0].size() + 6);
  EXPECT_EQ(want[1].size(), kBatch[1].size() + 6);
}

TEST_P(CApiGenerator, SeededSamplingAndStopIdsMatchTheCppGenerator) {
  testing::TempDir dir;
  const std::string path = write_tiny(dir, GetParam());
  GeneratorParams gp;
  gp.max_length = 20;
  gp.do_sample = true;
  gp.top_k = 50;
  gp.top_p = 0.9f;
  gp.temperature = 0.8f;
  gp.seed = 1234;
  const Rows want = cpp_sequences(path, gp, {kBatch[0]});
  ASSERT_EQ(want.size(), 1u);
  api::Session s = open_session(path);
  op_generator_params p = op_generator_params_default();
  p.max_length = 20;
  p.do_sample = 1;
  p.top_k = 50;
  p.top_p = 0.9f;
  p.temperature = 0.8f;
  p.seed = 1234;
  EXPECT_EQ(c_sequences(s.get(), p, {kBatch[0]}), want);

  // A stop id: the first generated token of the greedy run stops it at once.
  GeneratorParams greedy;
  greedy.max_new_tokens = 6;
  const Rows g = cpp_sequences(path, greedy, {kBatch[0]});
  ASSERT_EQ(g.size(), 1u);
  const int64_t first = g[0][kBatch[0].size()];
  op_generator_params stop = op_generator_params_default();
  stop.max_new_tokens = 6;
  stop.stop_ids = &first;
  stop.n_stop_ids = 1;
  const Rows stopped = c_sequences(s.get(), stop, {kBatch[0]});
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0].size(), kBatch[0].size() + 1);
  EXPECT_EQ(stopped[0].back(), first);
}

INSTANTIATE_TEST_SUITE_P(Forms, CApiGenerator, ::testing::Values("genai", "optimum"));

TEST(CApiGeneratorErrors, NullArgumentsAndShortBuffers) {
  testing::TempDir dir;
  const std::string path = write_tiny(dir, "genai");
  api::Session s = open_session(path);
  op_generator_params p = op_generator_params_default();
  p.max_new_tokens = 3;
  op_generator* raw = reinterpret_cast<op_generator*>(0x1);
  EXPECT_EQ(op_generator_create(nullptr, &p, &raw), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(raw, nullptr);
  EXPECT_NE(std::string(op_last_error_message()).find("session is null"), std::string::npos)
      << op_last_error_message();
  EXPECT_EQ(op_generator_create(s.get(), &p, nullptr), OP_STATUS_INVALID_ARGUMENT);
  p.n_stop_ids = 2;
  EXPECT_EQ(op_generator_create(s.get(), &p, &raw), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(op_last_error_message()).find("stop_ids is null"), std::string::npos);
  p.n_stop_ids = 0;
  p.do_sample = 2;
  EXPECT_EQ(op_generator_create(s.get(), &p, &raw), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(op_last_error_message()).find("do_sample must be 0 or 1"),
            std::string::npos);
  p.do_sample = 0;
  // NULL params: the defaults, which set no length (the engine's rule).
  EXPECT_EQ(op_generator_create(s.get(), nullptr, &raw), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(op_last_error_message()).find("max_length"), std::string::npos)
      << op_last_error_message();

  GeneratorPtr g = create(s.get(), p);
  ASSERT_TRUE(g);
  int done = 7;
  EXPECT_EQ(op_generator_is_done(g.get(), &done), OP_STATUS_OK);
  EXPECT_EQ(done, 0);
  EXPECT_EQ(op_generator_is_done(g.get(), nullptr), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_generator_is_done(nullptr, &done), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_generator_generate_next_token(g.get()), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(op_last_error_message()).find("append_tokens"), std::string::npos);
  EXPECT_EQ(op_generator_generate_next_token(nullptr), OP_STATUS_INVALID_ARGUMENT);

  const int64_t ids[3] = {1, 2, 3};
  const uint64_t len[1] = {3};
  EXPECT_EQ(op_generator_append_tokens(nullptr, ids, len, 1), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_generator_append_tokens(g.get(), ids, nullptr, 1), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_generator_append_tokens(g.get(), nullptr, len, 1), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_generator_append_tokens(g.get(), ids, len, 0), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(op_last_error_message()).find("rows is 0"), std::string::npos);
  const uint64_t empty[1] = {0};
  EXPECT_EQ(op_generator_append_tokens(g.get(), ids, empty, 1), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(op_last_error_message()).find("empty"), std::string::npos)
      << op_last_error_message();

  ASSERT_EQ(op_generator_append_tokens(g.get(), ids, len, 1), OP_STATUS_OK)
      << op_last_error_message();
  uint64_t count = 99;
  EXPECT_EQ(op_generator_get_next_tokens(g.get(), nullptr, 0, &count), OP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(op_generator_get_next_tokens(g.get(), nullptr, 1, &count), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_generator_get_next_tokens(g.get(), nullptr, 0, nullptr), OP_STATUS_INVALID_ARGUMENT);
  int64_t next = -1;
  EXPECT_EQ(op_generator_get_next_tokens(g.get(), &next, 1, &count), OP_STATUS_OK);
  EXPECT_GE(next, 0);
  EXPECT_LT(next, 512);
  int64_t seq[8] = {};
  EXPECT_EQ(op_generator_get_sequence(g.get(), 0, seq, 2, &count), OP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(count, 4u);  // the prompt and the prompt step's token
  EXPECT_NE(std::string(op_last_error_message()).find("buffer holds 2"), std::string::npos);
  EXPECT_EQ(op_generator_get_sequence(g.get(), 1, seq, 8, &count), OP_STATUS_OUT_OF_RANGE);
  EXPECT_NE(std::string(op_last_error_message()).find("index 1 is past the batch of 1"),
            std::string::npos);
  EXPECT_EQ(op_generator_get_sequence(g.get(), 0, seq, 8, &count), OP_STATUS_OK);
  EXPECT_EQ(count, 4u);
  EXPECT_EQ(seq[3], next);
  EXPECT_EQ(op_generator_get_stats(g.get(), nullptr), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_generator_get_stats(nullptr, nullptr), OP_STATUS_INVALID_ARGUMENT);
  op_generator_free(nullptr);  // ignored
}

TEST(CApiGeneratorErrors, TokenIdsOutsideTheVocabulary) {
  testing::TempDir dir;
  const std::string path = write_tiny(dir, "optimum");
  api::Session s = open_session(path);
  op_generator_params p = op_generator_params_default();
  p.max_new_tokens = 3;
  for (int64_t bad : {int64_t(512), int64_t(-1), INT64_MAX}) {
    GeneratorPtr g = create(s.get(), p);
    ASSERT_TRUE(g);
    EXPECT_EQ(append(g.get(), {{1, 2}, {3, bad}}), OP_STATUS_INVALID_ARGUMENT);
    const std::string msg = op_last_error_message();
    EXPECT_NE(msg.find("token id " + std::to_string(bad)), std::string::npos) << msg;
    int done = 1;
    EXPECT_EQ(op_generator_is_done(g.get(), &done), OP_STATUS_OK);
    EXPECT_EQ(done, 0);
  }
  // The generator still works after a rejected prompt.
  GeneratorPtr g = create(s.get(), p);
  ASSERT_EQ(append(g.get(), {{1, 2}}), OP_STATUS_OK) << op_last_error_message();
}

}  // namespace
}  // namespace onnx_prepack
