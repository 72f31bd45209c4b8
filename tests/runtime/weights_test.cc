// Weight preparation through the resolver: a cache hit and a miss give the
// same output bytes, and corrupted cache entries become misses without
// changing outputs (format.md §4.3, 4.4, 7.1).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "device/cpu_features.h"
#include "format/model_writer.h"
#include "onnx_prepack/engine.hpp"
#include "resolve/resolver.h"
#include "runtime/generate.h"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

struct RunResult {
  std::vector<HostTensor> outputs;
  std::vector<WeightDecision> decisions;
};

// Loads `path`, runs the transformer on fixed ids with the cache at `cache_dir`
// ("" = none), and returns outputs + decisions.
RunResult run_model(const std::string& path, const std::string& cache_dir,
                    const std::string& memo_dir, resolve::VerifyPolicy policy) {
  RunResult rr;
  EngineOptions o;
  o.verify = policy;
  o.cache.dir = cache_dir;
  o.memo_dir = memo_dir;
  auto engine = Engine::open(path, o);
  EXPECT_TRUE(engine.ok()) << engine.status().message();
  if (!engine.ok()) return rr;
  std::vector<int64_t> ids = {5, 9, 31, 2, 0, 0, 17, 4, 40, 41, 3, 1};
  auto out = (*engine)->run({{"input_ids", Tensor{kInt64, {1, 12}, ids.data()}}});
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (out.ok()) rr.outputs = std::move(*out);
  rr.decisions = (*engine)->weights();
  return rr;
}

// Packs are persisted only in formats a native kernel reads (AVX2 and up on
// x86-64, NEON on aarch64, where the transformer's MatMul weights are gemm_b):
// with the ISA capped at ref (ONNX_PREPACK_MAX_ISA=ref) every weight is a miss
// that is packed and not stored, and outputs must still be identical run to run.
bool formats_persistable() {
  const device::IsaLevel l = device::host_isa_level();
  return l >= device::IsaLevel::kAvx2 || l >= device::IsaLevel::kNeon;
}

bool same_bytes(const RunResult& a, const RunResult& b) {
  if (a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    if (a.outputs[i].nbytes() != b.outputs[i].nbytes() ||
        std::memcmp(a.outputs[i].data(), b.outputs[i].data(), a.outputs[i].nbytes()) != 0) {
      return false;
    }
  }
  return true;
}

class WeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GenerateOptions o;
    o.kind = "transformer";
    o.layers = 2;
    o.width = 64;
    o.heads = 4;
    o.seq = 12;
    o.vocab = 64;
    onnx::ModelProto m = generate_model(o);
    model_path_ = dir_.file("tf.onnx");
    format::WriteOptions wo;
    ASSERT_TRUE(format::write_model(m, model_path_, wo, nullptr).ok());
  }
  testing::TempDir dir_;
  std::string model_path_;
};

TEST_F(WeightsTest, HitAndMissGiveIdenticalBytes) {
  std::string cache = dir_.file("cache"), memo = dir_.file("memo");
  RunResult cold = run_model(model_path_, cache, memo, resolve::VerifyPolicy::kFull);
  ASSERT_EQ(cold.decisions.size(), 8u);  // 4 weights per layer
  const bool persist = formats_persistable();
  for (const auto& d : cold.decisions) {
    EXPECT_EQ(d.decision, "miss") << d.name;
    EXPECT_EQ(d.stored, persist) << d.name << ": " << d.store_error;
  }
  for (auto policy : {resolve::VerifyPolicy::kFull, resolve::VerifyPolicy::kMemo}) {
    RunResult warm = run_model(model_path_, cache, memo, policy);
    for (const auto& d : warm.decisions) {
      EXPECT_EQ(d.decision, persist ? "hit" : "miss") << d.name << " " << d.detail;
    }
    EXPECT_TRUE(same_bytes(cold, warm));
  }
  RunResult none = run_model(model_path_, "", memo, resolve::VerifyPolicy::kFull);
  EXPECT_TRUE(same_bytes(cold, none));
}

