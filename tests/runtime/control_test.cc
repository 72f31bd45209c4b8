// What the control-flow operators refuse or ask for at plan time: unsupported
// operators inside subgraphs are named when the model is created; If branches
// of different shapes and Loop scan outputs with a fed trip count need the
// condition / trip count ("must be known before running") and plan once it is
// pinned; Scan needs opset 9. Agreement with ONNX Runtime is in control_ort_test.cc.
#include <gtest/gtest.h>

#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

onnx::ValueInfoProto value(const std::string& name, int32_t type, const Shape& dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  auto* s = t->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
  return v;
}

onnx::NodeProto node(const std::string& op, std::vector<std::string> in,
                     std::vector<std::string> out) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(op + "_" + out[0]);
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  return n;
}

void add_graph_attr(onnx::NodeProto* n, const std::string& name, onnx::GraphProto g) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = std::move(g);
}

std::shared_ptr<const format::Model> model_of(onnx::GraphProto g, int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_version(opset);
  *m.mutable_graph() = std::move(g);
  return format::Model::from_proto(std::move(m), ".");
}

// If whose then branch gives x (shape [2]) and else branch Concat(x, x) ([4]).
onnx::GraphProto if_graph(const std::string& then_op) {
  onnx::GraphProto then_g, else_g, g;
  then_g.set_name("then");
  *then_g.add_node() = node(then_op, {"x"}, {"t"});
  *then_g.add_output() = value("t", kFloat, {2});
  else_g.set_name("else");
  auto concat = node("Concat", {"x", "x"}, {"e"});
  auto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  *else_g.add_node() = concat;
  *else_g.add_output() = value("e", kFloat, {4});
  auto n = node("If", {"c"}, {"y"});
  add_graph_attr(&n, "then_branch", then_g);
  add_graph_attr(&n, "else_branch", else_g);
  g.set_name("if");
  *g.add_node() = n;
  *g.add_input() = value("c", kBool, {});
  *g.add_input() = value("x", kFloat, {2});
  *g.add_output() = value("y", kFloat, {});
  g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  return g;
}

TEST(ControlFlow, UnsupportedOperatorInsideSubgraphIsNamedAtCreate) {
  auto s = Session::create(model_of(if_graph("NoSuchOp")), SessionOptions{});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("NoSuchOp"), std::string::npos) << s.status().message();
}

