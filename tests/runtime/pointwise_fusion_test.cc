// Fused elementwise chains (runtime/pointwise_fusion.h) are bitwise equal to
// running the nodes one by one, with 1 and 3 threads, on inputs with NaN,
// infinities, signed zeros and subnormals; values read after the chain or
// named as outputs are still written; operands the fused kernel cannot read
// end the chain instead of being read wrongly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/thread_pool.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

struct Graph {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  explicit Graph(int opset = 13) : g(m.mutable_graph()) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    g->set_name("chain");
  }
  void input(const std::string& name, const Shape& s) {
    testing::add_tensor_input(g, name, {s.begin(), s.end()});
  }
  void output(const std::string& name) { testing::add_tensor_output(g, name); }
  void init(const std::string& name, const Shape& s, uint32_t seed) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kFloat);
    for (int64_t d : s) t->add_dims(d);
    auto v = testing::pseudo_random_floats(size_t(shape_numel(s)), seed);
    t->set_raw_data(v.data(), v.size() * 4);
  }
  void scalar(const std::string& name, float v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kFloat);
    t->set_raw_data(&v, 4);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::string out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  }
};

std::vector<float> awkward_floats(size_t n, uint32_t seed) {
  auto v = testing::pseudo_random_floats(n, seed);
  for (auto& x : v) x *= 8.0f;  // reach both Clip bounds of a hard-swish
  const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           -0.0f,
                           0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           -3.0f,
                           3.0f};
  for (size_t i = 0; i < n; i += 37) v[i] = special[(i / 37) % 8];
  return v;
}

struct Outcome {
  std::vector<HostTensor> outputs;
  PlanStats stats;
};

