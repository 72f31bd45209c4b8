// Pow with an integer base: a result out of the type's range saturates (and a
// NaN result gives 0) instead of an undefined float-to-integer conversion
// (found by fuzz_run: int32 x ** 40).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

std::shared_ptr<const format::Model> pow_model(int64_t exponent) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  auto* g = m.mutable_graph();
  g->set_name("pow");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(kInt32);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  g->add_output()->set_name("y");
  auto* e = g->add_initializer();
  e->set_name("e");
  e->set_data_type(kInt32);
  e->add_int32_data(int32_t(exponent));
  auto* n = g->add_node();
  n->set_op_type("Pow");
  n->add_input("x");
  n->add_input("e");
  n->add_output("y");
  return std::shared_ptr<const format::Model>(format::Model::from_proto(std::move(m), "."));
}

TEST(Pow, IntegerResultsOutOfRangeSaturate) {
  auto s = Session::create(pow_model(40), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(testing::plan_status((*s)->plan({{"x", {kInt32, {4}}}})).ok());
  int32_t x[4] = {3, -3, 1, 0};
  auto out = (*s)->run({{"x", Tensor{kInt32, {4}, x}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const int32_t* y = (*out)[0].as<int32_t>();
  EXPECT_EQ(y[0], std::numeric_limits<int32_t>::max());  // 3^40
  EXPECT_EQ(y[1], std::numeric_limits<int32_t>::max());  // (-3)^40 > 0
  EXPECT_EQ(y[2], 1);
  EXPECT_EQ(y[3], 0);
}

TEST(Pow, IntegerResultsInRangeAreExact) {
  auto s = Session::create(pow_model(3), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(testing::plan_status((*s)->plan({{"x", {kInt32, {4}}}})).ok());
  int32_t x[4] = {3, -3, 1290, -1291};
  auto out = (*s)->run({{"x", Tensor{kInt32, {4}, x}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const int32_t* y = (*out)[0].as<int32_t>();
  EXPECT_EQ(y[0], 27);
  EXPECT_EQ(y[1], -27);
  EXPECT_EQ(y[2], 2146689000);
  EXPECT_EQ(y[3], std::numeric_limits<int32_t>::min());  // -2151685171 saturates
}

}  // namespace
}  // namespace onnx_prepack::runtime