TEST(ControlFlow, IfBranchesOfDifferentShapesNeedTheCondition) {
  auto s = Session::create(model_of(if_graph("Identity")), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  float x[2] = {1.5f, -2.0f};
  for (bool cond : {true, false}) {
    uint8_t c = cond;
    Tensor ct{kBool, {}, &c}, xt{kFloat, {2}, x};
    EXPECT_TRUE(testing::needs_values((*s)->plan({{"c", {kBool, {}}}, {"x", {kFloat, {2}}}})));
    Status st = testing::plan_status((*s)->plan({{"c", {kBool, {}, &ct}}, {"x", {kFloat, {2}}}}));
    ASSERT_TRUE(st.ok()) << st.message();
    auto out = (*s)->run({{"c", ct}, {"x", xt}});
    ASSERT_TRUE(out.ok()) << out.status().message();
    // then: x; else: Concat(x, x).
    ASSERT_EQ((*out)[0].shape(), Shape{cond ? 2 : 4});
    for (int64_t i = 0; i < (*out)[0].numel(); ++i) EXPECT_EQ((*out)[0].as<float>()[i], x[i % 2]);
  }
}

// Silero VAD's pattern: a branch the fed shapes cannot plan (here Reshape of
// 2 values to 3) runs the other branch; taking it fails the run, naming it.
TEST(ControlFlow, IfBranchThatCannotBePlannedFailsOnlyWhenTaken) {
  onnx::GraphProto g = if_graph("Identity");
  onnx::GraphProto else_g;
  else_g.set_name("else");
  onnx::TensorProto shape;
  shape.set_name("three");
  shape.set_data_type(kInt64);
  shape.add_dims(1);
  shape.add_int64_data(3);
  *else_g.add_initializer() = shape;
  *else_g.add_node() = node("Reshape", {"x", "three"}, {"e"});
  *else_g.add_output() = value("e", kFloat, {3});
  *g.mutable_node(0)->mutable_attribute(1)->mutable_g() = else_g;
  auto s = Session::create(model_of(g), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  Status st = testing::plan_status((*s)->plan({{"c", {kBool, {}}}, {"x", {kFloat, {2}}}}));
  ASSERT_TRUE(st.ok()) << st.message();  // planned without the condition's value
  float x[2] = {1.5f, -2.0f};
  uint8_t yes = 1, no = 0;
  Tensor xt{kFloat, {2}, x};
  auto out = (*s)->run({{"c", Tensor{kBool, {}, &yes}}, {"x", xt}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].as<float>()[1], -2.0f);
  out = (*s)->run({{"c", Tensor{kBool, {}, &no}}, {"x", xt}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("else_branch"), std::string::npos)
      << out.status().message();
}

TEST(ControlFlow, LoopScanOutputNeedsTheTripCount) {
  onnx::GraphProto body, g;
  body.set_name("body");
  *body.add_node() = node("Identity", {"cond"}, {"cond2"});
  *body.add_node() = node("Add", {"acc", "acc"}, {"acc2"});
  *body.add_node() = node("Identity", {"acc2"}, {"s"});
  *body.add_input() = value("i", kInt64, {});
  *body.add_input() = value("cond", kBool, {});
  *body.add_input() = value("acc", kFloat, {1});
  *body.add_output() = value("cond2", kBool, {});
  *body.add_output() = value("acc2", kFloat, {1});
  *body.add_output() = value("s", kFloat, {1});
  auto n = node("Loop", {"M", "", "a0"}, {"out", "scan"});
  add_graph_attr(&n, "body", body);
  *g.add_node() = n;
  *g.add_input() = value("M", kInt64, {});
  *g.add_input() = value("a0", kFloat, {1});
  *g.add_output() = value("out", kFloat, {1});
  *g.add_output() = value("scan", kFloat, {3, 1});
  auto s = Session::create(model_of(g), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  int64_t m = 3;
  float a0 = 1.0f;
  Tensor mt{kInt64, {}, &m}, at{kFloat, {1}, &a0};
  EXPECT_TRUE(testing::needs_values((*s)->plan({{"M", {kInt64, {}}}, {"a0", {kFloat, {1}}}})));
  // Pinned trip count, a0 still fed at run time: the loop runs as a kernel.
  Status st = testing::plan_status((*s)->plan({{"M", {kInt64, {}, &mt}}, {"a0", {kFloat, {1}}}}));
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ((*s)->stats().kernels, 1u);
  auto out = (*s)->run({{"M", mt}, {"a0", at}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].as<float>()[0], 8.0f);  // 1 doubled three times
  ASSERT_EQ((*out)[1].shape(), (Shape{3, 1}));
  EXPECT_EQ((*out)[1].as<float>()[0], 2.0f);
  EXPECT_EQ((*out)[1].as<float>()[2], 8.0f);
}

// Loop body: cond2 = Identity(cond), acc2 = acc + one (one: an outer-scope value).
onnx::GraphProto counting_body() {
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_node() = node("Identity", {"cond"}, {"cond2"});
  *body.add_node() = node("Add", {"acc", "one"}, {"acc2"});
  *body.add_input() = value("i", kInt64, {});
  *body.add_input() = value("cond", kBool, {});
  *body.add_input() = value("acc", kFloat, {1});
  *body.add_output() = value("cond2", kBool, {});
  *body.add_output() = value("acc2", kFloat, {1});
  return body;
}

onnx::TensorProto scalar_init(const std::string& name, int32_t type, double v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  if (type == kInt64) t.add_int64_data(int64_t(v));
  if (type == kFloat) {
    t.add_dims(1);
    t.add_float_data(float(v));
  }
  return t;
}

TEST(ControlFlow, LoopThatCannotStopIsRefused) {
  onnx::GraphProto g;
  auto n = node("Loop", {"", "", "a0"}, {"out"});
  add_graph_attr(&n, "body", counting_body());
  *g.add_node() = n;
  *g.add_input() = value("a0", kFloat, {1});
  *g.add_output() = value("out", kFloat, {1});
  *g.add_initializer() = scalar_init("one", kFloat, 1.0);
  auto s = Session::create(model_of(g), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  Status st = testing::plan_status((*s)->plan({{"a0", {kFloat, {1}}}}));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("never stop"), std::string::npos) << st.message();
}

TEST(ControlFlow, KnownLoopRunsAtPlanTime) {
  // Every input known: the node folds, the loop runs while planning (one body
  // plan reused across its 20000 iterations).
  onnx::GraphProto g;
  auto n = node("Loop", {"M", "", "a0"}, {"out"});
  add_graph_attr(&n, "body", counting_body());
  *g.add_node() = n;
  *g.add_output() = value("out", kFloat, {1});
  *g.add_initializer() = scalar_init("one", kFloat, 1.0);
  *g.add_initializer() = scalar_init("a0", kFloat, 5.0);
  *g.add_initializer() = scalar_init("M", kInt64, 20000);
  auto s = Session::create(model_of(g), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(testing::plan_status((*s)->plan({})).ok());
  EXPECT_EQ((*s)->stats().kernels, 0u);
  auto out = (*s)->run({});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].as<float>()[0], 20005.0f);  // integers below 2^24 add exactly
}

}  // namespace
}  // namespace onnx_prepack::runtime
