// op_run_options (issue 18): a run past its deadline returns
// OP_STATUS_DEADLINE_EXCEEDED naming the node, one stopped from another thread
// OP_STATUS_CANCELLED; the session then runs again with the right answer.
// The timing bounds are generous: they tell "stopped" from "ran on".
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "onnx_prepack/c_api.h"
#include "onnx_prepack/onnx_prepack.hpp"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The runaway Loop's inputs: out = a0 + M when cond is true.
struct Feeds {
  int64_t m;
  uint8_t cond = 1;
  float a0 = 2.0f;
  int64_t a0_dims[1] = {1};
  op_input in[3];
  explicit Feeds(int64_t trips) : m(trips) {
    in[0] = op_input{"M", OP_DTYPE_INT64, &m, nullptr, 0};
    in[1] = op_input{"cond", OP_DTYPE_BOOL, &cond, nullptr, 0};
    in[2] = op_input{"a0", OP_DTYPE_FLOAT, &a0, a0_dims, 1};
  }
};

struct Fixture {
  testing::TempDir dir;
  api::Session session;
  Fixture() {
    const std::string path = dir.file("loop.onnx");
    testing::write_bytes(path, testing::make_runaway_loop().SerializeAsString());
    EXPECT_EQ(api::Session::create(path.c_str(), nullptr, &session), OP_STATUS_OK)
        << api::last_error();
  }
  // Runs M = 5 without options and returns out[0] (-1 on failure).
  float short_run() {
    Feeds f(5);
    if (session.run(f.in, 3) != OP_STATUS_OK) {
      ADD_FAILURE() << api::last_error();
      return -1.0f;
    }
    float y = 0;
    EXPECT_EQ(op_session_output_copy(session.get(), 0, &y, sizeof(y)), OP_STATUS_OK);
    return y;
  }
};

TEST(CApiRunOptions, DeadlineStopsARunawayLoopAndTheSessionRunsAgain) {
  Fixture fx;
  ASSERT_TRUE(fx.session);
  api::RunOptions ro;
  ASSERT_EQ(api::RunOptions::create(&ro), OP_STATUS_OK);
  ASSERT_EQ(ro.set_deadline_ms(200), OP_STATUS_OK);
  Feeds huge(int64_t(1) << 62);
  const auto t0 = Clock::now();
  EXPECT_EQ(fx.session.run(huge.in, 3, ro), OP_STATUS_DEADLINE_EXCEEDED);
  EXPECT_LT(seconds_since(t0), 2.0);
  const std::string msg = api::last_error();
  EXPECT_NE(msg.find("node 'runaway' (Loop)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("deadline of 200 ms"), std::string::npos) << msg;
  EXPECT_EQ(op_last_error_code(), OP_STATUS_DEADLINE_EXCEEDED);
  EXPECT_STREQ(op_status_code_name(OP_STATUS_DEADLINE_EXCEEDED), "deadline_exceeded");
  op_tensor_view v;
  EXPECT_EQ(op_session_output(fx.session.get(), 0, &v), OP_STATUS_INVALID_ARGUMENT);  // none kept

  EXPECT_EQ(fx.short_run(), 7.0f);
  Feeds small(5);
  EXPECT_EQ(fx.session.run(small.in, 3, ro), OP_STATUS_OK) << api::last_error();  // 200 ms is ample
  // NULL run options: a plain run.
  EXPECT_EQ(op_session_run_with_options(fx.session.get(), small.in, 3, nullptr), OP_STATUS_OK);
}

TEST(CApiRunOptions, TerminateFromAnotherThreadCancelsTheRun) {
  Fixture fx;
  ASSERT_TRUE(fx.session);
  api::RunOptions ro;
  ASSERT_EQ(api::RunOptions::create(&ro), OP_STATUS_OK);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(ro.terminate(), OP_STATUS_OK);
  });
  Feeds huge(int64_t(1) << 62);
  const auto t0 = Clock::now();
  EXPECT_EQ(fx.session.run(huge.in, 3, ro), OP_STATUS_CANCELLED);
  EXPECT_LT(seconds_since(t0), 2.0);
  stopper.join();
  EXPECT_NE(std::string(api::last_error()).find("terminate flag"), std::string::npos)
      << api::last_error();
  EXPECT_STREQ(op_status_code_name(OP_STATUS_CANCELLED), "cancelled");
  // Still set: a run with these options stops at once; cleared, it runs.
  Feeds small(5);
  EXPECT_EQ(fx.session.run(small.in, 3, ro), OP_STATUS_CANCELLED);
  ASSERT_EQ(ro.terminate(false), OP_STATUS_OK);
  EXPECT_EQ(fx.session.run(small.in, 3, ro), OP_STATUS_OK) << api::last_error();
  EXPECT_EQ(fx.short_run(), 7.0f);
}

TEST(CApiRunOptions, BadArguments) {
  EXPECT_EQ(op_run_options_create(nullptr), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(api::last_error()), "op_run_options_create: out is null");
  EXPECT_EQ(op_run_options_set_deadline_ms(nullptr, 5), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_run_options_set_terminate(nullptr, 1), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_session_run_with_options(nullptr, nullptr, 0, nullptr), OP_STATUS_INVALID_ARGUMENT);
  api::RunOptions ro;
  ASSERT_EQ(api::RunOptions::create(&ro), OP_STATUS_OK);
  EXPECT_EQ(op_run_options_set_terminate(ro.get(), 2), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(api::last_error()),
            "op_run_options_set_terminate: terminate must be 0 or 1, got 2");
  op_run_options_free(nullptr);  // ignored
}

}  // namespace
}  // namespace onnx_prepack
