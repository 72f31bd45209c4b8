// A run's deadline and terminate flag (runtime/run_limits.h, issue 18): a Loop
// with a fed trip count of 2^62 and a condition its body keeps true stops at
// the deadline or when another thread sets the flag, naming the node; a Loop
// run at plan time and a long Einsum stop too; the session then runs again
// with the right answer. The timing bounds are generous (2 s for a 200 ms
// deadline): they tell "stopped" from "ran on", not how fast.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "onnx_prepack/engine.hpp"
#include "runtime/run_limits.h"
#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

onnx::ValueInfoProto value(const std::string& name, int32_t type, const Shape& dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  auto* s = t->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
  return v;
}

onnx::NodeProto node(const std::string& op, std::vector<std::string> in,
                     std::vector<std::string> out) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(op + "_" + out[0]);
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  return n;
}

std::shared_ptr<const format::Model> model_of(onnx::GraphProto g) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  *m.mutable_graph() = std::move(g);
  return format::Model::from_proto(std::move(m), ".");
}

onnx::TensorProto init(const std::string& name, int32_t type, double v, bool scalar) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  if (!scalar) t.add_dims(1);
  if (type == kInt64) t.add_int64_data(int64_t(v));
  if (type == kFloat) t.add_float_data(float(v));
  if (type == kBool) t.add_int32_data(v != 0);
  return t;
}

// out = a0 + M (the body adds one per iteration and keeps its condition).
// `fed`: M, cond and a0 are graph inputs; otherwise initializers (the Loop
// then runs at plan time).
onnx::GraphProto counting_loop(bool fed, int64_t m) {
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_node() = node("Identity", {"cond"}, {"cond2"});
  *body.add_node() = node("Add", {"acc", "one"}, {"acc2"});
  *body.add_input() = value("i", kInt64, {});
  *body.add_input() = value("cond", kBool, {});
  *body.add_input() = value("acc", kFloat, {1});
  *body.add_output() = value("cond2", kBool, {});
  *body.add_output() = value("acc2", kFloat, {1});
  onnx::GraphProto g;
  g.set_name("loop");
  auto n = node("Loop", {"M", "cond", "a0"}, {"out"});
  n.set_name("runaway");
  auto* a = n.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
  *g.add_node() = n;
  *g.add_output() = value("out", kFloat, {1});
  *g.add_initializer() = init("one", kFloat, 1.0, false);
  if (fed) {
    *g.add_input() = value("M", kInt64, {});
    *g.add_input() = value("cond", kBool, {});
    *g.add_input() = value("a0", kFloat, {1});
  } else {
    *g.add_initializer() = init("M", kInt64, double(m), true);
    *g.add_initializer() = init("cond", kBool, 1, true);
    *g.add_initializer() = init("a0", kFloat, 0.0, false);
  }
  return g;
}

struct LoopFeeds {
  int64_t m;
  uint8_t cond = 1;
  float a0 = 3.0f;
  std::map<std::string, Tensor> tensors() {
    return {{"M", Tensor{kInt64, {}, &m}},
            {"cond", Tensor{kBool, {}, &cond}},
            {"a0", Tensor{kFloat, {1}, &a0}}};
  }
};

std::unique_ptr<Session> planned_fed_loop() {
  auto s = Session::create(model_of(counting_loop(true, 0)), SessionOptions{});
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return nullptr;
  Status st = testing::plan_status(
      (*s)->plan({{"M", {kInt64, {}}}, {"cond", {kBool, {}}}, {"a0", {kFloat, {1}}}}));
  EXPECT_TRUE(st.ok()) << st.message();
  return std::move(*s);
}

TEST(RunDeadline, FedHugeTripCountStopsAtTheDeadlineAndTheSessionRunsAgain) {
  std::unique_ptr<Session> s = planned_fed_loop();
  ASSERT_NE(s, nullptr);
  LoopFeeds huge{int64_t(1) << 62};
  const RunLimits limits(RunOptions{200, nullptr});
  const auto t0 = Clock::now();
  auto out = s->run(huge.tensors(), &limits);
  const double took = seconds_since(t0);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kDeadlineExceeded) << out.status().message();
  EXPECT_GE(took, 0.2);
  EXPECT_LT(took, 2.0);
  const std::string& msg = out.status().message();
  EXPECT_NE(msg.find("node 'runaway' (Loop) iteration "), std::string::npos) << msg;
  EXPECT_NE(msg.find("deadline of 200 ms"), std::string::npos) << msg;

  // The same session, no deadline: the right answer (3 + 1000).
  LoopFeeds small{1000};
  auto again = s->run(small.tensors());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->at(0).as<float>()[0], 1003.0f);
  // And with a deadline it does not reach.
  const RunLimits roomy(RunOptions{60000, nullptr});
  auto third = s->run(small.tensors(), &roomy);
  ASSERT_TRUE(third.ok()) << third.status().message();
  EXPECT_EQ(third->at(0).as<float>()[0], 1003.0f);
}

