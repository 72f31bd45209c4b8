// MatMulInteger on the packed int8 GEMM (constant 2-D B) against the runtime's
// loops (the same model with B a graph input) and ONNX Runtime, bitwise, over
// tests/runtime/quant/make_matmul_integer.py's cases: uint8/int8 A x uint8/int8
// B, with and without zero points, per-column B and per-row A zero points,
// 1-D, 3-D and 4-D A, odd sizes and extreme operands. Also under the thread pool.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool python_available() {
  std::string out;
  return testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

bool ort_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

bool same_bits(const HostTensor& a, const HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.as<int32_t>(), b.as<int32_t>(), size_t(a.numel()) * 4) == 0;
}

// Runs `model` on the feeds; nullopt (with a test failure) on any error.
std::optional<HostTensor> run_model(const std::string& model,
                                    const std::map<std::string, HostTensor*>& feeds,
                                    base::ThreadPool* pool) {
  auto loaded = format::Model::load(model);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return std::nullopt;
  std::shared_ptr<const format::Model> m(std::move(*loaded));
  SessionOptions opts;
  opts.pool = pool;
  auto s = Session::create(m, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return std::nullopt;
  std::map<std::string, Session::Feed> shapes;
  std::map<std::string, Tensor> views;
  for (const auto& [name, t] : feeds) {
    shapes[name] = {t->dtype(), t->shape()};
    views[name] = t->view();
  }
  auto planned = (*s)->plan(shapes);
  EXPECT_TRUE(planned.ok()) << model << ": " << planned.status().message();
  if (!planned.ok()) return std::nullopt;
  auto got = (*s)->run(views);
  EXPECT_TRUE(got.ok()) << model << ": " << got.status().message();
  if (!got.ok()) return std::nullopt;
  return std::move((*got)[0]);
}

TEST(MatMulInteger, PackedKernelEqualsLoopsAndOrtBitwise) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  const bool ort = ort_available();
  base::ThreadPool single(1), three(3);
  testing::TempDir dir;
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/quant/make_matmul_integer.py " + dir.path(),
                                 &log),
            0)
      << log;
  std::ifstream cases(dir.file("cases.txt"));
  std::string line;
  int count = 0;
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    std::string name;
    int ort_runs = 0;
    fields >> name >> ort_runs;
    const std::string d = dir.path() + "/" + name + "/";
    auto a = read_npy(d + "a.npy");
    auto b = read_npy(d + "b.npy");
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    auto loops = run_model(d + "input.onnx", {{"a", &*a}, {"b", &*b}}, &single);
    ASSERT_TRUE(loops.has_value()) << name;
    for (base::ThreadPool* pool : {&single, &three}) {
      auto packed = run_model(d + "const.onnx", {{"a", &*a}}, pool);
      ASSERT_TRUE(packed.has_value()) << name;
      EXPECT_TRUE(same_bits(*packed, *loops)) << name << " threads " << pool->size();
    }
    if (ort && ort_runs) {
      ASSERT_EQ(
          testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                                   d + "const.onnx " + d + "ort a=" + d + "a.npy",
                               &log),
          0)
          << name << ": " << log;
      auto want = read_npy(d + "ort/y.npy");
      ASSERT_TRUE(want.ok()) << name;
      EXPECT_TRUE(same_bits(*loops, *want)) << name << " vs ONNX Runtime";
    }
    ++count;
  }
  EXPECT_EQ(count, 16);
}

}  // namespace
}  // namespace onnx_prepack::runtime
