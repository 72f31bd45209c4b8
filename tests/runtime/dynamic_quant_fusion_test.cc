// The quantize_dynamic form (DynamicQuantizeLinear -> MatMulInteger(int8 W) ->
// Cast -> Mul(x_scale * W_scale) [-> Add(bias)] [-> Relu]) over
// tests/runtime/quant/make_dynamic_ffn.py's cases: with and without a W zero
// point, scalar and per-column W scales and zero points, 2-D and 3-D x, odd
// sizes, either operand order. The fused kernel (session_fusion.cc,
// IntegerMatMulEpilogue) is bitwise the chain run apart (fusion off, or the
// Cast's output a graph output, which must keep the chain apart), on one and
// three threads, and agrees with ONNX Runtime within 1e-5 relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

struct Ran {
  std::vector<HostTensor> outputs;
  size_t fused = 0;
  size_t kernels = 0;
};

std::optional<Ran> run_model(const std::string& model, HostTensor& x, base::ThreadPool* pool,
                             bool fuse) {
  auto loaded = format::Model::load(model);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return std::nullopt;
  std::shared_ptr<const format::Model> m(std::move(*loaded));
  SessionOptions opts;
  opts.pool = pool;
  opts.fuse_pointwise = fuse;
  auto s = Session::create(m, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return std::nullopt;
  auto planned = (*s)->plan({{"x", {x.dtype(), x.shape()}}});
  EXPECT_TRUE(planned.ok()) << model << ": " << planned.status().message();
  if (!planned.ok()) return std::nullopt;
  auto got = (*s)->run({{"x", x.view()}});
  EXPECT_TRUE(got.ok()) << model << ": " << got.status().message();
  if (!got.ok()) return std::nullopt;
  Ran r;
  r.outputs = std::move(*got);
  r.fused = (*s)->stats().fused;
  r.kernels = (*s)->stats().kernels;
  return r;
}

TEST(DynamicQuantFusion, FusedEqualsUnfusedBitwiseAndOrt) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  const bool ort = ort_available();
  base::ThreadPool single(1), three(3);
  testing::TempDir dir;
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/quant/make_dynamic_ffn.py " + dir.path(),
                                 &log),
            0)
      << log;
  std::ifstream cases(dir.file("cases.txt"));
  std::string line;
  int count = 0;
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    std::string name;
    size_t fused_nodes = 0;
    fields >> name >> fused_nodes;
    const std::string d = dir.path() + "/" + name + "/";
    auto x = read_npy(d + "x.npy");
    ASSERT_TRUE(x.ok()) << name;
    auto apart = run_model(d + "model.onnx", *x, &single, false);
    ASSERT_TRUE(apart.has_value()) << name;
    EXPECT_EQ(apart->fused, 0u) << name;
    const HostTensor& want = apart->outputs[0];
    for (base::ThreadPool* pool : {&single, &three}) {
      auto fused = run_model(d + "model.onnx", *x, pool, true);
      ASSERT_TRUE(fused.has_value()) << name;
      EXPECT_EQ(fused->fused, fused_nodes) << name;
      EXPECT_EQ(fused->kernels + fused_nodes - 1, apart->kernels) << name;
      EXPECT_TRUE(same_bits(fused->outputs[0], want)) << name << " threads " << pool->size();
      // The Cast's output read as a graph output: the integer chain is not fused (more
      // kernels than the fused plan; elementwise nodes after the Cast may still be), same y.
      auto tapped = run_model(d + "tapped.onnx", *x, pool, true);
      ASSERT_TRUE(tapped.has_value()) << name;
      EXPECT_GT(tapped->kernels, fused->kernels) << name;
      EXPECT_TRUE(same_bits(tapped->outputs[0], want)) << name << " tapped";
    }
    if (ort) {
      ASSERT_EQ(
          testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                                   d + "model.onnx " + d + "ort x=" + d + "x.npy",
                               &log),
          0)
          << name << ": " << log;
      auto ref = read_npy(d + "ort/y.npy");
      ASSERT_TRUE(ref.ok()) << name;
      ASSERT_EQ(ref->shape(), want.shape()) << name;
      const float* a = want.as<float>();
      const float* b = ref->as<float>();
      double mx = 0, diff = 0;
      for (int64_t i = 0; i < want.numel(); ++i) {
        mx = std::max(mx, double(std::fabs(b[i])));
        diff = std::max(diff, double(std::fabs(a[i] - b[i])));
      }
      EXPECT_LE(diff, 1e-5 * mx) << name << " vs ONNX Runtime";
    }
    ++count;
  }
  EXPECT_EQ(count, 8);
}

}  // namespace
}  // namespace onnx_prepack::runtime