TEST(RunDeadline, TerminateFromAnotherThreadStopsTheRun) {
  std::unique_ptr<Session> s = planned_fed_loop();
  ASSERT_NE(s, nullptr);
  std::atomic<bool> terminate{false};
  const RunLimits limits(RunOptions{0, &terminate});
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    terminate.store(true);
  });
  LoopFeeds huge{int64_t(1) << 62};
  const auto t0 = Clock::now();
  auto out = s->run(huge.tensors(), &limits);
  const double took = seconds_since(t0);
  stopper.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled) << out.status().message();
  EXPECT_LT(took, 2.0);
  EXPECT_NE(out.status().message().find("terminate flag"), std::string::npos);

  // Still set: the next run with it stops before its first node.
  LoopFeeds small{10};
  auto refused = s->run(small.tensors(), &limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCancelled);
  EXPECT_NE(refused.status().message().find("node 'runaway' (Loop)"), std::string::npos)
      << refused.status().message();
  terminate.store(false);
  auto again = s->run(small.tensors(), &limits);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->at(0).as<float>()[0], 13.0f);
}

TEST(RunDeadline, LoopRunAtPlanTimeStopsThroughTheEngine) {
  // Every input an initializer: the Loop runs while the first run plans.
  auto e = Engine::open_model(model_of(counting_loop(false, int64_t(1) << 62)));
  ASSERT_TRUE(e.ok()) << e.status().message();
  const auto t0 = Clock::now();
  auto out = (*e)->run({}, RunOptions{200, nullptr});
  const double took = seconds_since(t0);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kDeadlineExceeded) << out.status().message();
  EXPECT_LT(took, 2.0);
  EXPECT_NE(out.status().message().find("(at plan time)"), std::string::npos)
      << out.status().message();
}

TEST(RunDeadline, EngineRunsAgainAfterAStoppedRun) {
  auto e = Engine::open_model(model_of(counting_loop(true, 0)));
  ASSERT_TRUE(e.ok()) << e.status().message();
  LoopFeeds huge{int64_t(1) << 62};
  auto out = (*e)->run(huge.tensors(), RunOptions{100, nullptr});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kDeadlineExceeded) << out.status().message();
  LoopFeeds small{7};
  auto again = (*e)->run(small.tensors());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->at(0).as<float>()[0], 10.0f);
}

// One Einsum node of three operands (the direct loop, 3 * 2^30 reads: seconds):
// the between-node check passes before it starts, so only the kernel's own
// polling can stop it at the deadline.
// One long kernel: a RoiAlign whose sampling grid is 60000 x 60000 points per
// output element (3.6e9, under the 2^32 work bound: tens of seconds) polls the
// deadline from inside its loop.
TEST(RunDeadline, LongRoiAlignKernelPollsTheDeadline) {
  onnx::GraphProto g;
  g.set_name("roi_align");
  auto n = node("RoiAlign", {"x", "rois", "idx"}, {"y"});
  for (const auto& [name, v] : std::vector<std::pair<const char*, int64_t>>{
           {"output_height", 1}, {"output_width", 1}, {"sampling_ratio", 60000}}) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  *g.add_node() = n;
  *g.add_input() = value("x", kFloat, {1, 1, 8, 8});
  *g.add_input() = value("rois", kFloat, {1, 4});
  *g.add_input() = value("idx", kInt64, {1});
  *g.add_output() = value("y", kFloat, {1, 1, 1, 1});
  auto s = Session::create(model_of(g), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(testing::plan_status((*s)->plan({{"x", {kFloat, {1, 1, 8, 8}}},
                                               {"rois", {kFloat, {1, 4}}},
                                               {"idx", {kInt64, {1}}}}))
                  .ok());
  std::vector<float> x(64, 1.0f), rois{0.0f, 0.0f, 7.0f, 7.0f};
  std::vector<int64_t> idx{0};
  std::map<std::string, Tensor> in{{"x", Tensor{kFloat, {1, 1, 8, 8}, x.data()}},
                                   {"rois", Tensor{kFloat, {1, 4}, rois.data()}},
                                   {"idx", Tensor{kInt64, {1}, idx.data()}}};
  const RunLimits limits(RunOptions{50, nullptr});
  const auto t0 = Clock::now();
  auto out = (*s)->run(in, &limits);
  const double took = seconds_since(t0);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kDeadlineExceeded) << out.status().message();
  EXPECT_NE(out.status().message().find("(RoiAlign)"), std::string::npos) << out.status().message();
  EXPECT_LT(took, 1.0);
}

}  // namespace
}  // namespace onnx_prepack::runtime
