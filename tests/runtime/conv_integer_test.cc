// ConvInteger on the int8 GEMM (constant W) against the runtime's direct loops
// (the same model with W a graph input) and ONNX Runtime, bitwise, over
// tests/runtime/quant/make_conv_integer.py's cases: uint8/int8 x with uint8/int8
// W, with and without zero points, per-channel w_zero_point (not ORT: it refuses
// them), groups and depthwise (its direct plane path too: 2-D, 3-D, dilated,
// with a channel multiplier), strides, symmetric and asymmetric pads,
// dilations, auto_pad SAME_UPPER / SAME_LOWER, kernels 1x1 to 7x7, 1-D and 3-D,
// batch 2, odd sizes, more output points than one im2col block and extreme
// operands. Also under the thread pool.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/session_run.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

using testing::ort_available;
using testing::python_available;
using testing::run_model;
using testing::same_bits;

TEST(ConvInteger, GemmKernelEqualsLoopsAndOrtBitwise) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  const bool ort = ort_available();
  base::ThreadPool single(1), three(3);
  testing::TempDir dir;
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/quant/make_conv_integer.py " + dir.path(),
                                 &log),
            0)
      << log;
  std::ifstream cases(dir.file("cases.txt"));
  std::string line;
  int count = 0, ort_count = 0;
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    std::string name;
    int ort_runs = 0;
    fields >> name >> ort_runs;
    const std::string d = dir.path() + "/" + name + "/";
    auto x = read_npy(d + "x.npy");
    auto w = read_npy(d + "w.npy");
    ASSERT_TRUE(x.ok() && w.ok()) << name;
    auto loops = run_model(d + "input.onnx", {{"x", &*x}, {"w", &*w}}, &single);
    ASSERT_TRUE(loops.has_value()) << name;
    for (base::ThreadPool* pool : {&single, &three}) {
      auto gemm = run_model(d + "const.onnx", {{"x", &*x}}, pool);
      ASSERT_TRUE(gemm.has_value()) << name;
      EXPECT_TRUE(same_bits(*gemm, *loops)) << name << " threads " << pool->size();
    }
    if (ort && ort_runs) {
      ASSERT_EQ(
          testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                                   d + "const.onnx " + d + "ort x=" + d + "x.npy",
                               &log),
          0)
          << name << ": " << log;
      auto want = read_npy(d + "ort/y.npy");
      ASSERT_TRUE(want.ok()) << name;
      EXPECT_TRUE(same_bits(*loops, *want)) << name << " vs ONNX Runtime";
      ++ort_count;
    }
    ++count;
  }
  EXPECT_EQ(count, 28);
  if (ort) {
    EXPECT_EQ(ort_count, 24);
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
