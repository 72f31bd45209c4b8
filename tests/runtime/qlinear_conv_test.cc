// QLinearConv with a constant W on the packed int8 GEMM (and the depthwise
// plane path) against the runtime's direct loops (the same model with W a
// graph input) and ONNX Runtime, bitwise, over
// tests/runtime/quant/make_qlinear_conv.py's cases: x / w / y uint8 or int8,
// w_scale and w_zero_point per tensor or per output channel, with and without
// B, groups and depthwise (2-D, 3-D, 1-D with rows longer than the plane
// path's chunk, dilated, with a channel multiplier), strides, symmetric and
// asymmetric pads, dilations, auto_pad, kernels 1x1 to 7x7, 1-D and 3-D, more
// output points than one im2col block, exact rounding ties and saturating
// operands. Also under the thread pool. ONNX Runtime runs the type pairs its
// CPU provider has, all cases in one node process (ort_batch.js); its uint8 x
// / int8 w kernel sums pairs of products in saturating int16, so those cases
// keep w in [-64, 63] (docs/decisions.md) and a full-range one runs ours only.
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

TEST(QLinearConv, PackedKernelEqualsLoopsAndOrtBitwise) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  const bool ort = ort_available();
  base::ThreadPool single(1), three(3);
  testing::TempDir dir;
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/quant/make_qlinear_conv.py " + dir.path(),
                                 &log),
            0)
      << log;
  if (ort) {
    ASSERT_EQ(
        testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_batch.js " +
                                 dir.file("ort_manifest.json"),
                             &log),
        0)
        << log;
  }
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
      auto packed = run_model(d + "const.onnx", {{"x", &*x}}, pool);
      ASSERT_TRUE(packed.has_value()) << name;
      EXPECT_TRUE(same_bits(*packed, *loops)) << name << " threads " << pool->size();
    }
    if (ort && ort_runs) {
      std::ifstream error(d + "ort/error.txt");
      std::stringstream why;
      why << error.rdbuf();
      ASSERT_FALSE(error.is_open()) << name << ": ONNX Runtime failed: " << why.str();
      auto want = read_npy(d + "ort/y.npy");
      ASSERT_TRUE(want.ok()) << name;
      EXPECT_TRUE(same_bits(*loops, *want)) << name << " vs ONNX Runtime";
      ++ort_count;
    }
    ++count;
  }
  EXPECT_EQ(count, 32);
  if (ort) {
    EXPECT_EQ(ort_count, 27);
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
