// MatMulInteger on the packed int8 GEMM (constant 2-D B) against the runtime's
// loops (the same model with B a graph input) and ONNX Runtime, bitwise, over
// tests/runtime/quant/make_matmul_integer.py's cases: uint8/int8 A x uint8/int8
// B, with and without zero points, per-column B and per-row A zero points,
// 1-D, 3-D and 4-D A, odd sizes and extreme operands. Also under the thread pool.
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

TEST(MatMulInteger, PackedKernelEqualsLoopsAndOrtBitwise) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  const bool ort = ort_available();
  base::ThreadPool single(1), three(3);
  testing::TempDir dir;
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/quant/make_matmul_integer.py " + dir.path(),
                                 &log),
            0)
      << log;
  std::ifstream cases(dir.file("cases.txt"));
  std::string line;
  int count = 0;
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    std::string name;
    int ort_runs = 0;
    fields >> name >> ort_runs;
    const std::string d = dir.path() + "/" + name + "/";
    auto a = read_npy(d + "a.npy");
    auto b = read_npy(d + "b.npy");
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    auto loops = run_model(d + "input.onnx", {{"a", &*a}, {"b", &*b}}, &single);
    ASSERT_TRUE(loops.has_value()) << name;
    for (base::ThreadPool* pool : {&single, &three}) {
      auto packed = run_model(d + "const.onnx", {{"a", &*a}}, pool);
      ASSERT_TRUE(packed.has_value()) << name;
      EXPECT_TRUE(same_bits(*packed, *loops)) << name << " threads " << pool->size();
    }
    if (ort && ort_runs) {
      ASSERT_EQ(
          testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                                   d + "const.onnx " + d + "ort a=" + d + "a.npy",
                               &log),
          0)
          << name << ": " << log;
      auto want = read_npy(d + "ort/y.npy");
      ASSERT_TRUE(want.ok()) << name;
      EXPECT_TRUE(same_bits(*loops, *want)) << name << " vs ONNX Runtime";
    }
    ++count;
  }
  EXPECT_EQ(count, 16);
}

}  // namespace
}  // namespace onnx_prepack::runtime
