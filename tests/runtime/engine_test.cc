// The engine (include/onnx_prepack/engine.hpp): plans that need a fed value are
// a typed outcome, pinned and planned again per value; runs from several
// threads give the single-thread bytes; planning stays linear on a 200,000-node
// chain (a quadratic step there takes minutes, not the second it takes now).
#include "onnx_prepack/engine.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "format/model.h"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

std::shared_ptr<const format::Model> model_of(onnx::ModelProto proto) {
  return std::shared_ptr<const format::Model>(format::Model::from_proto(std::move(proto), "."));
}

void add_input(onnx::GraphProto* g, const std::string& name, int32_t dtype, int rank) {
  auto* in = g->add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  for (int i = 0; i < rank; ++i)
    tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(i));
}

// y = Reshape(x, shape) with `shape` a graph input: planning needs its value.
onnx::ModelProto reshape_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", kFloat, 1);
  add_input(g, "shape", kInt64, 1);
  auto* n = g->add_node();
  n->set_op_type("Reshape");
  n->set_name("reshape");
  n->add_input("x");
  n->add_input("shape");
  n->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

TEST(Engine, PlanNeedingAFedValueIsATypedOutcome) {
  auto model = model_of(reshape_model());
  auto s = Session::create(model, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto planned = (*s)->plan({{"x", {kFloat, {6}}}, {"shape", {kInt64, {2}}}});
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  EXPECT_EQ(*planned, PlanOutcome::kNeedsInputValues);
  // With the value pinned the same plan succeeds.
  std::vector<int64_t> shape = {2, 3};
  Tensor shape_t{kInt64, {2}, shape.data()};
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  Tensor x_t{kFloat, {6}, x.data()};
  planned = (*s)->plan({{"x", {kFloat, {6}, &x_t}}, {"shape", {kInt64, {2}, &shape_t}}});
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  EXPECT_EQ(*planned, PlanOutcome::kPlanned);
}

TEST(Engine, RunPinsFedValuesAndPlansAgainForOtherValues) {
  auto engine = Engine::open_model(model_of(reshape_model()));
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3}, {3, 2}, {6, 1}}) {
    auto out = (*engine)->run(
        {{"x", Tensor{kFloat, {6}, x.data()}}, {"shape", Tensor{kInt64, {2}, shape.data()}}});
    ASSERT_TRUE(out.ok()) << out.status().message();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape(), shape);
    EXPECT_EQ(std::memcmp((*out)[0].data(), x.data(), x.size() * 4), 0);
  }
}

TEST(Engine, BadFeedsNameTheInputAndWhatWasExpected) {
  auto engine = Engine::open_model(model_of(testing::make_mlp(4, 8, 2, 1)));
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  std::vector<float> x(8);
  std::vector<int64_t> xi(8);
  auto unknown = (*engine)->run({{"nope", Tensor{kFloat, {2, 4}, x.data()}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'nope'"), std::string::npos);
  auto dtype = (*engine)->run({{"x", Tensor{kInt64, {2, 4}, xi.data()}}});
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.status().message().find("input 'x'"), std::string::npos);
  EXPECT_NE(dtype.status().message().find("float"), std::string::npos) << dtype.status().message();
  auto dim = (*engine)->run({{"x", Tensor{kFloat, {1, 8}, x.data()}}});
  ASSERT_FALSE(dim.ok());
  EXPECT_NE(dim.status().message().find("input 'x'"), std::string::npos);
  // A good feed after the bad ones runs.
  EXPECT_TRUE((*engine)->run({{"x", Tensor{kFloat, {2, 4}, x.data()}}}).ok());
}

TEST(Engine, RunsFromSeveralThreadsGiveTheSameBytes) {
  auto engine = Engine::open_model(model_of(testing::make_mlp(16, 64, 8, 3)));
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  const std::vector<float> x = testing::pseudo_random_floats(4 * 16, 9);
  auto run = [&]() {
    return (*engine)->run({{"x", Tensor{kFloat, {4, 16}, const_cast<float*>(x.data())}}});
  };
  auto want = run();
  ASSERT_TRUE(want.ok()) << want.status().message();
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto got = run();
        if (!got.ok() || std::memcmp((*got)[0].data(), (*want)[0].data(), (*want)[0].nbytes()))
          ++mismatches[size_t(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(Engine, PlansA200000NodeChainInLinearTime) {
  constexpr int kNodes = 200000;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  x->set_name("v0");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(8);
  *g->add_initializer() = testing::float_tensor("one", {1}, {1.0f});
  for (int i = 0; i < kNodes; ++i) {
    auto* n = g->add_node();
    n->set_op_type("Add");
    n->add_input("v" + std::to_string(i));
    n->add_input("one");
    n->add_output("v" + std::to_string(i + 1));
  }
  g->add_output()->set_name("v" + std::to_string(kNodes));
  EngineOptions o;
  o.threads = 1;
  const auto t0 = std::chrono::steady_clock::now();
  auto engine = Engine::open_model(model_of(std::move(m)), o);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  std::vector<float> in = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_TRUE((*engine)->plan({{"v0", Tensor{kFloat, {8}, in.data()}}}).ok());
  const auto t1 = std::chrono::steady_clock::now();
  auto out = (*engine)->run({{"v0", Tensor{kFloat, {8}, in.data()}}});
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (int i = 0; i < 8; ++i) EXPECT_EQ((*out)[0].as<float>()[i], float(i + kNodes));
  const PlanStats ps = (*engine)->plan_stats();
  EXPECT_EQ(ps.fused, size_t(kNodes));  // elementwise chains of 16 per fused kernel
  EXPECT_EQ(ps.kernels, size_t(kNodes) / 16);
  EXPECT_LE(ps.arena_bytes, 3u * 64u);  // two live values at a time (plus the input)
  // Figures for the report (never asserted: performance lives in bench/).
  std::printf("[chain] %d nodes: open+plan %.1f ms, run %.1f ms\n", kNodes,
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count());
}

}  // namespace
}  // namespace onnx_prepack::runtime
