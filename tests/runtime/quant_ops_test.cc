// Quantized ONNX patterns as ONNX Runtime's quantization tools write them
// (tests/runtime/quant/make_qdq_models.py): quantize_dynamic's
// DynamicQuantizeLinear + MatMulInteger and QLinearMatMul agree with ONNX
// Runtime exactly; weight-only QDQ (per channel, blocked; int8, int4 and uint4
// weights, the 4-bit ones held widened) agrees with the float64
// ONNX semantics, which ONNX Runtime only approximates (it fuses the pattern
// into an int8 product; measured and bounded here).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool tools_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0 &&
         testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

double max_abs(const HostTensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, double(std::fabs(t.as<float>()[i])));
  return m;
}

double max_diff(const HostTensor& a, const HostTensor& b) {
  double m = 0;
  if (b.dtype() == kDouble) {
    for (int64_t i = 0; i < a.numel(); ++i)
      m = std::max(m, std::fabs(double(a.as<float>()[i]) - b.as<double>()[i]));
  } else {
    for (int64_t i = 0; i < a.numel(); ++i)
      m = std::max(m, std::fabs(double(a.as<float>()[i]) - b.as<float>()[i]));
  }
  return m;
}

TEST(QuantOps, QuantizedPatternsAgreeWithOrtOrTheOnnxSemantics) {
  if (!tools_available()) GTEST_SKIP() << "node, onnxruntime-node or python3-onnx missing";
  for (const char* kind : {"dynamic", "qlinear", "qdq", "blocked", "int4", "uint4"}) {
    testing::TempDir dir;
    std::string log;
    ASSERT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                       "/tests/runtime/quant/make_qdq_models.py " + dir.path() +
                                       " " + kind + " --M 4 --K 70 --N 21",
                                   &log),
              0)
        << log;
    ASSERT_EQ(testing::run_command("node " + std::string(OP_SOURCE_DIR) +
                                       "/tests/runtime/ort_run.js " + dir.file("model.onnx") + " " +
                                       dir.file("ort") + " x=" + dir.file("x.npy"),
                                   &log),
              0)
        << log;
    auto ort = read_npy(dir.file("ort/y.npy"));
    auto x = read_npy(dir.file("x.npy"));
    ASSERT_TRUE(ort.ok() && x.ok());
    auto loaded = format::Model::load(dir.file("model.onnx"));
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    std::shared_ptr<const format::Model> model(std::move(*loaded));
    auto s = Session::create(model, SessionOptions{});
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->plan({{"x", {kFloat, x->shape()}}}).ok());
    auto got = (*s)->run({{"x", x->view()}});
    ASSERT_TRUE(got.ok()) << got.status().message();
    const HostTensor& y = (*got)[0];
    ASSERT_EQ(y.shape(), ort->shape());
    const double mx = max_abs(*ort);
    ASSERT_GT(mx, 1.0);
    if (std::string(kind) == "dynamic" || std::string(kind) == "qlinear") {
      EXPECT_LE(max_diff(y, *ort), 1e-6 * mx) << kind;
    } else {
      auto ref = read_npy(dir.file("ref.npy"));
      ASSERT_TRUE(ref.ok()) << ref.status().message();
      EXPECT_LE(max_diff(y, *ref), 1e-6 * mx) << kind << " vs float64 reference";
      EXPECT_LE(max_diff(*ort, *ref), 2e-2 * mx) << kind << ": ORT's fused int8 approximation";
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
