// com.microsoft::MatMulNBits agrees with ONNX Runtime (onnxruntime-node via
// tests/runtime/ort_run.js) on models written by
// tests/runtime/quant/make_matmul_nbits.py (python3-onnx): 4 and 8 bits, odd K,
// zero points packed / float / absent, bias, M = 1 and M > 1, accuracy levels
// 0 and 4, on every kernel ISA the host has (ref, AVX2, AVX-512, VNNI).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "device/cpu_features.h"
#include "format/model_writer.h"
#include "runtime/generate.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool tools_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0 &&
         testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

struct Case {
  const char* args;
  double tolerance;  // of max |ORT output|
};

HostTensor run_ours(const std::string& model_path, const HostTensor& in) {
  auto loaded = format::Model::load(model_path);
  EXPECT_TRUE(loaded.ok());
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  auto s = Session::create(model, SessionOptions{});
  EXPECT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE((*s)->plan({{"a", {in.dtype(), in.shape()}}}).ok());
  auto got = (*s)->run({{"a", in.view()}});
  EXPECT_TRUE(got.ok()) << got.status().message();
  return std::move((*got)[0]);
}

void check(const Case& c) {
  testing::TempDir dir;
  std::string log;
  const std::string gen = "/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                          "/tests/runtime/quant/make_matmul_nbits.py " + dir.path() + " " + c.args;
  ASSERT_EQ(testing::run_command(gen, &log), 0) << log;
  const std::string model = dir.file("model.onnx");
  const std::string cmd = "node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                          model + " " + dir.file("ort") + " a=" + dir.file("a.npy");
  ASSERT_EQ(testing::run_command(cmd, &log), 0) << log;
  auto want = read_npy(dir.file("ort/y.npy"));
  auto in = read_npy(dir.file("a.npy"));
  ASSERT_TRUE(want.ok() && in.ok());
  double mx = 0;
  for (int64_t i = 0; i < want->numel(); ++i) {
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
  }
  ASSERT_GT(mx, 0.0);
  for (auto isa : {device::IsaLevel::kRef, device::IsaLevel::kAvx2, device::IsaLevel::kAvx512}) {
    if (isa > device::isa_level_of(device::detect_cpu_features())) continue;
    device::set_max_isa(isa);
    HostTensor got = run_ours(model, *in);
    device::set_max_isa(std::nullopt);
    ASSERT_EQ(got.shape(), want->shape());
    double worst = 0;
    for (int64_t i = 0; i < want->numel(); ++i) {
      worst = std::max(worst, std::fabs(double(got.as<float>()[i]) - want->as<float>()[i]));
    }
    EXPECT_LE(worst, c.tolerance * mx) << c.args << " isa " << device::isa_level_name(isa)
                                       << ": max |diff| " << worst << ", max |ort| " << mx;
  }
}

TEST(MatMulNBits, AgreesWithOrt) {
  if (!tools_available()) GTEST_SKIP() << "node, onnxruntime-node or python3-onnx missing";
  const Case cases[] = {
      {"--K 100 --N 37 --M 3 --bias", 1e-4},
      {"--K 100 --N 37 --M 1 --zp float", 1e-4},
      {"--K 64 --N 16 --M 1 --zp none", 1e-4},
      {"--K 300 --N 50 --M 5 --bits 8 --block 16", 1e-4},
      {"--K 301 --N 50 --M 17 --bits 8 --block 64 --zp none --bias", 1e-4},
      {"--K 1000 --N 33 --M 2 --block 256", 1e-4},
      {"--K 130 --N 21 --M 1 --block 128 --zp float --level 4", 1e-4},  // ORT: float
      // Level 4: A quantized per block exactly as ONNX Runtime does.
      {"--K 200 --N 40 --M 7 --level 4", 1e-4},
      {"--K 517 --N 70 --M 1 --level 4 --block 128 --bias", 1e-4},
      {"--K 200 --N 40 --M 18 --level 4 --bits 8 --zp none", 1e-4},
  };
  for (const Case& c : cases) check(c);
}

// `generate llm` models run in ONNX Runtime and agree with ours (levels 0 and 4,
// 4 and 8 bits, with and without zero points).
TEST(MatMulNBits, GeneratedLlmAgreesWithOrt) {
  if (!tools_available()) GTEST_SKIP() << "node, onnxruntime-node or python3-onnx missing";
  struct Variant {
    int bits, block, level;
    bool zp;
  };
  for (const Variant v : {Variant{4, 32, 0, true}, Variant{4, 64, 4, false},
                          Variant{8, 32, 4, true}, Variant{8, 128, 0, false}}) {
    testing::TempDir dir;
    GenerateOptions o;
    o.kind = "llm";
    o.layers = 3;
    o.width = 200;
    o.bits = v.bits;
    o.block_size = v.block;
    o.accuracy_level = v.level;
    o.zero_points = v.zp;
    ASSERT_TRUE(format::write_model_inline(generate_model(o), dir.file("model.onnx")).ok());
    HostTensor in = HostTensor::allocate(kFloat, {3, 200});
    auto v_in = testing::pseudo_random_floats(600, 5);
    std::memcpy(in.mutable_data(), v_in.data(), 600 * 4);
    ASSERT_TRUE(write_npy(dir.file("x.npy"), in.view()).ok());
    std::string log;
    ASSERT_EQ(testing::run_command("node " + std::string(OP_SOURCE_DIR) +
                                       "/tests/runtime/ort_run.js " + dir.file("model.onnx") + " " +
                                       dir.file("ort") + " x=" + dir.file("x.npy"),
                                   &log),
              0)
        << log;
    auto want = read_npy(dir.file("ort/y.npy"));
    ASSERT_TRUE(want.ok());
    auto loaded = format::Model::load(dir.file("model.onnx"));
    ASSERT_TRUE(loaded.ok());
    std::shared_ptr<const format::Model> model(std::move(*loaded));
    auto s = Session::create(model, SessionOptions{});
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->plan({{"x", {kFloat, {3, 200}}}}).ok());
    auto got = (*s)->run({{"x", in.view()}});
    ASSERT_TRUE(got.ok()) << got.status().message();
    double mx = 0, worst = 0;
    for (int64_t i = 0; i < want->numel(); ++i) {
      mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
      worst = std::max(worst, std::fabs(double((*got)[0].as<float>()[i]) - want->as<float>()[i]));
    }
    ASSERT_GT(mx, 0.1);
    EXPECT_LE(worst, 1e-4 * mx) << "bits " << v.bits << " level " << v.level;
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
