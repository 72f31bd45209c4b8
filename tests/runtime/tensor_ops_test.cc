// Tensor-family contracts the node tests do not show: operators whose output
// size depends on a value ask for it with kNeedsValue (and run once it is
// pinned), and the parallel kernels (Resize, Pad, DepthToSpace, Tile) give the
// same bits with 1 and 3 threads on tensors large enough to be split.
#include <gtest/gtest.h>

#include <cstring>

#include "base/thread_pool.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

std::shared_ptr<const format::Model> model_of(onnx::ModelProto proto) {
  return std::shared_ptr<const format::Model>(format::Model::from_proto(std::move(proto), "."));
}

// One node `op` over graph input X (float, `shape`) and float/int64 initializers.
onnx::ModelProto one_node(const std::string& op, const Shape& shape,
                          const std::vector<onnx::TensorProto>& inits,
                          const std::vector<std::pair<std::string, std::string>>& str_attrs = {},
                          int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name(op);
  auto* in = g->add_input();
  in->set_name("X");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(kFloat);
  for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("Y");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      op == "NonZero" ? kInt64 : kFloat);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->add_input("X");
  for (const auto& t : inits) {
    n->add_input(t.name());
    *g->add_initializer() = t;
  }
  n->add_output("Y");
  for (const auto& [k, v] : str_attrs) {
    auto* a = n->add_attribute();
    a->set_name(k);
    if (k == "blocksize") {
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(std::stoll(v));
    } else {
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(v);
    }
  }
  return m;
}

onnx::TensorProto int64_tensor(const std::string& name, const std::vector<int64_t>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kInt64);
  t.add_dims(int64_t(v.size()));
  for (int64_t x : v) t.add_int64_data(x);
  return t;
}

TEST(TensorOps, NonZeroAsksForItsInputValueThenRunsPinned) {
  auto model = model_of(one_node("NonZero", {2, 3}, {}));
  auto s = Session::create(model, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<float> x = {0, 1.5f, 0, -2, 0, 3};
  Tensor view{kFloat, {2, 3}, x.data()};
  EXPECT_TRUE(testing::needs_values((*s)->plan({{"X", {kFloat, {2, 3}, nullptr}}})));
  Status st = testing::plan_status((*s)->plan({{"X", {kFloat, {2, 3}, &view}}}));
  ASSERT_TRUE(st.ok()) << st.message();
  auto out = (*s)->run({{"X", view}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  // Non-zeros at (0, 1), (1, 0), (1, 2): rows then columns.
  ASSERT_EQ((*out)[0].shape(), (Shape{2, 3}));
  const int64_t want[] = {0, 1, 1, 1, 0, 2};
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].as<int64_t>()[i], want[i]) << i;
}

// BOOL bytes other than 0 and 1 (a fed buffer, an initializer's raw_data) are
// true, as in numpy and ONNX Runtime, and never reach a kernel as an invalid
// bool (found by fuzz_run; UBSan reports such a load).
TEST(TensorOps, BoolBytesOtherThanZeroOrOneAreTrue) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("bools");
  auto* in = g->add_input();
  in->set_name("B");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(kBool);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  onnx::TensorProto init;
  init.set_name("C");
  init.set_data_type(kBool);
  init.add_dims(4);
  init.set_raw_data(std::string("\x00\x07\x01\xff", 4));
  *g->add_initializer() = init;
  auto* cast = g->add_node();
  cast->set_op_type("Cast");
  cast->add_input("B");
  cast->add_output("Y");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(kFloat);
  auto* and_node = g->add_node();
  and_node->set_op_type("And");
  and_node->add_input("B");
  and_node->add_input("C");
  and_node->add_output("Z");
  g->add_output()->set_name("Y");
  g->add_output()->set_name("Z");
  auto s = Session::create(model_of(m), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  uint8_t fed[4] = {2, 0, 255, 1};
  Tensor view{kBool, {4}, fed};
  Status st = testing::plan_status((*s)->plan({{"B", {kBool, {4}, nullptr}}}));
  ASSERT_TRUE(st.ok()) << st.message();
  auto out = (*s)->run({{"B", view}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const float want_y[4] = {1, 0, 1, 1};
  const uint8_t want_z[4] = {0, 0, 1, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*out)[0].as<float>()[i], want_y[i]) << i;
    EXPECT_EQ(static_cast<const uint8_t*>((*out)[1].data())[i], want_z[i]) << i;
  }
}

// Runs `model` on X with a pool of `threads`; returns Y's bytes.
std::string run_with_threads(const std::shared_ptr<const format::Model>& model, const Shape& shape,
                             size_t threads) {
  base::ThreadPool pool(threads);
  SessionOptions so;
  so.pool = &pool;
  so.fold_limit_bytes = 0;
  auto s = Session::create(model, so);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return "";
  auto x = testing::pseudo_random_floats(size_t(shape_numel(shape)), 5);
  Tensor view{kFloat, shape, x.data()};
  Status st = testing::plan_status((*s)->plan({{"X", {kFloat, shape, nullptr}}}));
  EXPECT_TRUE(st.ok()) << st.message();
  auto out = (*s)->run({{"X", view}});
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok()) return "";
  const auto& y = (*out)[0];
  return std::string(static_cast<const char*>(y.data()), y.nbytes());
}

TEST(TensorOps, ParallelKernelsGiveTheSameBitsWithOneAndThreeThreads) {
  Shape shape = {1, 8, 64, 72};
  onnx::TensorProto empty_roi = testing::float_tensor("roi", {0}, {});
  std::vector<onnx::ModelProto> models = {
      one_node("Resize", shape,
               {empty_roi, testing::float_tensor("scales", {4}, {1, 1, 1.5f, 2.25f})},
               {{"mode", "linear"}}),
      one_node("Resize", shape,
               {empty_roi, testing::float_tensor("scales", {4}, {1, 1, 0.5f, 0.75f})},
               {{"mode", "cubic"}}),
      one_node("Resize", shape, {empty_roi, testing::float_tensor("scales", {4}, {1, 1, 2, 2})},
               {{"mode", "nearest"}}),
      one_node("Pad", shape, {int64_tensor("pads", {0, 0, 3, 2, 0, 1, 4, 5})},
               {{"mode", "reflect"}}),
      one_node("DepthToSpace", shape, {}, {{"blocksize", "2"}, {"mode", "CRD"}}),
      one_node("Tile", shape, {int64_tensor("repeats", {2, 1, 2, 3})}),
  };
  for (auto& m : models) {
    auto model = model_of(m);
    std::string one = run_with_threads(model, shape, 1);
    std::string three = run_with_threads(model, shape, 3);
    ASSERT_FALSE(one.empty()) << m.graph().node(0).op_type();
    EXPECT_TRUE(one == three) << m.graph().node(0).op_type() << ": outputs differ";
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
