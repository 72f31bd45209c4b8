// The Conv epilogue (session_fusion.cc, fuse_conv_epilogue): a Conv followed
// by a residual Add, an activation or a fused elementwise chain runs that
// chain on its output tiles while they are in cache. Every result is bitwise
// the plan without it (SessionOptions::fuse_conv_epilogue = false) and the
// plan without any fusion, with 1 and 3 threads, on ResNet- and
// MobileNetV2-style blocks of several shapes (stride 1 / 2, 1x1, 3x3 and
// depthwise filters, channels 3..96, batch 1 and 3: every Conv kernel path);
// the plan reports the fused Convs; broadcast residuals and Conv outputs with
// other readers are not fused; an NHWC export fuses after transpose folding;
// a small residual CNN agrees with ONNX Runtime within 1e-4.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/thread_pool.h"
#include "format/model_writer.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/session_run.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

struct Graph {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  uint32_t seed = 100;
  Graph() : g(m.mutable_graph()) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    g->set_name("block");
  }
  void input(const std::string& name, const Shape& s) {
    testing::add_tensor_input(g, name, {s.begin(), s.end()});
  }
  void output(const std::string& name) { testing::add_tensor_output(g, name); }
  void init(const std::string& name, const Shape& s, float scale = 1.0f) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kFloat);
    for (int64_t d : s) t->add_dims(d);
    auto v = testing::pseudo_random_floats(size_t(shape_numel(s)), seed++);
    for (float& x : v) x *= scale;
    t->set_raw_data(v.data(), v.size() * 4);
  }
  void scalar(const std::string& name, float v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kFloat);
    t->set_raw_data(&v, 4);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::string out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void integer(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  // Conv `x` (c channels) -> `out` (m channels), k x k, stride s, same padding,
  // `group`, with a bias; weights scaled so activations stay of order 1.
  void conv(const std::string& x, const std::string& out, int64_t c, int64_t m, int64_t k,
            int64_t s = 1, int64_t group = 1) {
    init(out + "_w", {m, c / group, k, k}, 1.0f / std::sqrt(float(c / group * k * k)));
    init(out + "_b", {m}, 0.1f);
    auto* n = node("Conv", {x, out + "_w", out + "_b"}, out);
    ints(n, "kernel_shape", {k, k});
    ints(n, "strides", {s, s});
    ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    if (group != 1) integer(n, "group", group);
  }
  void relu6(const std::string& x, const std::string& out) {
    if (!has_bounds) {
      scalar("zero", 0.0f);
      scalar("six", 6.0f);
      has_bounds = true;
    }
    node("Clip", {x, "zero", "six"}, out);
  }
  bool has_bounds = false;
};

enum class Mode { kNoFusion, kNoEpilogue, kEpilogue };

struct Outcome {
  std::vector<HostTensor> outputs;
  PlanStats stats;
};

std::vector<float> input_floats(size_t n, uint32_t seed, bool special) {
  auto v = testing::pseudo_random_floats(n, seed);
  if (special) {
    const float s[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(),
                       -0.0f,
                       0.0f,
                       std::numeric_limits<float>::denorm_min()};
    for (size_t i = 0; i < n; i += 41) v[i] = s[(i / 41) % 6];
  }
  return v;
}