Outcome run(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes, bool fuse,
            size_t threads) {
  base::ThreadPool pool(threads);
  SessionOptions opts;
  opts.pool = &pool;
  opts.fuse_pointwise = fuse;
  auto model = std::shared_ptr<const format::Model>(format::Model::from_proto(proto, "."));
  auto s = Session::create(model, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  std::map<std::string, Session::Feed> feeds;
  std::vector<std::vector<float>> data;
  std::map<std::string, Tensor> inputs;
  uint32_t seed = 11;
  for (const auto& [name, shape] : shapes) {
    feeds[name] = {kFloat, shape, nullptr};
    data.push_back(awkward_floats(size_t(shape_numel(shape)), seed++));
  }
  Status st = testing::plan_status((*s)->plan(feeds));
  EXPECT_TRUE(st.ok()) << st.message();
  size_t k = 0;
  for (const auto& [name, shape] : shapes) inputs[name] = Tensor{kFloat, shape, data[k++].data()};
  auto outs = (*s)->run(inputs);
  EXPECT_TRUE(outs.ok()) << outs.status().message();
  return {outs.ok() ? std::move(*outs) : std::vector<HostTensor>{}, (*s)->stats()};
}

// Runs fused and unfused with 1 and 3 threads; every output must match bit for bit.
PlanStats expect_fusion_is_exact(const onnx::ModelProto& proto,
                                 const std::map<std::string, Shape>& shapes) {
  const Outcome plain = run(proto, shapes, false, 1);
  EXPECT_EQ(plain.stats.fused, 0u);
  Outcome fused;
  for (size_t threads : {1, 3}) {
    fused = run(proto, shapes, true, threads);
    EXPECT_EQ(fused.outputs.size(), plain.outputs.size());
    for (size_t i = 0; i < plain.outputs.size() && i < fused.outputs.size(); ++i) {
      EXPECT_EQ(fused.outputs[i].nbytes(), plain.outputs[i].nbytes());
      if (fused.outputs[i].nbytes() != plain.outputs[i].nbytes()) continue;
      EXPECT_EQ(
          std::memcmp(fused.outputs[i].data(), plain.outputs[i].data(), plain.outputs[i].nbytes()),
          0)
          << "output " << i << " with " << threads << " threads";
    }
  }
  return fused.stats;
}

// PP-LCNetV3 after a Conv: affine Mul/Add, hard-swish as Add/Clip/Mul/Div, affine again.
TEST(PointwiseFusion, LearnableAffineHardSwishChainIsOneExactKernel) {
  Graph g;
  g.input("X", {1, 8, 16, 16});
  g.init("s1", {1, 8, 1, 1}, 1);
  g.init("b1", {8, 1, 1}, 2);
  g.scalar("three", 3.0f);
  g.scalar("zero", 0.0f);
  g.scalar("six", 6.0f);
  g.scalar("s2", 0.75f);
  g.init("b2", {1, 8, 1, 1}, 3);
  g.node("Mul", {"X", "s1"}, "m1");
  g.node("Add", {"m1", "b1"}, "a1");
  g.node("Add", {"a1", "three"}, "a2");
  g.node("Clip", {"a2", "zero", "six"}, "c");
  g.node("Mul", {"a1", "c"}, "m2");
  g.node("Div", {"m2", "six"}, "d");
  g.node("Mul", {"d", "s2"}, "m3");
  g.node("Add", {"m3", "b2"}, "Y");
  g.output("Y");
  const PlanStats st = expect_fusion_is_exact(g.m, {{"X", {1, 8, 16, 16}}});
  EXPECT_EQ(st.fused, 8u);
  EXPECT_EQ(st.kernels, 1u);
}

// An intermediate read after the chain and one named as a graph output are written.
TEST(PointwiseFusion, ValuesReadLaterOrNamedAsOutputsAreStored) {
  Graph g;
  g.input("X", {2, 4, 9, 9});
  g.init("s", {1, 4, 1, 1}, 4);
  g.node("Mul", {"X", "s"}, "m");
  g.node("HardSigmoid", {"m"}, "h");
  g.node("Sub", {"h", "X"}, "mid");  // a graph output too
  g.node("LeakyRelu", {"mid"}, "l");
  g.node("GlobalAveragePool", {"h"}, "pooled");  // reads h after the chain
  g.output("l");
  g.output("mid");
  g.output("pooled");
  const PlanStats st = expect_fusion_is_exact(g.m, {{"X", {2, 4, 9, 9}}});
  EXPECT_EQ(st.fused, 4u);
}

// Operands by row (one per batch and channel, fed at run time), a scalar as the
// first operand of non-commutative ops, and a second full-size input.
TEST(PointwiseFusion, RowScalarAndFullOperandsKeepTheirOrder) {
  Graph g;
  g.input("X", {2, 4, 8, 8});
  g.input("S", {2, 4, 1, 1});
  g.input("Z", {2, 4, 8, 8});
  g.scalar("c", -1.5f);
  g.node("Mul", {"X", "S"}, "m");
  g.node("Sub", {"c", "m"}, "a");
  g.node("Div", {"c", "a"}, "b");
  g.node("Add", {"Z", "b"}, "z");
  g.node("Sigmoid", {"z"}, "Y");
  g.output("Y");
  const PlanStats st =
      expect_fusion_is_exact(g.m, {{"X", {2, 4, 8, 8}}, {"S", {2, 4, 1, 1}}, {"Z", {2, 4, 8, 8}}});
  EXPECT_EQ(st.fused, 5u);
}

// Rank 2 and small spatial sizes run as one flat row: scalars and full operands only.
TEST(PointwiseFusion, FlatTensorsFuseScalarsAndRefuseRows) {
  Graph g;
  g.input("X", {3, 100});
  g.input("V", {100});
  g.scalar("c", 0.5f);
  g.node("Mul", {"X", "c"}, "m");
  g.node("Relu", {"m"}, "r");  // Clip(0, +inf) of vec_act.h: joins the chain
  g.node("Add", {"r", "c"}, "a");
  g.node("Mul", {"a", "V"}, "Y");  // V repeats per row of a flat tensor: not fused
  g.output("Y");
  const PlanStats st = expect_fusion_is_exact(g.m, {{"X", {3, 100}}, {"V", {100}}});
  EXPECT_EQ(st.fused, 3u);
  EXPECT_EQ(st.kernels, 2u);
}

// A broadcast along a spatial axis, and Clip bounds known only at run time, are
// not fusible: the chain stops there and everything still matches.
TEST(PointwiseFusion, UnreadableOperandsEndTheChain) {
  Graph g;
  g.input("X", {1, 4, 16, 16});
  g.input("hi", {});
  g.init("h", {1, 1, 16, 1}, 5);
  g.scalar("c", 2.0f);
  g.scalar("lo", -1.0f);
  g.node("Mul", {"X", "c"}, "m");
  g.node("Add", {"m", "c"}, "a");
  g.node("Mul", {"a", "h"}, "mh");
  g.node("Clip", {"mh", "lo", "hi"}, "Y");
  g.output("Y");
  const PlanStats st = expect_fusion_is_exact(g.m, {{"X", {1, 4, 16, 16}}, {"hi", {}}});
  EXPECT_EQ(st.fused, 2u);
  EXPECT_EQ(st.kernels, 3u);
}

// Clip in its opset-6 attribute form, HardSwish and LeakyRelu with attributes.
TEST(PointwiseFusion, AttributeFormsFuse) {
  Graph g(10);
  g.input("X", {1, 3, 20, 20});
  g.scalar("c", 3.0f);
  auto* clip = g.node("Clip", {"X"}, "c1");
  auto* a = clip->add_attribute();
  a->set_name("min");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(-2.5f);
  a = clip->add_attribute();
  a->set_name("max");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(4.0f);
  g.node("Mul", {"c1", "c"}, "m");
  auto* lr = g.node("LeakyRelu", {"m"}, "l");
  a = lr->add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(0.3f);
  g.node("Sigmoid", {"l"}, "Y");
  g.output("Y");
  const PlanStats st = expect_fusion_is_exact(g.m, {{"X", {1, 3, 20, 20}}});
  EXPECT_EQ(st.fused, 4u);
}

}  // namespace
}  // namespace onnx_prepack::runtime
