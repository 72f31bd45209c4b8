// The quantize_dynamic form of a Conv (DynamicQuantizeLinear -> ConvInteger ->
// Cast -> Mul(scale) [-> Add(bias)] [-> Relu]) over
// tests/runtime/quant/make_conv_integer_chain.py's cases: scalar and
// per-channel scales ([M, 1] and [1, M, 1, 1]) and biases, the Add's operands
// either way round, groups with per-channel zero points, 1-D. The fused step
// (session_fusion.cc: the int8 GEMM's float epilogue per output channel) is
// bitwise the chain run apart (fusion off, or the Cast's output a graph
// output, which must keep the chain apart), on one and three threads; a
// depthwise ConvInteger (the plane path) and a bias broadcast along the width
// keep (part of) the chain apart, with the same bits. The fused node counts
// are the generator's (an Add -> Relu left apart joins as a pointwise step).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

bool python_available() {
  std::string out;
  return testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
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

TEST(ConvIntegerFusion, FusedEqualsUnfusedBitwise) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  base::ThreadPool single(1), three(3);
  testing::TempDir dir;
  std::string log;
  ASSERT_EQ(
      testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                               "/tests/runtime/quant/make_conv_integer_chain.py " + dir.path(),
                           &log),
      0)
      << log;
  std::ifstream cases(dir.file("cases.txt"));
  std::string line;
  int count = 0;
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    std::string name;
    size_t fused_nodes = 0, tapped_nodes = 0;
    fields >> name >> fused_nodes >> tapped_nodes;
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
      if (fused_nodes > 0) {
        EXPECT_EQ(fused->kernels + fused_nodes - 1, apart->kernels) << name;
      }
      EXPECT_TRUE(same_bits(fused->outputs[0], want)) << name << " threads " << pool->size();
      auto tapped = run_model(d + "tapped.onnx", *x, pool, true);
      ASSERT_TRUE(tapped.has_value()) << name;
      EXPECT_EQ(tapped->fused, tapped_nodes) << name;
      if (tapped_nodes > 0) {
        EXPECT_EQ(tapped->kernels + tapped_nodes - 1, apart->kernels) << name;
      }
      EXPECT_TRUE(same_bits(tapped->outputs[0], want)) << name << " tapped";
    }
    ++count;
  }
  EXPECT_EQ(count, 7);
}

}  // namespace
}  // namespace onnx_prepack::runtime
