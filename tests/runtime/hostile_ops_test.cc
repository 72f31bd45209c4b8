// Hostile single-node models (issue 18): attribute and index values that used
// to read or write out of bounds, overflow, hang or give a wrong answer. Each
// must fail with an error that names the node and the rule, or give the
// ONNX-correct output.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <map>

#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// A graph of one node named `name` built up by the test.
struct OneNode {
  onnx::ModelProto m;
  onnx::GraphProto* g = nullptr;
  onnx::NodeProto* n = nullptr;

  OneNode(const std::string& op, const std::string& name, int opset = 13) {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name(op);
    n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
  }
  // A graph input feeding the node's next input.
  OneNode& input(const std::string& name, int32_t dtype, const Shape& shape) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto* sh = tt->mutable_shape();
    for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
    n->add_input(name);
    return *this;
  }
  // An int64 initializer feeding the node's next input.
  OneNode& ints(const std::string& name, const std::vector<int64_t>& v, bool scalar = false) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(kInt64);
    if (!scalar) t.add_dims(int64_t(v.size()));
    for (int64_t x : v) t.add_int64_data(x);
    *g->add_initializer() = t;
    n->add_input(name);
    return *this;
  }
  OneNode& output(const std::string& name) {
    g->add_output()->set_name(name);
    n->add_output(name);
    return *this;
  }
  onnx::AttributeProto* attr(const std::string& name, onnx::AttributeProto::AttributeType t) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  }
  OneNode& attr_int(const std::string& name, int64_t v) {
    attr(name, onnx::AttributeProto::INT)->set_i(v);
    return *this;
  }
  OneNode& attr_float(const std::string& name, float v) {
    attr(name, onnx::AttributeProto::FLOAT)->set_f(v);
    return *this;
  }
  OneNode& attr_ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = attr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
};

// A fed input: type, shape and bytes.
struct Fed {
  int32_t dtype;
  Shape shape;
  const void* data;
};

// Plans (and runs, when planning succeeds) the model on `feeds`; the first
// failure, or the outputs.
Result<std::vector<HostTensor>> plan_and_run(const OneNode& model,
                                             const std::map<std::string, Fed>& feeds) {
  auto fm = std::shared_ptr<const format::Model>(format::Model::from_proto(model.m, "."));
  OP_ASSIGN_OR_RETURN(auto s, Session::create(fm, {}));
  std::map<std::string, Session::Feed> plan_feeds;
  std::map<std::string, Tensor> run_feeds;
  for (const auto& [name, f] : feeds) {
    plan_feeds[name] = Session::Feed{f.dtype, f.shape, nullptr};
    run_feeds[name] = Tensor{f.dtype, f.shape, const_cast<void*>(f.data)};
  }
  OP_RETURN_IF_ERROR(testing::plan_status(s->plan(plan_feeds)));
  return s->run(run_feeds);
}

// Expects a failure whose message holds every one of `parts`.
void expect_error(const Result<std::vector<HostTensor>>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok()) << "expected an error with '" << parts.front() << "'";
  const std::string& msg = r.status().message();
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
}

template <typename T>
std::vector<T> values(const HostTensor& t) {
  return std::vector<T>(t.as<T>(), t.as<T>() + t.numel());
}

const std::vector<float> kX6 = {1, 2, 3, 4, 5, 6};  // [2, 3]

// ---- 1. GatherElements / ScatterElements ----

TEST(HostileOps, GatherElementsIndicesLargerThanDataOffTheAxisAreRefused) {
  OneNode m("GatherElements", "ge");
  m.input("X", kFloat, {2, 3}).input("I", kInt64, {3, 1}).output("Y").attr_int("axis", 1);
  std::vector<int64_t> idx = {0, 0, 0};
  expect_error(
      plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}, {"I", {kInt64, {3, 1}, idx.data()}}}),
      {"node 'ge' (GatherElements)", "exceed data", "axis 0 (3 > 2)"});
}

TEST(HostileOps, ScatterElementsIndicesLargerThanDataOffTheAxisAreRefused) {
  OneNode m("ScatterElements", "se");
  m.input("X", kFloat, {2, 3})
      .input("I", kInt64, {1, 4})
      .input("U", kFloat, {1, 4})
      .output("Y")
      .attr_int("axis", 0);
  std::vector<int64_t> idx = {0, 0, 0, 0};
  std::vector<float> upd = {9, 9, 9, 9};
  expect_error(plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}},
                                {"I", {kInt64, {1, 4}, idx.data()}},
                                {"U", {kFloat, {1, 4}, upd.data()}}}),
               {"node 'se' (ScatterElements)", "exceed data", "axis 1 (4 > 3)"});
}

