// `onnx-prepack run` and bfloat16, which numpy lacks (docs/cli.md): a uint16
// .npy fed to a bfloat16 input holds its bit patterns, and a bfloat16 output
// is written as a uint16 .npy of its bit patterns.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "runtime/npy.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

std::string cli() { return std::string(OP_CLI_PATH); }

void add_value(onnx::ValueInfoProto* v, const std::string& name, int type) {
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
}

// x (bfloat16) -> Cast to float -> f; f -> Cast to bfloat16 -> b.
onnx::ModelProto round_trip_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("bf16");
  add_value(g->add_input(), "x", onnx::TensorProto::BFLOAT16);
  add_value(g->add_output(), "f", onnx::TensorProto::FLOAT);
  add_value(g->add_output(), "b", onnx::TensorProto::BFLOAT16);
  for (auto [in, out, to] : {std::tuple{"x", "f", int(onnx::TensorProto::FLOAT)},
                             std::tuple{"f", "b", int(onnx::TensorProto::BFLOAT16)}}) {
    auto* n = g->add_node();
    n->set_op_type("Cast");
    n->add_input(in);
    n->add_output(out);
    auto* a = n->add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to);
  }
  return m;
}

uint16_t bits_of(float v) {  // v must be exactly representable in bfloat16
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return uint16_t(u >> 16);
}

TEST(RunBfloat16, Uint16NpyCarriesBitPatternsBothWays) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("m.onnx"), round_trip_model().SerializeAsString());
  const float values[4] = {1.5f, -2.0f, 0.15625f, 384.0f};
  auto x = runtime::HostTensor::allocate(runtime::kUint16, {4});
  uint16_t* xb = static_cast<uint16_t*>(x.mutable_data());
  for (int i = 0; i < 4; ++i) xb[i] = bits_of(values[i]);
  ASSERT_TRUE(runtime::write_npy(dir.file("x.npy"), x.view()).ok());
  std::string out;
  ASSERT_EQ(testing::run_command(cli() + " run " + dir.file("m.onnx") + " --input x=" +
                                     dir.file("x.npy") + " --output-dir " + dir.file("out"),
                                 &out),
            0)
      << out;
  auto f = runtime::read_npy(dir.file("out/f.npy"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->dtype(), runtime::kFloat);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f->as<float>()[i], values[i]) << i;
  auto b = runtime::read_npy(dir.file("out/b.npy"));
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->dtype(), runtime::kUint16);  // the .npy says '<u2'
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b->as<uint16_t>()[i], xb[i]) << i;
}

TEST(RunBfloat16, OtherNpyTypesAreRefusedForBfloat16Inputs) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("m.onnx"), round_trip_model().SerializeAsString());
  auto x = runtime::HostTensor::allocate(runtime::kFloat, {4});
  ASSERT_TRUE(runtime::write_npy(dir.file("x.npy"), x.view()).ok());
  std::string out;
  EXPECT_NE(testing::run_command(cli() + " run " + dir.file("m.onnx") + " --input x=" +
                                     dir.file("x.npy") + " --output-dir " + dir.file("out"),
                                 &out),
            0);
  EXPECT_NE(out.find("bfloat16"), std::string::npos) << out;
}

}  // namespace
}  // namespace onnx_prepack
