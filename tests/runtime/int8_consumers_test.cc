// The int8 GEMM pack's other consumers (issue 19): com.microsoft
// MatMulIntegerToFloat and DynamicQuantizeMatMul and QLinearMatMul with a
// constant 2-D B, through the CLI (tests/runtime/quant/int8_consumers_check.py):
// against onnxruntime-node within 1e-5 relative (skipped without it), the
// packed QLinearMatMul bitwise the loops (B a graph input), and compile -> run
// hits the i8_gemm_b entry with the output bitwise the uncompiled run's.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool python_available() {
  std::string out;
  return testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

bool ort_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

TEST(Int8IntegerConsumers, OrtLoopsAndCompiledRuns) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  testing::TempDir dir;
  const bool ort = ort_available();
  std::string log;
  const int rc = testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                          "/tests/runtime/quant/int8_consumers_check.py " +
                                          std::string(OP_CLI_PATH) + " " + dir.path() +
                                          (ort ? "" : " --no-ort"),
                                      &log);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("\n0 failures"), std::string::npos) << log;
  if (!ort) GTEST_SKIP() << "node or onnxruntime-node not available (ORT part skipped)";
}

}  // namespace
}  // namespace onnx_prepack::runtime
