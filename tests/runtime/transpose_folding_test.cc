// Transpose folding (runtime/transpose_folding.h) on graphs shaped like NHWC
// exports: Transpose(0,3,1,2) -> Conv -> Transpose(0,2,3,1) with Add / Relu /
// residual Adds / Concat between the pairs. Outputs are bitwise equal with the
// pass on and off (1 and 3 threads), and the plan keeps exactly the Transposes
// that graph inputs, graph outputs and other readers need.
#include "runtime/transpose_folding.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "base/thread_pool.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

const std::vector<int64_t> kToNchw = {0, 3, 1, 2};
const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};

struct Graph {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  int counter = 0;
  explicit Graph(int opset = 13) : g(m.mutable_graph()) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    g->set_name("nhwc");
  }
  void input(const std::string& name, const Shape& s) {
    testing::add_tensor_input(g, name, {s.begin(), s.end()});
  }
  void output(const std::string& name) { testing::add_tensor_output(g, name); }
  std::string init(const Shape& s, uint32_t seed) {
    const std::string name = "c" + std::to_string(counter++);
    auto v = testing::pseudo_random_floats(size_t(shape_numel(s)), seed);
    *g->add_initializer() = testing::float_tensor(name, s, v);
    return name;
  }
  std::string node(const std::string& op, std::vector<std::string> in,
                   const std::string& out = "") {
    const std::string name = out.empty() ? op + std::to_string(counter++) : out;
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    n->add_output(name);
    return name;
  }
  std::string transpose(const std::string& x, const std::vector<int64_t>& perm,
                        const std::string& out = "") {
    const std::string y = node("Transpose", {x}, out);
    auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
    a->set_name("perm");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t p : perm) a->add_ints(p);
    return y;
  }
  std::string concat(std::vector<std::string> in, int64_t axis) {
    const std::string y = node("Concat", std::move(in));
    auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
    return y;
  }
  // NHWC x -> Transpose -> Conv 3x3 (pads 1, bias) -> Transpose: NHWC [.., cout].
  std::string conv_block(const std::string& x, int64_t cin, int64_t cout) {
    const std::string t = transpose(x, kToNchw);
    const std::string w = init({cout, cin, 3, 3}, uint32_t(counter + 100));
    const std::string b = init({cout}, uint32_t(counter + 200));
    const std::string c = node("Conv", {t, w, b});
    auto* n = g->mutable_node(g->node_size() - 1);
    auto* pads = n->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    return transpose(c, kToNhwc);
  }
};

std::vector<float> awkward_floats(size_t n, uint32_t seed) {
  auto v = testing::pseudo_random_floats(n, seed);
  for (auto& x : v) x *= 4.0f;
  const float special[] = {
      std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(), -0.0f, std::numeric_limits<float>::denorm_min()};
  for (size_t i = 0; i < n; i += 41) v[i] = special[(i / 41) % 5];
  return v;
}

struct Outcome {
  std::vector<HostTensor> outputs;
  PlanStats stats;
};