Outcome run(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes, Mode mode,
            size_t threads, const std::string& special = "") {
  base::ThreadPool pool(threads);
  SessionOptions opts;
  opts.pool = &pool;
  opts.fuse_pointwise = mode != Mode::kNoFusion;
  opts.fuse_conv_epilogue = mode == Mode::kEpilogue;
  auto model = std::shared_ptr<const format::Model>(format::Model::from_proto(proto, "."));
  auto s = Session::create(model, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  std::map<std::string, Session::Feed> feeds;
  std::vector<std::vector<float>> data;
  std::map<std::string, Tensor> inputs;
  uint32_t seed = 11;
  for (const auto& [name, shape] : shapes) {
    feeds[name] = {kFloat, shape, nullptr};
    data.push_back(input_floats(size_t(shape_numel(shape)), seed++, name == special));
  }
  Status st = testing::plan_status((*s)->plan(feeds));
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  size_t k = 0;
  for (const auto& [name, shape] : shapes) inputs[name] = Tensor{kFloat, shape, data[k++].data()};
  auto outs = (*s)->run(inputs);
  EXPECT_TRUE(outs.ok()) << outs.status().message();
  return {outs.ok() ? std::move(*outs) : std::vector<HostTensor>{}, (*s)->stats()};
}

void expect_same(const Outcome& want, const Outcome& got, const std::string& what) {
  ASSERT_EQ(got.outputs.size(), want.outputs.size()) << what;
  for (size_t i = 0; i < want.outputs.size(); ++i) {
    ASSERT_EQ(got.outputs[i].nbytes(), want.outputs[i].nbytes()) << what;
    EXPECT_EQ(std::memcmp(got.outputs[i].data(), want.outputs[i].data(), want.outputs[i].nbytes()),
              0)
        << what << ": output " << i << " differs";
  }
}

// The epilogue plan against the plan without it and the plan without fusion,
// 1 and 3 threads; returns the epilogue plan's stats.
PlanStats expect_exact(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes,
                       const std::string& special = "") {
  const Outcome plain = run(proto, shapes, Mode::kNoFusion, 1, special);
  const Outcome apart = run(proto, shapes, Mode::kNoEpilogue, 1, special);
  EXPECT_EQ(plain.stats.conv_epilogues, 0u);
  EXPECT_EQ(apart.stats.conv_epilogues, 0u);
  expect_same(plain, apart, "fusion without the epilogue");
  Outcome fused;
  for (size_t threads : {1, 3}) {
    fused = run(proto, shapes, Mode::kEpilogue, threads, special);
    expect_same(plain, fused, "epilogue, " + std::to_string(threads) + " threads");
  }
  // Each fused Conv takes the one step after it.
  EXPECT_EQ(fused.stats.kernels + fused.stats.conv_epilogues, apart.stats.kernels);
  return fused.stats;
}

// ResNet basic block: conv3x3 -> Relu -> conv3x3 -> Add(skip) -> Relu, the skip
// the block input (stride 1, c == m) or a 1x1 projection (stride 2).
onnx::ModelProto resnet_block(int64_t n, int64_t c, int64_t m, int64_t hw, int64_t stride) {
  Graph g;
  g.input("X", {n, c, hw, hw});
  g.conv("X", "c1", c, m, 3, stride);
  g.node("Relu", {"c1"}, "r1");
  g.conv("r1", "c2", m, m, 3);
  std::string skip = "X";
  if (stride != 1 || c != m) {
    g.conv("X", "proj", c, m, 1, stride);
    skip = "proj";
  }
  g.node("Add", {"c2", skip}, "sum");
  g.node("Relu", {"sum"}, "Y");
  g.output("Y");
  return g.m;
}

TEST(ConvEpilogue, ResNetBlocksAreBitwiseTheUnfusedPlan) {
  struct Case {
    int64_t n, c, m, hw, stride;
  };
  const Case cases[] = {{1, 8, 8, 14, 1},   {3, 16, 16, 9, 1}, {1, 3, 16, 33, 2},
                        {3, 24, 48, 15, 2}, {1, 64, 64, 7, 1}, {1, 32, 64, 20, 2},
                        {3, 96, 96, 5, 1},  {1, 16, 16, 64, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE("n " + std::to_string(c.n) + " c " + std::to_string(c.c) + " m " +
                 std::to_string(c.m) + " hw " + std::to_string(c.hw) + " stride " +
                 std::to_string(c.stride));
    const PlanStats st =
        expect_exact(resnet_block(c.n, c.c, c.m, c.hw, c.stride), {{"X", {c.n, c.c, c.hw, c.hw}}});
    // conv1 + Relu, and conv2 (or the projection) + Add + Relu.
    EXPECT_EQ(st.conv_epilogues, 2u);
  }
}

// MobileNetV2 inverted residual: 1x1 expand -> Relu6 -> 3x3 depthwise (stride
// 1 or 2) -> Relu6 -> 1x1 project [-> Add(X) at stride 1 with c == out].
onnx::ModelProto mobilenet_block(int64_t n, int64_t c, int64_t expand, int64_t out, int64_t hw,
                                 int64_t stride) {
  Graph g;
  const int64_t e = c * expand;
  g.input("X", {n, c, hw, hw});
  g.conv("X", "ex", c, e, 1);
  g.relu6("ex", "ex6");
  g.conv("ex6", "dw", e, e, 3, stride, e);
  g.relu6("dw", "dw6");
  g.conv("dw6", "pr", e, out, 1);
  if (stride == 1 && c == out) {
    g.node("Add", {"X", "pr"}, "Y");  // skip first: the operand order is kept
  } else {
    g.node("Identity", {"pr"}, "Y");
  }
  g.output("Y");
  return g.m;
}

TEST(ConvEpilogue, MobileNetV2BlocksAreBitwiseTheUnfusedPlan) {
  struct Case {
    int64_t n, c, expand, out, hw, stride;
  };
  const Case cases[] = {{1, 16, 6, 16, 28, 1}, {3, 8, 6, 8, 10, 1},  {1, 24, 4, 32, 19, 2},
                        {1, 32, 3, 32, 7, 1},  {3, 4, 6, 16, 16, 2}, {1, 16, 6, 16, 56, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE("n " + std::to_string(c.n) + " c " + std::to_string(c.c) + " out " +
                 std::to_string(c.out) + " hw " + std::to_string(c.hw) + " stride " +
                 std::to_string(c.stride));
    const PlanStats st = expect_exact(mobilenet_block(c.n, c.c, c.expand, c.out, c.hw, c.stride),
                                      {{"X", {c.n, c.c, c.hw, c.hw}}});
    // expand + Relu6 and depthwise + Relu6; the projection + Add when there is one.
    EXPECT_EQ(st.conv_epilogues, c.stride == 1 && c.c == c.out ? 3u : 2u);
    EXPECT_EQ(st.fused, 2 * st.conv_epilogues);  // each Conv and its one Clip or Add
  }
}

// NaN, infinities, signed zeros and subnormals in the residual; a non-commutative
// Sub with the Conv second; a chain with a per-channel affine and a hard-swish.
TEST(ConvEpilogue, SpecialValuesOperandOrderAndLongChains) {
  for (int64_t hw : {5, 16, 23}) {
    Graph g;
    g.input("X", {2, 8, hw, hw});
    g.input("S", {2, 12, hw, hw});
    g.conv("X", "c", 8, 12, 3);
    g.node("Sub", {"S", "c"}, "d");
    g.node("Relu", {"d"}, "r");
    g.init("scale", {1, 12, 1, 1});
    g.scalar("three", 3.0f);
    g.node("Mul", {"r", "scale"}, "a");
    g.node("HardSwish", {"a"}, "h");
    g.node("Add", {"h", "three"}, "Y");
    g.output("Y");
    SCOPED_TRACE("hw " + std::to_string(hw));
    const PlanStats st = expect_exact(g.m, {{"X", {2, 8, hw, hw}}, {"S", {2, 12, hw, hw}}}, "S");
    EXPECT_EQ(st.conv_epilogues, 1u);
    // Under 64 pixels a chain is one flat row: the per-channel Mul ends it.
    EXPECT_EQ(st.kernels, hw * hw >= 64 ? 1u : 3u);
  }
}

// A value of the chain read after it is still written; the Conv's result goes
// to the chain's last value.
TEST(ConvEpilogue, ChainValuesReadLaterAreStored) {
  Graph g;
  g.input("X", {1, 6, 12, 12});
  g.input("S", {1, 6, 12, 12});
  g.conv("X", "c", 6, 6, 3);
  g.node("Add", {"c", "S"}, "sum");
  g.node("Relu", {"sum"}, "r");
  g.conv("sum", "c2", 6, 6, 1);  // reads the Add's value after the chain
  g.node("Add", {"r", "c2"}, "Y");
  g.output("Y");
  g.output("sum");
  const PlanStats st = expect_exact(g.m, {{"X", {1, 6, 12, 12}}, {"S", {1, 6, 12, 12}}});
  EXPECT_EQ(st.conv_epilogues, 2u);
}

// Not fused: a residual broadcast along a spatial axis (the chain stops before
// it), a Conv output with another reader, a Conv output that is a graph output.
TEST(ConvEpilogue, BroadcastsAndSharedOutputsAreNotFused) {
  {
    Graph g;
    g.input("X", {1, 4, 16, 16});
    g.input("B", {1, 1, 1, 16});
    g.conv("X", "c", 4, 4, 3);
    g.node("Add", {"c", "B"}, "a");
    g.node("Relu", {"a"}, "Y");
    g.output("Y");
    const PlanStats st = expect_exact(g.m, {{"X", {1, 4, 16, 16}}, {"B", {1, 1, 1, 16}}});
    EXPECT_EQ(st.conv_epilogues, 0u);
  }
  {
    Graph g;
    g.input("X", {1, 4, 16, 16});
    g.conv("X", "c", 4, 4, 3);
    g.node("Relu", {"c"}, "r");
    g.node("Sigmoid", {"c"}, "s");
    g.node("Add", {"r", "s"}, "Y");
    g.output("Y");
    const PlanStats st = expect_exact(g.m, {{"X", {1, 4, 16, 16}}});
    EXPECT_EQ(st.conv_epilogues, 0u);
  }
  {
    Graph g;
    g.input("X", {1, 4, 16, 16});
    g.conv("X", "c", 4, 4, 3);
    g.node("Relu", {"c"}, "Y");
    g.output("Y");
    g.output("c");
    const PlanStats st = expect_exact(g.m, {{"X", {1, 4, 16, 16}}});
    EXPECT_EQ(st.conv_epilogues, 0u);
  }
  {  // a per-channel operand is a row of the chain: fused
    Graph g;
    g.input("X", {1, 4, 16, 16});
    g.init("cb", {4, 1, 1});
    g.conv("X", "c", 4, 4, 3);
    g.node("Add", {"c", "cb"}, "Y");
    g.output("Y");
    const PlanStats st = expect_exact(g.m, {{"X", {1, 4, 16, 16}}});
    EXPECT_EQ(st.conv_epilogues, 1u);
  }
}

// 1-D and 3-D Convs (the blocked kernel), a Conv without bias, and a Conv
// without input channels (the bias alone).
TEST(ConvEpilogue, OtherRanksAndNoBias) {
  {
    Graph g;
    g.input("X", {2, 5, 40});
    g.input("S", {2, 7, 40});
    g.init("w", {7, 5, 3});
    auto* n = g.node("Conv", {"X", "w"}, "c");
    Graph::ints(n, "pads", {1, 1});
    g.node("Add", {"c", "S"}, "a");
    g.node("Relu", {"a"}, "Y");
    g.output("Y");
    EXPECT_EQ(expect_exact(g.m, {{"X", {2, 5, 40}}, {"S", {2, 7, 40}}}).conv_epilogues, 1u);
  }
  {
    Graph g;
    g.input("X", {1, 3, 6, 7, 8});
    g.input("S", {1, 4, 6, 7, 8});
    g.init("w", {4, 3, 3, 3, 3}, 0.2f);
    g.init("b", {4});
    auto* n = g.node("Conv", {"X", "w", "b"}, "c");
    Graph::ints(n, "pads", {1, 1, 1, 1, 1, 1});
    g.node("Add", {"S", "c"}, "a");
    g.node("Relu", {"a"}, "Y");
    g.output("Y");
    EXPECT_EQ(expect_exact(g.m, {{"X", {1, 3, 6, 7, 8}}, {"S", {1, 4, 6, 7, 8}}}).conv_epilogues,
              1u);
  }
}

// An NHWC export (tf2onnx): every Conv wrapped in Transposes, the residual Add
// and Relu in NHWC. After transpose folding the Add reads the Conv in NCHW and
// joins its epilogue; bitwise the plan without it, and without folding.
TEST(ConvEpilogue, NhwcExportFusesAfterTransposeFolding) {
  Graph g;
  g.input("X", {1, 12, 12, 8});
  auto to_nchw = [&](const std::string& x, const std::string& out) {
    Graph::ints(g.node("Transpose", {x}, out), "perm", {0, 3, 1, 2});
  };
  auto to_nhwc = [&](const std::string& x, const std::string& out) {
    Graph::ints(g.node("Transpose", {x}, out), "perm", {0, 2, 3, 1});
  };
  to_nchw("X", "t0");
  g.conv("t0", "c1", 8, 8, 3);
  to_nhwc("c1", "h");
  g.node("Relu", {"h"}, "h2");
  to_nchw("h2", "t2");
  g.conv("t2", "c2", 8, 8, 3);
  to_nhwc("c2", "t3");
  g.node("Add", {"t3", "h2"}, "sum");
  g.node("Relu", {"sum"}, "Y");
  g.output("Y");
  const PlanStats st = expect_exact(g.m, {{"X", {1, 12, 12, 8}}});
  EXPECT_GT(st.transposes_folded, 0u);
  EXPECT_EQ(st.conv_epilogues, 2u);
}

// A small residual CNN (stem, two basic blocks, one downsampling) against ONNX
// Runtime within 1e-4 of the output's largest magnitude.
TEST(ConvEpilogue, ResidualCnnAgreesWithOnnxRuntime) {
  if (!testing::ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  Graph g;
  g.input("X", {2, 3, 32, 32});
  g.conv("X", "stem", 3, 16, 3, 2);
  g.node("Relu", {"stem"}, "s");
  g.conv("s", "a1", 16, 16, 3);
  g.node("Relu", {"a1"}, "a1r");
  g.conv("a1r", "a2", 16, 16, 3);
  g.node("Add", {"a2", "s"}, "as");
  g.node("Relu", {"as"}, "b");
  g.conv("b", "b1", 16, 32, 3, 2);
  g.node("Relu", {"b1"}, "b1r");
  g.conv("b1r", "b2", 32, 32, 3);
  g.conv("b", "bp", 16, 32, 1, 2);
  g.node("Add", {"b2", "bp"}, "bs");
  g.node("Relu", {"bs"}, "Y");
  g.output("Y");
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx");
  ASSERT_TRUE(format::write_model_inline(g.m, path).ok());
  auto v = testing::pseudo_random_floats(2 * 3 * 32 * 32, 5);
  HostTensor in = HostTensor::allocate(kFloat, {2, 3, 32, 32});
  std::memcpy(in.mutable_data(), v.data(), v.size() * 4);
  ASSERT_TRUE(write_npy(dir.file("in.npy"), in.view()).ok());
  std::string log;
  ASSERT_EQ(
      testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                               path + " " + dir.file("ort") + " X=" + dir.file("in.npy"),
                           &log),
      0)
      << log;
  auto want = read_npy(dir.file("ort/Y.npy"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  base::ThreadPool two(2);
  auto got = testing::run_model(path, {{"X", &in}}, &two);
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->shape(), want->shape());
  double mx = 0, worst = 0;
  for (int64_t i = 0; i < want->numel(); ++i) {
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
    worst = std::max(worst, std::fabs(double(got->as<float>()[i]) - want->as<float>()[i]));
  }
  EXPECT_LE(worst, 1e-4 * std::max(mx, 1e-6)) << "max |diff| " << worst << ", max |ort| " << mx;
  // And the plan fused every Conv but the projection the Add's other Conv took.
  EXPECT_EQ(expect_exact(g.m, {{"X", {2, 3, 32, 32}}}).conv_epilogues, 5u);
}

}  // namespace
}  // namespace onnx_prepack::runtime
