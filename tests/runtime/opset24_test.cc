// Default-domain opset 24 (issue 20): the session accepts it (and refuses 25 by
// number), the new element type FLOAT8E8M0 is refused by name wherever it
// appears, and the operators new at 24 (Swish, TensorScatter) give the ONNX
// answer and refuse hostile inputs with an error naming the node and the rule.
// Attention-24 is tests/runtime/attention_test.cc; agreement with ONNX Runtime
// for all three is tests/runtime/attention_vs_ort.py.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "testing/one_node_run.h"

namespace onnx_prepack::runtime {
namespace {

using testing::expect_error;
using testing::Fed;
using testing::values;

constexpr int32_t kFloat8E8M0 = 24;  // TensorProto.FLOAT8E8M0 (opset 24)

// One node of the default domain at opset 24 (testing::OneNodeModel).
struct OneNode : testing::OneNodeModel {
  explicit OneNode(const std::string& op, int opset = 24)
      : OneNodeModel(op, "n24", "", opset, false, 11) {}
};

Result<std::vector<HostTensor>> plan_and_run(const testing::OneNodeModel& model,
                                             const std::map<std::string, Fed>& feeds) {
  return testing::plan_and_run_model(model.m, feeds);
}

const std::vector<float> kX6 = {-3, -0.5f, 0, 0.5f, 2, 40};

TEST(Opset24, TheSessionAcceptsOpset24AndRefuses25) {
  for (int opset : {24, 25}) {
    OneNode m("Relu", opset);
    m.input("x", kFloat, {6}).output("y");
    auto r = plan_and_run(m, {{"x", {kFloat, {6}, kX6.data()}}});
    if (opset == 24) {
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 0, 0, 0.5f, 2, 40}));
    } else {
      expect_error(r, {"default-domain opset 25 is not supported (1 to 24)"});
    }
  }
}

TEST(Opset24, Float8E8M0IsRefusedByName) {
  {
    OneNode m("Identity");
    m.input("x", kFloat8E8M0, {4}).output("y");
    std::vector<uint8_t> x = {127, 128, 0, 255};
    expect_error(plan_and_run(m, {{"x", {kFloat8E8M0, {4}, x.data()}}}),
                 {"graph input 'x'", "element type float8e8m0 is not supported"});
  }
  {
    OneNode m("DequantizeLinear");  // an E8M0 scale (initializer), new at 24
    m.input("x", kUint8, {4}).output("y");
    auto* s = m.g->add_initializer();
    s->set_name("s");
    s->set_data_type(kFloat8E8M0);
    s->set_raw_data(std::string(1, char(127)));
    m.n->add_input("s");
    std::vector<uint8_t> x = {0, 1, 2, 3};
    expect_error(plan_and_run(m, {{"x", {kUint8, {4}, x.data()}}}),
                 {"'s'", "element type float8e8m0 is not supported"});
  }
  {
    OneNode m("Cast");
    m.input("x", kFloat, {6}).output("y").attr_int("to", kFloat8E8M0);
    m.attr_string("round_mode", "up");
    expect_error(plan_and_run(m, {{"x", {kFloat, {6}, kX6.data()}}}),
                 {"node 'n24' (Cast)", "float8e8m0"});
  }
}