TEST_F(WeightsTest, CorruptedCacheEntriesAreMissesAndNeverChangeOutputs) {
  std::string cache = dir_.file("cache"), memo = dir_.file("memo");
  if (!formats_persistable()) GTEST_SKIP() << "no format is persisted at ISA level ref";
  RunResult cold = run_model(model_path_, cache, memo, resolve::VerifyPolicy::kFull);
  // Damage every entry: truncate payload files, garble entry models.
  int damaged = 0, n = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (!e.is_regular_file()) continue;
    std::string p = e.path().string();
    if (p.find("lock") != std::string::npos) continue;
    ++n;
    if (e.file_size() >= 4096) {
      fs::resize_file(e.path(), e.file_size() - 4);
      ++damaged;
    } else if (n % 2 == 0) {
      std::ofstream(p, std::ios::binary | std::ios::trunc) << "not a model";
      ++damaged;
    }
  }
  ASSERT_GT(damaged, 0);
  RunResult after = run_model(model_path_, cache, memo, resolve::VerifyPolicy::kFull);
  int misses = 0;
  for (const auto& d : after.decisions) misses += d.decision == "miss";
  EXPECT_GT(misses, 0);
  EXPECT_TRUE(same_bytes(cold, after));
}

TEST_F(WeightsTest, ChangedWeightsNeverHitOldEntries) {
  std::string cache = dir_.file("cache"), memo = dir_.file("memo");
  run_model(model_path_, cache, memo, resolve::VerifyPolicy::kMemo);
  // Rewrite one weight's bytes in the external data file (same size, same
  // path): the memo record is stale by identity, the cache key by digest.
  auto loaded = format::Model::load(model_path_);
  ASSERT_TRUE(loaded.ok());
  const auto* t = (*loaded)->find_initializer("layer0.ffn.w1");
  ASSERT_NE(t, nullptr);
  auto ref = format::parse_external_entries(t->external_data());
  ASSERT_TRUE(ref.ok());
  {
    std::fstream f(dir_.file(ref->location), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(ref->offset));
    float v = 123.0f;
    f.write(reinterpret_cast<const char*>(&v), 4);
  }
  RunResult changed = run_model(model_path_, cache, memo, resolve::VerifyPolicy::kMemo);
  for (const auto& d : changed.decisions) {
    if (d.name == "layer0.ffn.w1") {
      EXPECT_EQ(d.decision, "miss");
    }
  }
  RunResult fresh = run_model(model_path_, "", dir_.file("memo2"), resolve::VerifyPolicy::kFull);
  EXPECT_TRUE(same_bytes(changed, fresh));
}

}  // namespace
}  // namespace onnx_prepack::runtime

namespace onnx_prepack::runtime {
namespace {

// Gemm with transB, alpha, beta and a row bias: packed ([N, K] source layout)
// equals the direct computation.
TEST(PreparedGemm, TransposedBPackedMatchesDirect) {
  const int64_t m = 3, k = 37, n = 45;
  onnx::ModelProto p;
  p.set_ir_version(8);
  p.add_opset_import()->set_version(17);
  auto* g = p.mutable_graph();
  auto w = ::onnx_prepack::testing::pseudo_random_floats(size_t(n * k), 5);
  auto c = ::onnx_prepack::testing::pseudo_random_floats(size_t(n), 6);
  *g->add_initializer() = ::onnx_prepack::testing::float_tensor("W", {n, k}, w);
  *g->add_initializer() = ::onnx_prepack::testing::float_tensor("C", {n}, c);
  auto* node = g->add_node();
  node->set_op_type("Gemm");
  node->set_name("gemm");
  node->add_input("x");
  node->add_input("W");
  node->add_input("C");
  node->add_output("y");
  for (auto [name, v] : {std::pair<const char*, float>{"alpha", 0.5f}, {"beta", 2.0f}}) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  auto* tb = node->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  g->add_output()->set_name("y");
  std::shared_ptr<const format::Model> model(format::Model::from_proto(p, "."));
  auto x = ::onnx_prepack::testing::pseudo_random_floats(size_t(m * k), 7);
  for (bool packed : {true, false}) {
    EngineOptions o;
    o.weights = packed ? WeightMode::kPacked : WeightMode::kPlain;
    auto engine = Engine::open_model(model, o);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    auto out = (*engine)->run({{"x", Tensor{kFloat, {m, k}, x.data()}}});
    ASSERT_TRUE(out.ok()) << out.status().message();
    const auto decisions = (*engine)->weights();
    if (packed) {
      ASSERT_EQ(decisions.size(), 1u);
      EXPECT_EQ(decisions[0].decision, "miss");
    } else {
      EXPECT_TRUE(decisions.empty());
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += double(x[size_t(i * k + kk)]) * w[size_t(j * k + kk)];
        double want = 0.5 * acc + 2.0 * c[size_t(j)];
        EXPECT_NEAR((*out)[0].as<float>()[i * n + j], want, 1e-4) << i << "," << j;
      }
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
