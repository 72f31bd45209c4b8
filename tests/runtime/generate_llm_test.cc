// generate decoder|encoder: presets, option checks, sizes and the streamed external data
// (ONNX Runtime runs the models in tests/runtime/generate_llm_test.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/generate.h"

namespace onnx_prepack::runtime {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(GenerateDecoder, SevenBPresetShapesAndBytes) {
  auto o = decoder_preset("7b");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->layers, 32);
  EXPECT_EQ(o->hidden, 4096);
  EXPECT_EQ(o->intermediate, 11008);
  EXPECT_EQ(o->heads, 32);
  EXPECT_EQ(o->kv_heads, 8);
  EXPECT_EQ(o->vocab, 32000);
  EXPECT_EQ(o->block_size, 32);
  EXPECT_EQ(o->accuracy_level, 4);
  ASSERT_TRUE(validate_decoder(*o).ok());
  // int4: codes K N / 2, scales 4 N K / 32, zero points N ceil(K / 64) per MatMulNBits.
  auto nb = [](uint64_t k, uint64_t n) { return n * k / 2 + 4 * n * (k / 32) + n * (k / 64); };
  const uint64_t layer =
      8 * 4096 + nb(4096, 6144) + nb(4096, 4096) + 2 * nb(4096, 11008) + nb(11008, 4096);
  const uint64_t want =
      32000ull * 4096 * 4 + 32 * layer + 4 * 4096 + nb(4096, 32000) + 2 * 4 * 4096 * 64;
  EXPECT_EQ(*decoder_weight_bytes(*o), want);
  EXPECT_EQ(want, 4244209664ull);
  o->form = "optimum";
  EXPECT_GT(*decoder_weight_bytes(*o), 5 * want);  // fp32 weights, 23.7 GB
}

TEST(GenerateDecoder, BadOptionsSayWhy) {
  auto bad = [](auto edit, const std::string& words) {
    DecoderOptions o;
    edit(o);
    Status s = validate_decoder(o);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(words), std::string::npos) << s.message();
  };
  bad([](DecoderOptions& o) { o.heads = 3; }, "not a multiple of --heads");
  bad([](DecoderOptions& o) { o.kv_heads = 3; }, "not a multiple of --kv-heads");
  bad([](DecoderOptions& o) { o.block_size = 48; }, "power of 2");
  bad([](DecoderOptions& o) { o.intermediate = 100; }, "multiples of --block-size");
  bad([](DecoderOptions& o) { o.local_window = 0; }, "--local-window");
  bad([](DecoderOptions& o) { o.accuracy_level = 2; }, "0 or 4");
  bad([](DecoderOptions& o) { o.form = "hf"; }, "genai or optimum");
  bad([](DecoderOptions& o) { o.hidden = int64_t(1) << 30; }, "not in [1, 2^24]");
  bad([](DecoderOptions& o) { o.hidden = 96, o.heads = 32; }, "even");
  EXPECT_FALSE(decoder_preset("13b").ok());
  EncoderOptions e;
  e.heads = 7;
  EXPECT_FALSE(validate_encoder(e).ok());
  EXPECT_FALSE(encoder_preset("bert-huge").ok());
}

TEST(GenerateDecoder, WritesWhatItCountsInlineOrStreamedAndDeterministically) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("generate_llm_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  DecoderOptions o;
  for (const char* form : {"genai", "optimum"}) {
    o.form = form;
    auto a = write_decoder(o, dir + "/a.onnx", false);
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->weight_bytes, *decoder_weight_bytes(o));
    EXPECT_TRUE(a->data_file.empty());
    auto b = write_decoder(o, dir + "/b.onnx", true);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_EQ(b->data_file, "b.onnx.data");
    EXPECT_GE(std::filesystem::file_size(dir + "/b.onnx.data"), b->weight_bytes * 9 / 10);
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(slurp(dir + "/b.onnx")));
    int external = 0;
    for (const auto& t : m.graph().initializer()) {
      if (t.data_location() == onnx::TensorProto::EXTERNAL) {
        ++external;
        EXPECT_EQ(t.external_data(0).value(), "b.onnx.data");
      }
    }
    EXPECT_GT(external, 5);
    auto c = write_decoder(o, dir + "/c.onnx", false);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(slurp(dir + "/a.onnx"), slurp(dir + "/c.onnx"));  // same options, same bytes
  }
  EncoderOptions e = *encoder_preset("tiny");
  for (bool int8 : {false, true}) {
    e.int8 = int8;
    auto w = write_encoder(e, dir + "/e.onnx", false);
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(w->weight_bytes, *encoder_weight_bytes(e));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace onnx_prepack::runtime