TEST(Opset24, SwishIsXTimesSigmoidOfAlphaX) {
  for (float alpha : {1.0f, 0.25f, -2.0f}) {
    OneNode m("Swish");
    m.input("x", kFloat, {6}).output("y");
    if (alpha != 1.0f) m.attr_float("alpha", alpha);
    auto r = plan_and_run(m, {{"x", {kFloat, {6}, kX6.data()}}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const std::vector<float> y = values<float>((*r)[0]);
    for (size_t i = 0; i < kX6.size(); ++i) {
      const double x = kX6[i], want = x / (1.0 + std::exp(-double(alpha) * x));
      EXPECT_NEAR(y[i], want, 1e-6 * (1 + std::fabs(want))) << "alpha " << alpha << " x " << x;
      EXPECT_TRUE(std::isfinite(y[i]));
    }
  }
  OneNode old("Swish", 23);
  old.input("x", kFloat, {6}).output("y");
  expect_error(plan_and_run(old, {{"x", {kFloat, {6}, kX6.data()}}}),
               {"Swish is an operator of opset 24 and later"});
}

// past [2, 1, 4, 1] (batch, heads, max_seq, head), update [2, 1, 2, 1].
struct Scatter {
  std::vector<float> past = {0, 1, 2, 3, 10, 11, 12, 13}, upd = {-1, -2, -3, -4};
  std::vector<int64_t> idx;
  OneNode m{"TensorScatter"};
  explicit Scatter(const std::string& mode, bool with_idx = true) {
    m.input("p", kFloat, {2, 1, 4, 1}).input("u", kFloat, {2, 1, 2, 1});
    if (with_idx) m.input("w", kInt64, {2});
    m.output("y");
    if (!mode.empty()) m.attr_string("mode", mode);
  }
  Result<std::vector<HostTensor>> run() const {
    std::map<std::string, Fed> f = {{"p", {kFloat, {2, 1, 4, 1}, past.data()}},
                                    {"u", {kFloat, {2, 1, 2, 1}, upd.data()}}};
    if (!idx.empty()) f["w"] = {kInt64, {2}, idx.data()};
    return plan_and_run(m, f);
  }
};

TEST(Opset24, TensorScatterWritesAtTheIndices) {
  {
    Scatter s("", false);  // prefill: index 0
    auto r = s.run();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-1, -2, 2, 3, -3, -4, 12, 13}));
  }
  {
    Scatter s("linear");
    s.idx = {2, 1};
    auto r = s.run();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1, -1, -2, 10, -3, -4, 13}));
  }
  {
    Scatter s("circular");  // 3 wraps to 0; -1 is 3 (numpy's mod)
    s.idx = {3, -1};
    auto r = s.run();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-2, 1, 2, -1, -4, 11, 12, -3}));
  }
}

TEST(Opset24, TensorScatterHostileInputsAreRefused) {
  for (int64_t bad : {int64_t(3), int64_t(-1), int64_t(1) << 62}) {
    Scatter s("linear");
    s.idx = {0, bad};
    expect_error(s.run(), {"node 'n24' (TensorScatter)",
                           "write_indices[1] = " + std::to_string(bad), "mode linear"});
  }
  {
    Scatter s("ring");
    s.idx = {0, 0};
    expect_error(s.run(), {"mode 'ring' must be linear or circular"});
  }
  {
    Scatter s("");
    s.m.attr_int("axis", 0);
    s.idx = {0, 0};
    expect_error(s.run(), {"must name a dimension other than the batch"});
  }
  {
    OneNode m("TensorScatter");  // an update longer than the cache
    m.input("p", kFloat, {1, 2, 1}).input("u", kFloat, {1, 3, 1}).output("y");
    std::vector<float> p = {1, 2}, u = {3, 4, 5};
    expect_error(plan_and_run(m, {{"p", {kFloat, {1, 2, 1}, p.data()}},
                                  {"u", {kFloat, {1, 3, 1}, u.data()}}}),
                 {"update [1, 3, 1] must be past_cache [1, 2, 1]"});
  }
  {
    OneNode m("TensorScatter", 23);
    m.input("p", kFloat, {1, 2, 1}).input("u", kFloat, {1, 1, 1}).output("y");
    std::vector<float> p = {1, 2}, u = {3};
    expect_error(plan_and_run(m, {{"p", {kFloat, {1, 2, 1}, p.data()}},
                                  {"u", {kFloat, {1, 1, 1}, u.data()}}}),
                 {"TensorScatter is an operator of opset 24 and later"});
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