Outcome run(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes, bool fold,
            size_t threads) {
  base::ThreadPool pool(threads);
  SessionOptions opts;
  opts.pool = &pool;
  opts.fold_transposes = fold;
  auto model = std::shared_ptr<const format::Model>(format::Model::from_proto(proto, "."));
  auto s = Session::create(model, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  std::map<std::string, Session::Feed> feeds;
  std::vector<std::vector<float>> data;
  std::map<std::string, Tensor> inputs;
  uint32_t seed = 7;
  for (const auto& [name, shape] : shapes) {
    feeds[name] = {kFloat, shape, nullptr};
    data.push_back(awkward_floats(size_t(shape_numel(shape)), seed++));
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

// Plans with the pass off and on (1 and 3 threads): the Transposes left are
// `plain` and `folded`, and every output matches bit for bit.
void expect_folding(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes,
                    size_t plain_transposes, size_t folded_transposes) {
  const Outcome plain = run(proto, shapes, false, 1);
  EXPECT_EQ(plain.stats.transposes, plain_transposes);
  EXPECT_EQ(plain.stats.transposes_folded, 0u);
  ASSERT_FALSE(plain.outputs.empty());
  for (size_t threads : {1, 3}) {
    const Outcome folded = run(proto, shapes, true, threads);
    EXPECT_EQ(folded.stats.transposes, folded_transposes);
    EXPECT_EQ(folded.stats.transposes_folded, plain_transposes - folded_transposes);
    ASSERT_EQ(folded.outputs.size(), plain.outputs.size());
    for (size_t i = 0; i < plain.outputs.size(); ++i) {
      EXPECT_EQ(folded.outputs[i].shape(), plain.outputs[i].shape()) << "output " << i;
      ASSERT_EQ(folded.outputs[i].nbytes(), plain.outputs[i].nbytes());
      EXPECT_EQ(
          std::memcmp(folded.outputs[i].data(), plain.outputs[i].data(), plain.outputs[i].nbytes()),
          0)
          << "output " << i << " with " << threads << " threads";
    }
  }
}

TEST(TransposePerms, ComposeInvertAndPermute) {
  EXPECT_TRUE(is_identity_perm(compose_perms(kToNchw, kToNhwc)));
  EXPECT_TRUE(is_identity_perm(compose_perms(kToNhwc, kToNchw)));
  EXPECT_EQ(inverse_perm(kToNchw), kToNhwc);
  EXPECT_FALSE(is_identity_perm(compose_perms(kToNchw, kToNchw)));
  // Transposing by (0,3,1,2) then (0,2,1,3) is one transpose by (0,1,3,2).
  EXPECT_EQ(compose_perms(kToNchw, {0, 2, 1, 3}), (std::vector<int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(permute_shape({1, 16, 12, 8}, kToNchw), (std::vector<int64_t>{1, 8, 16, 12}));
  EXPECT_EQ(layout_role("", "Relu"), LayoutRole::kUnary);
  EXPECT_EQ(layout_role("ai.onnx", "Add"), LayoutRole::kBroadcast);
  EXPECT_EQ(layout_role("", "Concat"), LayoutRole::kConcat);
  EXPECT_EQ(layout_role("", "Conv"), LayoutRole::kNone);
  EXPECT_EQ(layout_role("com.microsoft", "Relu"), LayoutRole::kNone);
}

// Three blocks of Transpose -> Conv -> Transpose -> Add(bias [C]) -> Relu: the
// first Transpose (of the input) and the last (to the output) stay.
TEST(TransposeFolding, ConvChainKeepsOnlyTheInputAndOutputTransposes) {
  Graph g;
  g.input("X", {1, 12, 10, 3});
  std::string x = "X";
  int64_t cin = 3;
  for (int64_t cout : {8, 16, 8}) {
    x = g.conv_block(x, cin, cout);
    x = g.node("Add", {x, g.init({cout}, uint32_t(cout))});
    x = g.node("Relu", {x});
    cin = cout;
  }
  g.node("Identity", {x}, "Y");
  g.output("Y");
  expect_folding(g.m, {{"X", {1, 12, 10, 3}}}, 6, 2);
}

// A residual block: the skip value feeds a Transpose (cancelled) and the
// residual Add, whose two operands carry the same Transpose.
TEST(TransposeFolding, ResidualAddOfTwoTransposedValuesFolds) {
  Graph g;
  g.input("X", {2, 9, 11, 4});
  std::string r0 = g.node("Relu", {g.node("Add", {g.conv_block("X", 4, 8), g.init({8}, 1)})});
  std::string r1 = g.node("Relu", {g.node("Add", {g.conv_block(r0, 8, 8), g.init({8}, 2)})});
  std::string s = g.node("Relu", {g.node("Add", {r0, r1})});
  std::string y = g.conv_block(s, 8, 4);
  g.node("Sigmoid", {y}, "Y");
  g.output("Y");
  expect_folding(g.m, {{"X", {2, 9, 11, 4}}}, 6, 2);
}

// Constants broadcast from rank 0, 1, 3 and 4 (a per-channel [1,1,1,C], a
// full [1,H,W,C] and a [1,H,1,1] row) are transposed at plan time; Clip's
// bounds stay scalars.
TEST(TransposeFolding, BroadcastConstantsOfEveryRankAreTransposedAtPlanTime) {
  Graph g;
  g.input("X", {1, 7, 9, 5});
  std::string x = g.conv_block("X", 5, 6);
  x = g.node("Mul", {x, g.init({6}, 3)});                          // rank 1
  x = g.node("Add", {g.init({1, 1, 6}, 4), x});                    // rank 3, constant first
  x = g.node("Sub", {x, g.init({1, 7, 9, 6}, 5)});                 // rank 4, full
  x = g.node("Div", {x, g.init({1, 7, 1, 1}, 6)});                 // rank 4, one value per row
  x = g.node("Max", {x, g.init({}, 7), g.init({1, 1, 1, 6}, 8)});  // variadic
  x = g.node("Clip", {x, g.init({}, 9), g.init({}, 10)});
  x = g.node("Tanh", {x});
  x = g.conv_block(x, 6, 3);
  g.node("Identity", {x}, "Y");
  g.output("Y");
  expect_folding(g.m, {{"X", {1, 7, 9, 5}}}, 4, 2);
}

// The Transpose's output is also read by a ReduceSum (a second graph output):
// the inverse Transpose after it still goes, the Transpose itself stays.
TEST(TransposeFolding, ValueReadElsewhereKeepsItsTranspose) {
  Graph g;
  g.input("X", {1, 8, 8, 4});
  std::string y = g.conv_block("X", 4, 4);
  g.node("ReduceSum", {y}, "S");
  std::string z = g.conv_block(y, 4, 4);
  g.node("Relu", {z}, "Y");
  g.output("Y");
  g.output("S");
  expect_folding(g.m, {{"X", {1, 8, 8, 4}}}, 4, 3);
}

// A graph output in the middle keeps its NHWC layout: the Transpose that
// makes it stays, and the Conv after it reads the NCHW value.
TEST(TransposeFolding, GraphOutputInTheMiddleKeepsItsLayout) {
  Graph g;
  g.input("X", {1, 6, 10, 3});
  std::string a = g.node("Add", {g.conv_block("X", 3, 5), g.init({5}, 11)});
  g.node("Relu", {a}, "Mid");
  std::string y = g.conv_block("Mid", 5, 2);
  g.node("Add", {y, g.init({2}, 12)}, "Y");
  g.output("Mid");
  g.output("Y");
  // Left: the input's Transpose, the one making Mid, the one making Y.
  expect_folding(g.m, {{"X", {1, 6, 10, 3}}}, 4, 3);
}

// A graph output that is itself the Transpose's output: it stays, its inverse
// reader is cancelled.
TEST(TransposeFolding, TransposeWhoseOutputIsAGraphOutputStays) {
  Graph g;
  g.input("X", {1, 5, 6, 3});
  std::string y = g.conv_block("X", 3, 4);  // NHWC, a graph output
  std::string z = g.transpose(y, kToNchw);
  g.node("Relu", {z}, "Z");
  g.node("Identity", {y}, "Y");
  g.output("Y");
  g.output("Z");
  expect_folding(g.m, {{"X", {1, 5, 6, 3}}}, 3, 2);
}

// Two branches concatenated on the NHWC channel axis (-1 and 3): Concat runs
// on the NCHW channel axis and every inner Transpose goes.
TEST(TransposeFolding, ConcatOnTheChannelAxisFolds) {
  for (int64_t axis : {3, -1}) {
    Graph g;
    g.input("X", {1, 8, 6, 3});
    std::string a = g.node("Relu", {g.conv_block("X", 3, 4)});
    std::string b = g.node("Relu", {g.conv_block("X", 3, 2)});
    std::string c = g.concat({a, b}, axis);
    std::string y = g.conv_block(c, 6, 3);
    g.node("Identity", {y}, "Y");
    g.output("Y");
    // The two input Transposes read the same X: both stay, as does the last one.
    expect_folding(g.m, {{"X", {1, 8, 6, 3}}}, 6, 3);
  }
}

// Pad in NHWC between two Conv blocks (an explicit 'SAME' padding): its pads,
// an input since opset 11 and an attribute before, are remapped to NCHW.
TEST(TransposeFolding, PadBetweenBlocksFoldsWithItsPadsRemapped) {
  for (int opset : {13, 10}) {
    Graph g(opset);
    g.input("X", {1, 7, 6, 3});
    std::string y = g.conv_block("X", 3, 4);
    // NHWC pads: H begins 1, W begins 2, C ends 1, H ends 2, W ends 0.
    const std::vector<int64_t> pads = {0, 1, 2, 0, 0, 2, 0, 1};
    std::string p;
    if (opset >= 11) {
      auto* t = g.g->add_initializer();
      t->set_name("pads");
      t->set_data_type(kInt64);
      t->add_dims(8);
      for (int64_t v : pads) t->add_int64_data(v);
      p = g.node("Pad", {y, "pads", g.init({}, 21)});
    } else {
      p = g.node("Pad", {y});
      auto* a = g.g->mutable_node(g.g->node_size() - 1)->add_attribute();
      a->set_name("pads");
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : pads) a->add_ints(v);
      auto* value = g.g->mutable_node(g.g->node_size() - 1)->add_attribute();
      value->set_name("value");
      value->set_type(onnx::AttributeProto::FLOAT);
      value->set_f(0.5f);
    }
    std::string z = g.conv_block(p, 5, 2);
    g.node("Relu", {z}, "Y");
    g.output("Y");
    expect_folding(g.m, {{"X", {1, 7, 6, 3}}}, 4, 2);
  }
}

// Transposes that do not undo each other become one; an identity perm goes.
TEST(TransposeFolding, ConsecutiveTransposesMergeAndIdentityGoes) {
  Graph g;
  g.input("X", {2, 3, 4, 5});
  std::string a = g.transpose("X", kToNchw);
  std::string b = g.transpose(a, {0, 2, 1, 3});
  std::string c = g.transpose(g.node("Exp", {b}), {0, 1, 2, 3});
  g.node("Neg", {c}, "Y");
  g.output("Y");
  expect_folding(g.m, {{"X", {2, 3, 4, 5}}}, 3, 1);
}

// An operand the pass cannot transpose (a fed NHWC value) stops it there:
// nothing changes but the inverse pair after it.
TEST(TransposeFolding, FedOperandStopsThePush) {
  Graph g;
  g.input("X", {1, 4, 4, 3});
  g.input("B", {1, 4, 4, 3});
  std::string y = g.conv_block("X", 3, 3);
  std::string s = g.node("Add", {y, "B"});
  std::string z = g.conv_block(s, 3, 2);
  g.node("Relu", {z}, "Y");
  g.output("Y");
  expect_folding(g.m, {{"X", {1, 4, 4, 3}}, {"B", {1, 4, 4, 3}}}, 4, 4);
}

}  // namespace
}  // namespace onnx_prepack::runtime
