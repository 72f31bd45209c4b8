// MatMul on a prepared B -> Add(bias) runs as one step (session_fusion.cc,
// Kernel::with_column_bias): the GEMM adds the bias as it stores each tile. With
// packed weights the pair fuses (PlanStats::fused, a FusedMatMulBias step); with
// `--weights plain` B is packed per run and the Add runs apart, through the same
// GEMM driver and kernels, so the two runs must agree bit for bit: bias [N], [1, 1, N]
// or one value, either operand order, a bias fed at run time, 1 and 3 threads. Near
// misses stay apart (a bias broadcast along rows, the product read elsewhere) and agree
// bitwise too.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "onnx_prepack/engine.hpp"
#include "runtime/session.h"
#include "testing/graph_builder.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

struct Form {
  const char* name;
  Shape bias;                   // the bias operand's shape ({} : one value)
  bool bias_first = false;      // Add(bias, y)
  bool bias_input = false;      // a graph input instead of an initializer
  bool product_output = false;  // the MatMul's value is also a graph output
  bool fuses = true;
};

constexpr int64_t kK = 33, kN = 47;
const Shape kX = {2, 5, kK};

onnx::ModelProto model(const Form& f) {
  testing::GraphBuilder b("matmul_bias", 17);
  b.input("x", kX);
  std::string bias;
  if (f.bias_input) {
    b.input("b", f.bias);
    bias = "b";
  } else {
    bias = b.init(f.bias, 5);
  }
  const std::string y = b.node("MatMul", {"x", b.init({kK, kN}, 3)}, "prod");
  b.node("Add",
         f.bias_first ? std::vector<std::string>{bias, y} : std::vector<std::string>{y, bias}, "y");
  b.output("y");
  if (f.product_output) b.output("prod");
  return b.m;
}

struct Ran {
  std::vector<HostTensor> out;
  size_t fused = 0;
};

Ran run(const std::string& path, const Form& f, WeightMode weights, int threads) {
  EngineOptions o;
  o.weights = weights;
  o.threads = threads;
  auto e = Engine::open(path, o);
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!e.ok()) return {};
  auto xs = testing::pseudo_random_floats(size_t(shape_numel(kX)), 11);
  auto bs = testing::pseudo_random_floats(size_t(shape_numel(f.bias)), 13);
  std::map<std::string, Tensor> in = {{"x", Tensor{kFloat, kX, xs.data()}}};
  if (f.bias_input) in["b"] = Tensor{kFloat, f.bias, bs.data()};
  auto out = (*e)->run(in);
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok()) return {};
  return {std::move(*out), (*e)->plan_stats().fused};
}

TEST(MatMulBiasFusion, FusedIsTheAddRunApartBitwise) {
  const Form forms[] = {
      {"bias [N]", {kN}},
      {"bias [1, 1, N]", {1, 1, kN}},
      {"one value", {}},
      {"Add(bias, y)", {kN}, true},
      {"bias fed at run time", {kN}, false, true},
      {"bias broadcast along rows", {5, 1}, false, false, false, false},
      {"product also an output", {kN}, false, false, true, false},
  };
  testing::TempDir dir;
  for (const Form& f : forms) {
    const std::string path = (std::filesystem::path(dir.path()) / "m.onnx").string();
    testing::write_bytes(path, model(f).SerializeAsString());
    for (int threads : {1, 3}) {
      const Ran packed = run(path, f, WeightMode::kPacked, threads);
      const Ran plain = run(path, f, WeightMode::kPlain, threads);
      ASSERT_EQ(packed.out.size(), plain.out.size()) << f.name;
      ASSERT_FALSE(packed.out.empty()) << f.name;
      EXPECT_EQ(packed.fused, f.fuses ? 2u : 0u) << f.name << ", " << threads << " threads";
      EXPECT_EQ(plain.fused, 0u) << f.name;
      for (size_t i = 0; i < packed.out.size(); ++i) {
        ASSERT_EQ(packed.out[i].shape(), plain.out[i].shape()) << f.name;
        EXPECT_EQ(0, std::memcmp(packed.out[i].data(), plain.out[i].data(), packed.out[i].nbytes()))
            << f.name << ", output " << i << ", " << threads << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