TEST(HostileOps, GatherElementsRunTimeIndexOutOfRangeFailsTheRun) {
  OneNode m("GatherElements", "ge");
  m.input("X", kFloat, {2, 3}).input("I", kInt64, {2, 1}).output("Y").attr_int("axis", 1);
  std::vector<int64_t> good = {-1, 1};
  auto r =
      plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}, {"I", {kInt64, {2, 1}, good.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 5}));
  std::vector<int64_t> bad = {0, 3};
  expect_error(
      plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}, {"I", {kInt64, {2, 1}, bad.data()}}}),
      {"node 'ge' (GatherElements)", "index 3 is out of range for dimension 3"});
}

TEST(HostileOps, ScatterElementsRunTimeIndexOutOfRangeFailsTheRun) {
  OneNode m("ScatterElements", "se");
  m.input("X", kFloat, {2, 3})
      .input("I", kInt64, {1, 2})
      .input("U", kFloat, {1, 2})
      .output("Y")
      .attr_int("axis", 0);
  std::vector<float> upd = {7, 8};
  std::vector<int64_t> good = {-1, 0};
  auto r = plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}},
                            {"I", {kInt64, {1, 2}, good.data()}},
                            {"U", {kFloat, {1, 2}, upd.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 8, 3, 7, 5, 6}));
  std::vector<int64_t> bad = {-3, 0};
  expect_error(plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}},
                                {"I", {kInt64, {1, 2}, bad.data()}},
                                {"U", {kFloat, {1, 2}, upd.data()}}}),
               {"node 'se' (ScatterElements)", "index -3 is out of range for dimension 2"});
}

// ---- 2. Gather ----

TEST(HostileOps, GatherRunTimeIndexOutOfRangeFailsTheRun) {
  OneNode m("Gather", "ga");
  m.input("X", kFloat, {2, 3}).input("I", kInt64, {2}).output("Y").attr_int("axis", 1);
  std::vector<int64_t> good = {-1, 0};
  auto r =
      plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}, {"I", {kInt64, {2}, good.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 1, 6, 4}));
  for (int64_t i : {int64_t(3), int64_t(-4), kMax}) {
    std::vector<int64_t> bad = {0, i};
    expect_error(
        plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}, {"I", {kInt64, {2}, bad.data()}}}),
        {"node 'ga' (Gather)", "index " + std::to_string(i) + " is out of range for dimension 3"});
  }
}

// ---- 3. TfIdfVectorizer ----

OneNode tfidf(const std::vector<int64_t>& indexes, int64_t max_gram, int64_t max_skip) {
  OneNode m("TfIdfVectorizer", "tf", 9);
  m.input("X", kInt64, {5}).output("Y");
  m.attr_int("min_gram_length", 1).attr_int("max_gram_length", max_gram);
  m.attr_int("max_skip_count", max_skip);
  m.attr("mode", onnx::AttributeProto::STRING)->set_s("TF");
  // Unigrams 1 and 2, the bigram (1, 3).
  m.attr_ints("ngram_counts", {0, 2}).attr_ints("ngram_indexes", indexes);
  m.attr_ints("pool_int64s", {1, 2, 1, 3});
  return m;
}

TEST(HostileOps, TfIdfNgramIndexOutOfRangeOfTheOutputIsRefused) {
  std::vector<int64_t> x = {1, 2, 3, 1, 3};
  expect_error(plan_and_run(tfidf({0, kMax, 1}, 2, 0), {{"X", {kInt64, {5}, x.data()}}}),
               {"node 'tf' (TfIdfVectorizer)", "ngram_indexes[1] = 9223372036854775807",
                "out of range of the output"});
  expect_error(
      plan_and_run(tfidf({0, int64_t(1) << 60, 1}, 2, 0), {{"X", {kInt64, {5}, x.data()}}}),
      {"node 'tf' (TfIdfVectorizer)", "too large"});
}

TEST(HostileOps, TfIdfHugeGramLengthAndSkipCountAreBoundedByTheInput) {
  std::vector<int64_t> x = {1, 2, 3, 1, 3};
  const auto t0 = std::chrono::steady_clock::now();
  auto r = plan_and_run(tfidf({0, 1, 2}, int64_t(1) << 40, int64_t(1) << 62),
                        {{"X", {kInt64, {5}, x.data()}}});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.status().message();
  // 1 twice, 2 once; (1, 3) with skips 0 (positions 3-4), 1 (0-2) and 3 (0-4).
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 1, 3}));
  EXPECT_LT(s, 5.0);
}

