// Bound values (Session::set_bound_values, Engine::run_bound): fed inputs read
// and outputs written in the caller's buffers, an output bound to an input's
// buffer updated in place; aliases and BOOL inputs stay copied; a missing or
// misaligned buffer and a plain run() of a bound plan are errors.
#include <gtest/gtest.h>

#include <cstring>

#include "format/model.h"
#include "onnx_prepack/engine.hpp"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {
namespace {

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* to,
               const std::string& name, int32_t dtype) {
  auto* v = to->Add();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
}

void add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
              const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
}

// y = x + b (written by a step), z = Identity(x) (an alias of a fed input),
// w = Not(flag) (a BOOL input).
std::shared_ptr<const format::Model> model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", kFloat);
  add_value(g->mutable_input(), "b", kFloat);
  add_value(g->mutable_input(), "flag", kBool);
  add_node(g, "Add", {"x", "b"}, "y");
  add_node(g, "Identity", {"x"}, "z");
  add_node(g, "Not", {"flag"}, "w");
  add_value(g->mutable_output(), "y", kFloat);
  add_value(g->mutable_output(), "z", kFloat);
  add_value(g->mutable_output(), "w", kBool);
  return std::shared_ptr<const format::Model>(format::Model::from_proto(std::move(m), "."));
}

TEST(SessionBound, OutputsAndInputsInCallerBuffersAliasesAndBoolsCopied) {
  auto s = Session::create(model(), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  (*s)->set_bound_values({"x", "b", "flag", "y", "z", "w"});
  auto planned = (*s)->plan({{"x", {kFloat, {4}}}, {"b", {kFloat, {4}}}, {"flag", {kBool, {4}}}});
  ASSERT_TRUE(planned.ok()) << planned.status().message();
  EXPECT_TRUE((*s)->is_bound_in_place("x"));
  EXPECT_TRUE((*s)->is_bound_in_place("b"));
  EXPECT_TRUE((*s)->is_bound_in_place("y"));
  EXPECT_FALSE((*s)->is_bound_in_place("z"));     // Identity: an alias of x
  EXPECT_FALSE((*s)->is_bound_in_place("flag"));  // BOOL: canonicalised in the arena
  EXPECT_TRUE((*s)->is_bound_in_place("w"));
  EXPECT_EQ((*s)->stats().bound_values, 4u);

  alignas(16) float x[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, y[4] = {}, z[4] = {};
  const uint8_t flag[4] = {0, 1, 2, 0};  // 2: not canonical, read as true
  bool w[4] = {};
  const void* in[] = {x, b, flag};
  void* out[] = {y, z, w};
  ASSERT_TRUE((*s)->run_bound(in, out).ok());
  EXPECT_EQ(y[3], 44.0f);
  EXPECT_EQ(z[2], 3.0f);
  EXPECT_TRUE(w[0] && !w[1] && !w[2] && w[3]);

  // The same buffer as input and output: y = x + b written over x.
  const void* in2[] = {x, b, flag};
  void* out2[] = {x, z, w};
  ASSERT_TRUE((*s)->run_bound(in2, out2).ok());
  EXPECT_EQ(x[0], 11.0f);
  EXPECT_EQ(x[3], 44.0f);

  void* missing[] = {nullptr, z, w};
  auto st = (*s)->run_bound(in, missing);
  EXPECT_NE(st.message().find("output 'y' is bound"), std::string::npos) << st.message();
  const void* misaligned[] = {reinterpret_cast<const uint8_t*>(x) + 1, b, flag};
  st = (*s)->run_bound(misaligned, out);
  EXPECT_NE(st.message().find("not aligned"), std::string::npos) << st.message();
  Tensor tx{kFloat, {4}, x}, tb{kFloat, {4}, b}, tf{kBool, {4}, const_cast<uint8_t*>(flag)};
  auto r = (*s)->run({{"x", tx}, {"b", tb}, {"flag", tf}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("use run_bound"), std::string::npos);
}

TEST(SessionBound, EngineRunBoundChecksOutputShapesAndNames) {
  auto e = Engine::open_model(model());
  ASSERT_TRUE(e.ok()) << e.status().message();
  alignas(16) float x[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1}, y[8] = {};
  bool flag[4] = {};
  std::map<std::string, Tensor> in = {
      {"x", {kFloat, {4}, x}}, {"b", {kFloat, {4}, b}}, {"flag", {kBool, {4}, flag}}};
  auto st = (*e)->run_bound(in, {{"y", {kFloat, {8}, y}}});
  EXPECT_NE(st.message().find("output 'y' was given float[8], the plan makes float[4]"),
            std::string::npos)
      << st.message();
  st = (*e)->run_bound(in, {{"nope", {kFloat, {4}, y}}});
  EXPECT_NE(st.message().find("'nope' is not a graph output"), std::string::npos);
  ASSERT_TRUE((*e)->run_bound(in, {{"y", {kFloat, {4}, y}}}).ok());
  EXPECT_EQ(y[0], 2.0f);
  // A plain run after a bound one plans again without bound values.
  auto r = (*e)->run(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].as<float>()[3], 5.0f);
}

}  // namespace
}  // namespace onnx_prepack::runtime
