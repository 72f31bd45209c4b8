// `onnx-prepack run --deadline-ms` (issue 18): a Loop fed a trip count of 2^62
// and a condition its body keeps true stops at the deadline with exit 4 and a
// message naming the node and the deadline, well before the 10 s the issue
// allows; the same model with a small trip count runs to the right answer, and
// a bad value is a usage error.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/npy.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

// `timeout` is the safety net: without the deadline the run would not end.
std::string cli() { return "timeout 60 " + std::string(OP_CLI_PATH); }

// Writes the model and its inputs (M, cond true, a0 = 2) into `dir`; returns
// the command line's model and --input arguments.
std::string loop_args(const testing::TempDir& dir, int64_t m) {
  testing::write_bytes(dir.file("loop.onnx"), testing::make_runaway_loop().SerializeAsString());
  uint8_t cond = 1;
  float a0 = 2.0f;
  EXPECT_TRUE(runtime::write_npy(dir.file("M.npy"), {runtime::kInt64, {}, &m}).ok());
  EXPECT_TRUE(runtime::write_npy(dir.file("cond.npy"), {runtime::kBool, {}, &cond}).ok());
  EXPECT_TRUE(runtime::write_npy(dir.file("a0.npy"), {runtime::kFloat, {1}, &a0}).ok());
  return dir.file("loop.onnx") + " --input M=" + dir.file("M.npy") +
         " --input cond=" + dir.file("cond.npy") + " --input a0=" + dir.file("a0.npy");
}

TEST(CliRunDeadline, RunawayLoopStopsWithExit4NamingTheNodeAndDeadline) {
  testing::TempDir dir;
  const std::string args = loop_args(dir, int64_t(1) << 62);
  std::string out;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = testing::run_command(cli() + " run " + args + " --deadline-ms 200", &out);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(rc, 4) << out;
  EXPECT_LT(took, 10.0);  // the bound; the process load and the 200 ms fit well inside
  EXPECT_NE(out.find("node 'runaway' (Loop)"), std::string::npos) << out;
  EXPECT_NE(out.find("deadline of 200 ms"), std::string::npos) << out;

  // --json: the error object carries the code and the exit status.
  EXPECT_EQ(testing::run_command(cli() + " run " + args + " --deadline-ms 100 --json", &out), 4);
  EXPECT_NE(out.find("\"code\": \"deadline_exceeded\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"exit_code\": 4"), std::string::npos) << out;
}

TEST(CliRunDeadline, ShortLoopFinishesWithinItsDeadline) {
  testing::TempDir dir;
  const std::string args = loop_args(dir, 5);
  std::string out;
  // Every run (the first and the --repeat ones) gets the deadline and meets it.
  ASSERT_EQ(
      testing::run_command(cli() + " run " + args + " --deadline-ms 60000 --repeat 2 --json", &out),
      0)
      << out;
  EXPECT_NE(out.find("\"sum\": 7"), std::string::npos) << out;  // a0 2 + 5 iterations
}

TEST(CliRunDeadline, BadValuesAreUsageErrors) {
  testing::TempDir dir;
  const std::string args = loop_args(dir, 5);
  std::string out;
  EXPECT_EQ(testing::run_command(cli() + " run " + args + " --deadline-ms soon", &out), 2);
  EXPECT_NE(out.find("--deadline-ms expects an integer"), std::string::npos) << out;
  EXPECT_EQ(testing::run_command(cli() + " run " + args + " --deadline-ms -5", &out), 2);
  EXPECT_NE(out.find("--deadline-ms must be between 0 and"), std::string::npos) << out;
}

}  // namespace
}  // namespace onnx_prepack