// ---- 4. DepthToSpace / SpaceToDepth ----

TEST(HostileOps, DepthSpaceBlocksizeWhoseSquareOverflowsIsRefused) {
  std::vector<float> x(4, 1.0f);
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    OneNode m(op, "ds");
    m.input("X", kFloat, {1, 4, 1, 1}).output("Y").attr_int("blocksize", int64_t(1) << 32);
    expect_error(plan_and_run(m, {{"X", {kFloat, {1, 4, 1, 1}, x.data()}}}),
                 {"node 'ds' (" + std::string(op) + ")", "blocksize 4294967296 overflows"});
  }
}

// ---- 5. Trilu ----

TEST(HostileOps, TriluExtremeKKeepsOrZeroesEverything) {
  const std::vector<float> zeros(6, 0.0f);
  struct Case {
    int64_t k;
    int64_t upper;
    bool kept;
  };
  for (Case c :
       {Case{kMax, 1, false}, Case{kMax, 0, true}, Case{kMin, 1, true}, Case{kMin, 0, false}}) {
    OneNode m("Trilu", "tr", 14);
    m.input("X", kFloat, {2, 3}).input("K", kInt64, {}).output("Y").attr_int("upper", c.upper);
    auto r = plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}, {"K", {kInt64, {}, &c.k}}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(values<float>((*r)[0]), c.kept ? kX6 : zeros) << "k " << c.k << " upper " << c.upper;
  }
}

// ---- 6. Pad ----

TEST(HostileOps, PadWhoseSumWithTheDimOverflowsIsRefused) {
  std::vector<float> x = {1, 2};
  OneNode m("Pad", "pd");
  m.input("X", kFloat, {2}).ints("P", {kMax - 1, 5}).output("Y");
  expect_error(plan_and_run(m, {{"X", {kFloat, {2}, x.data()}}}),
               {"node 'pd' (Pad)", "overflow dimension 0 of size 2"});
  OneNode c("Pad", "pd");
  c.input("X", kFloat, {2}).ints("P", {kMin, kMax}).output("Y");
  expect_error(plan_and_run(c, {{"X", {kFloat, {2}, x.data()}}}),
               {"node 'pd' (Pad)", "crop dimension 0 below zero"});
}

TEST(HostileOps, PadRepeatedAxesAreRefused) {
  OneNode m("Pad", "pd", 18);
  m.input("X", kFloat, {2, 3}).ints("P", {1, 1, 1, 1}).output("Y");
  m.n->add_input("");  // no constant_value
  m.ints("A", {1, -1});
  expect_error(plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}}),
               {"node 'pd' (Pad)", "axes repeat axis 1 (given as -1)"});
}

// ---- 7. Attributes ----

