// op_session_options.qdq and op_compile_options.qdq (docs/c-api.md): a
// weight-only QDQ model (DequantizeLinear of an int8 W -> MatMul) computes the
// float product by default and moves by A's quantization error with
// OP_QDQ_INTEGER; compile with OP_QDQ_INTEGER writes W's entry, the default
// none; a value outside the enum is INVALID_ARGUMENT naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "onnx_prepack/c_api.h"
#include "onnx_prepack/status.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

constexpr int64_t kM = 3, kK = 8, kN = 5;

// x [M, K] -> MatMul(x, DequantizeLinear(W int8 [K, N], scale 0.25)) -> y.
onnx::ModelProto qdq_model() {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("qdq");
  auto io = [](onnx::ValueInfoProto* v, const char* name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  io(g->add_input(), "x", {kM, kK});
  io(g->add_output(), "y", {kM, kN});
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::INT8);
  w->add_dims(kK);
  w->add_dims(kN);
  std::string bytes(size_t(kK * kN), '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(int(i * 37 % 255) - 127);
  w->set_raw_data(bytes);
  onnx::TensorProto* s = g->add_initializer();
  s->set_name("W_scale");
  s->set_data_type(onnx::TensorProto::FLOAT);
  s->add_float_data(0.25f);
  auto* dq = g->add_node();
  dq->set_op_type("DequantizeLinear");
  dq->add_input("W");
  dq->add_input("W_scale");
  dq->add_output("Wf");
  auto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("Wf");
  mm->add_output("y");
  return m;
}

std::vector<float> input() {
  std::vector<float> x(size_t(kM * kK));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i) * 0.7)) * 1.3f;
  return x;
}

// y = x @ W * 0.25 in double.
std::vector<double> reference(const std::vector<float>& x) {
  std::vector<double> y(size_t(kM * kN), 0.0);
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      for (int64_t k = 0; k < kK; ++k) {
        const int q = int(size_t(k * kN + j) * 37 % 255) - 127;
        y[size_t(i * kN + j)] += double(x[size_t(i * kK + k)]) * q * 0.25;
      }
    }
  }
  return y;
}

Result<std::vector<float>> run(const std::string& path, int32_t qdq) {
  op_session_options o = op_session_options_default();
  o.qdq = qdq;
  op_session* s = nullptr;
  if (op_session_create(path.c_str(), &o, &s) != OP_STATUS_OK) {
    return invalid_argument(op_last_error_message());
  }
  const std::vector<float> x = input();
  const int64_t dims[2] = {kM, kK};
  const op_input in{"x", OP_DTYPE_FLOAT, x.data(), dims, 2};
  std::vector<float> y(size_t(kM * kN));
  op_status_code rc = op_session_run(s, &in, 1);
  if (rc == OP_STATUS_OK) rc = op_session_output_copy(s, 0, y.data(), y.size() * sizeof(float));
  const std::string err = rc == OP_STATUS_OK ? "" : op_last_error_message();
  op_session_free(s);
  if (rc != OP_STATUS_OK) return invalid_argument(err);
  return y;
}

double max_rel(const std::vector<float>& y, const std::vector<double>& ref) {
  double d = 0, m = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    d = std::max(d, std::fabs(double(y[i]) - ref[i]));
    m = std::max(m, std::fabs(ref[i]));
  }
  return d / m;
}

TEST(CApiQdq, SessionOptionPicksTheExactOrTheIntegerPath) {
  testing::TempDir dir;
  const std::string path = dir.file("qdq.onnx");
  testing::write_bytes(path, qdq_model().SerializeAsString());
  const std::vector<double> ref = reference(input());
  auto exact = run(path, OP_QDQ_EXACT);
  ASSERT_TRUE(exact.ok()) << exact.status().message();
  EXPECT_LE(max_rel(*exact, ref), 1e-6);
  auto integer = run(path, OP_QDQ_INTEGER);
  ASSERT_TRUE(integer.ok()) << integer.status().message();
  const double e = max_rel(*integer, ref);
  EXPECT_GT(e, 1e-6);  // A was quantized to uint8
  EXPECT_LT(e, 2e-2);
  auto bad = run(path, 7);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("qdq"), std::string::npos) << bad.status().message();
}

TEST(CApiQdq, CompileOptionWritesTheIntegerPathsEntry) {
  testing::TempDir dir;
  const std::string path = dir.file("qdq.onnx");
  testing::write_bytes(path, qdq_model().SerializeAsString());
  for (int32_t qdq : {OP_QDQ_EXACT, OP_QDQ_INTEGER}) {
    op_compile_options co = op_compile_options_default();
    co.no_memo = 1;
    co.qdq = qdq;
    op_compile_summary sum;
    std::memset(&sum, 0, sizeof(sum));
    const std::string dst = dir.file("out" + std::to_string(qdq) + ".onnx");
    ASSERT_EQ(op_compile(path.c_str(), dst.c_str(), &co, &sum), OP_STATUS_OK)
        << op_last_error_message();
    EXPECT_EQ(sum.entries, qdq == OP_QDQ_INTEGER ? 1u : 0u);
  }
  op_compile_options co = op_compile_options_default();
  co.qdq = -1;
  EXPECT_EQ(op_compile(path.c_str(), dir.file("bad.onnx").c_str(), &co, nullptr),
            OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(op_last_error_message()).find("qdq"), std::string::npos);
}

}  // namespace
}  // namespace onnx_prepack