TEST(HostileOps, AttributeOfTheWrongTypeIsAnError) {
  std::vector<float> x = {-2, 4};
  OneNode ok("LeakyRelu", "lr");
  ok.input("X", kFloat, {2}).output("Y").attr_float("alpha", 0.5f);
  auto r = plan_and_run(ok, {{"X", {kFloat, {2}, x.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{-1, 4}));

  OneNode m("LeakyRelu", "lr");
  m.input("X", kFloat, {2}).output("Y").attr_int("alpha", 1);
  expect_error(plan_and_run(m, {{"X", {kFloat, {2}, x.data()}}}),
               {"node 'lr' (LeakyRelu)", "attribute 'alpha' must be FLOAT, got INT"});
}

TEST(HostileOps, RepeatedAttributeNameIsAnError) {
  std::vector<float> x = {-2, 4};
  OneNode m("LeakyRelu", "lr");
  m.input("X", kFloat, {2}).output("Y").attr_float("alpha", 0.5f).attr_float("alpha", 0.25f);
  expect_error(plan_and_run(m, {{"X", {kFloat, {2}, x.data()}}}),
               {"node 'lr' (LeakyRelu)", "attribute 'alpha' is given more than once"});
}

// ---- 8. Split, LRN, MaxUnpool, MaxPool, ConvTranspose ----

TEST(HostileOps, SplitNumOutputsLargerThanTheDimIsRefused) {
  OneNode m("Split", "sp", 18);
  m.input("X", kFloat, {2, 3}).attr_int("axis", 1).attr_int("num_outputs", 4);
  for (const char* y : {"Y0", "Y1", "Y2", "Y3"}) m.output(y);
  expect_error(plan_and_run(m, {{"X", {kFloat, {2, 3}, kX6.data()}}}),
               {"node 'sp' (Split)", "num_outputs 4 is larger than the dimension being split, 3"});
}

TEST(HostileOps, LrnEvenSizeIsRefused) {
  std::vector<float> x(4, 1.0f);
  OneNode m("LRN", "lrn");
  m.input("X", kFloat, {1, 4, 1, 1}).output("Y").attr_int("size", 2);
  expect_error(plan_and_run(m, {{"X", {kFloat, {1, 4, 1, 1}, x.data()}}}),
               {"node 'lrn' (LRN)", "size must be positive and odd, got 2"});
}

TEST(HostileOps, MaxUnpoolZeroKernelIsRefused) {
  std::vector<float> x(2, 1.0f);
  std::vector<int64_t> idx = {0, 1};
  OneNode m("MaxUnpool", "mu", 11);
  m.input("X", kFloat, {1, 1, 2}).input("I", kInt64, {1, 1, 2}).output("Y");
  m.attr_ints("kernel_shape", {0}).attr_ints("strides", {1});
  expect_error(
      plan_and_run(m,
                   {{"X", {kFloat, {1, 1, 2}, x.data()}}, {"I", {kInt64, {1, 1, 2}, idx.data()}}}),
      {"node 'mu' (MaxUnpool)", "kernel_shape[0] = 0", "kernel and stride must be positive"});
}

TEST(HostileOps, MaxPoolPadsNotSmallerThanTheKernelAreRefused) {
  std::vector<float> x = {1, 2, 3, 4};
  OneNode m("MaxPool", "mp", 12);
  m.input("X", kFloat, {1, 1, 4}).output("Y");
  m.attr_ints("kernel_shape", {2}).attr_ints("pads", {2, 0});
  expect_error(plan_and_run(m, {{"X", {kFloat, {1, 1, 4}, x.data()}}}),
               {"node 'mp' (MaxPool)", "pads 2 / 0", "smaller than kernel_shape 2"});
  OneNode ok("MaxPool", "mp", 12);
  ok.input("X", kFloat, {1, 1, 4}).output("Y");
  ok.attr_ints("kernel_shape", {2}).attr_ints("pads", {1, 1});
  auto r = plan_and_run(ok, {{"X", {kFloat, {1, 1, 4}, x.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, 4, 4}));
}

TEST(HostileOps, ConvTransposeNegativeOutputShapeIsRefused) {
  std::vector<float> x = {1, 2};
  std::vector<float> w = {1, 1};
  OneNode m("ConvTranspose", "ct");
  m.input("X", kFloat, {1, 1, 2}).input("W", kFloat, {1, 1, 2}).output("Y");
  m.attr_ints("output_shape", {-5});
  expect_error(
      plan_and_run(m, {{"X", {kFloat, {1, 1, 2}, x.data()}}, {"W", {kFloat, {1, 1, 2}, w.data()}}}),
      {"node 'ct' (ConvTranspose)", "output_shape[0] = -5 is negative"});
}

// ---- 9. Range ----

TEST(HostileOps, Int64RangeBeyondTwoPow53CountsExactly) {
  const int64_t p53 = int64_t(1) << 53;
  OneNode m("Range", "rg", 11);
  // Through doubles 2^53 + 1 rounds to 2^53 and the count comes out 4.
  m.ints("S", {p53 + 1}, true).ints("L", {p53 + 4}, true).ints("D", {1}, true).output("Y");
  auto r = plan_and_run(m, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{p53 + 1, p53 + 2, p53 + 3}));

  // The whole int64 range in steps of 2^62: start + i * delta never overflows.
  OneNode w("Range", "rg", 11);
  w.ints("S", {kMin}, true).ints("L", {kMax}, true).ints("D", {int64_t(1) << 62}, true);
  w.output("Y");
  auto rw = plan_and_run(w, {});
  ASSERT_TRUE(rw.ok()) << rw.status().message();
  EXPECT_EQ(values<int64_t>((*rw)[0]), (std::vector<int64_t>{kMin, kMin / 2, 0, int64_t(1) << 62}));

  OneNode d("Range", "rg", 11);
  d.ints("S", {kMax}, true).ints("L", {kMin}, true).ints("D", {kMin}, true).output("Y");
  auto rd = plan_and_run(d, {});
  ASSERT_TRUE(rd.ok()) << rd.status().message();
  // Down from INT64_MAX by 2^63: INT64_MAX and -1 (above the limit INT64_MIN).
  EXPECT_EQ(values<int64_t>((*rd)[0]), (std::vector<int64_t>{kMax, -1}));
}

}  // namespace
}  // namespace onnx_prepack::runtime
