// SimplifiedLayerNormalization, RMSNormalization, the com.microsoft Skip / Embed
// normalizations, GELU family and GatherBlockQuantized: values on small known inputs, and
// hostile nodes (bad ranks, mismatched dims, wrong types, bad attributes, indices out of
// range, huge dims) refused with an error that names the node, the rule and the values.
// Agreement with ONNX Runtime is tests/runtime/contrib_norm_vs_ort.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

constexpr int32_t kUint4 = 21, kInt4 = 22;  // TensorProto.DataType

// One node, com.microsoft unless `ms` is false (testing::OneNodeModel).
struct OneNode : testing::OneNodeModel {
  OneNode(const std::string& op, const std::string& name, bool ms = true, int opset = 17)
      : OneNodeModel(op, name, ms ? "com.microsoft" : "", opset, true, 8) {}
};

Result<std::vector<HostTensor>> plan_and_run(const testing::OneNodeModel& model,
                                             const std::map<std::string, Fed>& feeds) {
  return testing::plan_and_run_model(model.m, feeds);
}

template <typename T>
std::string bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// ---- SimplifiedLayerNormalization / RMSNormalization ----

TEST(ContribNorm, RmsNormalizationOpset23Values) {
  OneNode m("RMSNormalization", "rms", false, 23);
  m.input("X", kFloat, {2, 2}).input("S", kFloat, {2}).output("Y").attr_float("epsilon", 0.0f);
  std::vector<float> x = {3, 4, -1, 1}, s = {1, 2};
  auto r = plan_and_run(m, {{"X", {kFloat, {2, 2}, x.data()}}, {"S", {kFloat, {2}, s.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto y = values<float>((*r)[0]);
  const float inv0 = 1.0f / std::sqrt(12.5f);
  EXPECT_NEAR(y[0], 3 * inv0, 1e-6);
  EXPECT_NEAR(y[1], 8 * inv0, 1e-6);
  EXPECT_NEAR(y[2], -1.0f, 1e-6);
  EXPECT_NEAR(y[3], 2.0f, 1e-6);
}

TEST(ContribNorm, SimplifiedLayerNormInvStdVarAndBothDomains) {
  for (bool ms : {false, true}) {
    OneNode m("SimplifiedLayerNormalization", "sln", ms);
    m.input("X", kFloat, {1, 4}).input("S", kFloat, {4}).output("Y").output("inv");
    m.attr_float("epsilon", 0.0f);
    std::vector<float> x = {1, -1, 1, -1}, s = {1, 1, 1, 1};
    auto r = plan_and_run(m, {{"X", {kFloat, {1, 4}, x.data()}}, {"S", {kFloat, {4}, s.data()}}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(values<float>((*r)[0]), x);
    EXPECT_EQ((*r)[1].shape(), (Shape{1, 1}));
    EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{1.0f}));
  }
}

TEST(ContribNorm, SimplifiedLayerNormScaleOfTheWrongSizeIsRefused) {
  OneNode m("SimplifiedLayerNormalization", "sln", false);
  m.input("X", kFloat, {2, 4}).input("S", kFloat, {5}).output("Y");
  std::vector<float> x(8, 1), s(5, 1);
  expect_error(plan_and_run(m, {{"X", {kFloat, {2, 4}, x.data()}}, {"S", {kFloat, {5}, s.data()}}}),
               {"node 'sln' (SimplifiedLayerNormalization)", "scale [5]", "normalized shape [4]"});
}

TEST(ContribNorm, RmsNormalizationBadAxisTypeAndEpsilonAreRefused) {
  std::vector<float> x(8, 1), s(4, 1);
  {
    OneNode m("RMSNormalization", "rms", false, 23);
    m.input("X", kFloat, {2, 4}).input("S", kFloat, {4}).output("Y").attr_int("axis", 2);
    auto r = plan_and_run(m, {{"X", {kFloat, {2, 4}, x.data()}}, {"S", {kFloat, {4}, s.data()}}});
    expect_error(r, {"node 'rms' (RMSNormalization)", "axis"});
  }
  {
    OneNode m("RMSNormalization", "rms", false, 23);
    m.input("X", kFloat, {2, 4}).input("S", kFloat, {4}).output("Y").attr_float("epsilon", -1);
    auto r = plan_and_run(m, {{"X", {kFloat, {2, 4}, x.data()}}, {"S", {kFloat, {4}, s.data()}}});
    expect_error(r, {"node 'rms' (RMSNormalization)", "epsilon", "must be >= 0"});
  }
  {
    std::vector<int32_t> xi(8, 1), si(4, 1);
    OneNode m("RMSNormalization", "rms", false, 23);
    m.input("X", kInt32, {2, 4}).input("S", kInt32, {4}).output("Y");
    auto r = plan_and_run(m, {{"X", {kInt32, {2, 4}, xi.data()}}, {"S", {kInt32, {4}, si.data()}}});
    expect_error(r, {"node 'rms' (RMSNormalization)", "float or float16"});
  }
}

// ---- SkipLayerNormalization / SkipSimplifiedLayerNormalization ----

TEST(ContribNorm, SkipLayerNormSumOutputAndBroadcastSkip) {
  // input [2, 1, 2], skip [1, 2] (one sequence for both batches), bias; sum = input + skip + bias.
  OneNode m("SkipLayerNormalization", "sln");
  m.input("X", kFloat, {2, 1, 2}).input("K", kFloat, {1, 2}).input("G", kFloat, {2});
  m.none().input("Bi", kFloat, {2}).output("Y").output("").output("").output("sum");
  m.attr_float("epsilon", 0.0f);
  std::vector<float> x = {1, 2, 3, 5}, k = {10, 20}, g = {1, 1}, bi = {0.5f, 0.5f};
  auto r = plan_and_run(m, {{"X", {kFloat, {2, 1, 2}, x.data()}},
                            {"K", {kFloat, {1, 2}, k.data()}},
                            {"G", {kFloat, {2}, g.data()}},
                            {"Bi", {kFloat, {2}, bi.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{11.5f, 22.5f, 13.5f, 25.5f}));
  auto y = values<float>((*r)[0]);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], i % 2 ? 1.0f : -1.0f, 1e-5) << i;
}

TEST(ContribNorm, SkipLayerNormHostileShapesAndTypesAreRefused) {
  std::vector<float> buf(4 * 5 * 8, 0.5f);
  auto run = [&](const Shape& xs, const Shape& ks, const Shape& gs, int32_t kt = kFloat) {
    OneNode m("SkipLayerNormalization", "skip");
    m.input("X", kFloat, xs).input("K", kt, ks).input("G", kFloat, gs).output("Y");
    return plan_and_run(m, {{"X", {kFloat, xs, buf.data()}},
                            {"K", {kt, ks, buf.data()}},
                            {"G", {kFloat, gs, buf.data()}}});
  };
  expect_error(run({1, 2, 2, 8}, {1, 2, 2, 8}, {8}),
               {"node 'skip' (SkipLayerNormalization)", "rank 2 or 3", "[1, 2, 2, 8]"});
  expect_error(run({4, 5, 8}, {2, 5, 8}, {8}), {"skip [2, 5, 8]", "input's shape [4, 5, 8]"});
  expect_error(run({4, 5, 8}, {5, 7}, {8}), {"skip [5, 7]"});
  expect_error(run({4, 5, 8}, {4, 5, 8}, {7}), {"gamma [7] must be [8]"});
  expect_error(run({4, 5, 8}, {4, 5, 8}, {1, 8}), {"gamma [1, 8] must be [8]"});
  expect_error(run({4, 5, 8}, {4, 5, 8}, {8}, kFloat16), {"skip has type", "float16"});
}

TEST(ContribNorm, SkipSimplifiedTakesNoBeta) {
  std::vector<float> buf(16, 1.0f);
  OneNode m("SkipSimplifiedLayerNormalization", "ssln");
  m.input("X", kFloat, {2, 8}).input("K", kFloat, {2, 8}).input("G", kFloat, {8});
  m.input("Bi", kFloat, {8}).input("Extra", kFloat, {8}).output("Y");
  expect_error(plan_and_run(m, {{"X", {kFloat, {2, 8}, buf.data()}},
                                {"K", {kFloat, {2, 8}, buf.data()}},
                                {"G", {kFloat, {8}, buf.data()}},
                                {"Bi", {kFloat, {8}, buf.data()}},
                                {"Extra", {kFloat, {8}, buf.data()}}}),
               {"node 'ssln' (SkipSimplifiedLayerNormalization)", "5 inputs, at most 4"});
}

// ---- EmbedLayerNormalization ----

struct Embed {
  int64_t b = 2, s = 3, h = 4, vocab = 5, npos = 3, nseg = 2;
  std::vector<float> word, pos, seg, gamma, beta;
  Embed() {
    for (int64_t i = 0; i < vocab * h; ++i) word.push_back(float(i % 7) - 3);
    for (int64_t i = 0; i < npos * h; ++i) pos.push_back(float(i % 3) * 0.5f);
    for (int64_t i = 0; i < nseg * h; ++i) seg.push_back(float(i % 2));
    gamma.assign(size_t(h), 1.0f);
    beta.assign(size_t(h), 0.0f);
  }
  OneNode model(bool with_mask, bool with_pos_ids, int64_t npos_rows = -1) const {
    OneNode m("EmbedLayerNormalization", "emb");
    const int64_t np = npos_rows < 0 ? npos : npos_rows;
    m.input("ids", kInt32, {b, s}).input("seg", kInt32, {b, s});
    m.raw("W", kFloat, {vocab, h}, bytes(word))
        .raw("P", kFloat, {np, h}, bytes(std::vector<float>(pos.begin(), pos.begin() + np * h)))
        .raw("Sg", kFloat, {nseg, h}, bytes(seg))
        .raw("G", kFloat, {h}, bytes(gamma))
        .raw("B", kFloat, {h}, bytes(beta));
    if (with_mask || with_pos_ids) {
      if (with_mask)
        m.input("mask", kInt32, {b, s});
      else
        m.none();
    }
    if (with_pos_ids) m.input("pids", kInt32, {1, s});
    m.output("Y").output("mi").output("sum");
    return m;
  }
};

TEST(ContribNorm, EmbedLayerNormValuesMaskIndexAndSum) {
  Embed e;
  std::vector<int32_t> ids = {0, 1, 2, 3, 4, 0}, seg = {0, 1, 0, 1, 1, 0};
  std::vector<int32_t> mask = {1, 1, 0, 1, 0, 0};
  auto r = plan_and_run(e.model(true, false), {{"ids", {kInt32, {2, 3}, ids.data()}},
                                               {"seg", {kInt32, {2, 3}, seg.data()}},
                                               {"mask", {kInt32, {2, 3}, mask.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(values<int32_t>((*r)[1]), (std::vector<int32_t>{2, 1}));
  auto sum = values<float>((*r)[2]);
  auto y = values<float>((*r)[0]);
  for (int64_t t = 0; t < 6; ++t) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < 4; ++j) {
      const float want = e.word[size_t(ids[size_t(t)] * 4 + j)] + e.pos[size_t((t % 3) * 4 + j)] +
                         e.seg[size_t(seg[size_t(t)] * 4 + j)];
      EXPECT_EQ(sum[size_t(t * 4 + j)], want) << t << " " << j;
      mean += want / 4.0;
    }
    for (int64_t j = 0; j < 4; ++j) var += std::pow(sum[size_t(t * 4 + j)] - mean, 2) / 4.0;
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_NEAR(y[size_t(t * 4 + j)], (sum[size_t(t * 4 + j)] - mean) / std::sqrt(var + 1e-12),
                  1e-4);
  }
}

TEST(ContribNorm, EmbedLayerNormIndicesOutOfRangeFailTheRun) {
  Embed e;
  std::vector<int32_t> good = {0, 1, 2, 3, 4, 0}, seg = {0, 1, 0, 1, 1, 0};
  std::vector<int32_t> bad_ids = {0, 1, 5, 3, 4, 0}, neg_ids = {0, -1, 2, 3, 4, 0};
  std::vector<int32_t> bad_seg = {0, 2, 0, 1, 1, 0};
  auto run = [&](const OneNode& m, const std::vector<int32_t>& ids, const std::vector<int32_t>& sg,
                 const std::vector<int32_t>* pids = nullptr) {
    std::map<std::string, Fed> f = {{"ids", {kInt32, {2, 3}, ids.data()}},
                                    {"seg", {kInt32, {2, 3}, sg.data()}}};
    if (pids) f["pids"] = {kInt32, {1, 3}, pids->data()};
    return plan_and_run(m, f);
  };
  expect_error(run(e.model(false, false), bad_ids, seg),
               {"node 'emb' (EmbedLayerNormalization)", "input_ids value 5", "[0, 5)"});
  expect_error(run(e.model(false, false), neg_ids, seg), {"input_ids value -1"});
  expect_error(run(e.model(false, false), good, bad_seg), {"segment_ids value 2", "[0, 2)"});
  std::vector<int32_t> bad_pids = {0, 3, 1};
  expect_error(run(e.model(false, true), good, seg, &bad_pids), {"position_ids value 3"});
  // Sequence 3 with 2 position rows: the third token has no position embedding.
  expect_error(run(e.model(false, false, 2), good, seg), {"position (sequence index) 2", "[0, 2)"});
}

TEST(ContribNorm, EmbedLayerNormHostileShapesAreRefused) {
  std::vector<float> f(64, 0.0f);
  std::vector<int32_t> ids(64, 0);
  auto base = [&](const Shape& ids_shape, const Shape& word_shape, const Shape& gamma_shape,
                  int32_t ids_type = kInt32) {
    OneNode m("EmbedLayerNormalization", "emb");
    m.input("ids", ids_type, ids_shape).none();
    m.input("W", kFloat, word_shape).input("P", kFloat, {4, 4}).none();
    m.input("G", kFloat, gamma_shape).input("B", kFloat, {4});
    m.output("Y").output("mi");
    return plan_and_run(m, {{"ids", {ids_type, ids_shape, ids.data()}},
                            {"W", {kFloat, word_shape, f.data()}},
                            {"P", {kFloat, {4, 4}, f.data()}},
                            {"G", {kFloat, gamma_shape, f.data()}},
                            {"B", {kFloat, {4}, f.data()}}});
  };
  expect_error(base({2, 2, 2}, {4, 4}, {4}), {"node 'emb'", "input_ids must be [batch, sequence]"});
  expect_error(base({2, 2}, {4, 2, 2}, {4}), {"word_embedding must be 2-D"});
  expect_error(base({2, 2}, {4, 4}, {3}), {"gamma [3] must be [4]"});
  expect_error(base({2, 2}, {4, 4}, {4}, kInt64), {"input_ids must be int32", "int64"});
  expect_error(base({2, 2}, {4, 3}, {3}),
               {"position_embedding [4, 4] must be [n, 3]", "hidden size"});
  // segment_ids without segment_embedding
  OneNode m("EmbedLayerNormalization", "emb");
  m.input("ids", kInt32, {2, 2}).input("seg", kInt32, {2, 2});
  m.input("W", kFloat, {4, 4}).input("P", kFloat, {4, 4}).none();
  m.input("G", kFloat, {4}).input("B", kFloat, {4}).output("Y").output("mi");
  expect_error(plan_and_run(m, {{"ids", {kInt32, {2, 2}, ids.data()}},
                                {"seg", {kInt32, {2, 2}, ids.data()}},
                                {"W", {kFloat, {4, 4}, f.data()}},
                                {"P", {kFloat, {4, 4}, f.data()}},
                                {"G", {kFloat, {4}, f.data()}},
                                {"B", {kFloat, {4}, f.data()}}}),
               {"segment_ids and segment_embedding must be given together"});
}

// ---- Gelu family ----

TEST(ContribNorm, GeluFamilyValuesAndBadBias) {
  std::vector<float> x = {1.0f, -2.0f}, bias = {0.5f, 0.5f};
  {
    OneNode m("QuickGelu", "qg");
    m.input("X", kFloat, {2}).output("Y");
    auto r = plan_and_run(m, {{"X", {kFloat, {2}, x.data()}}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    auto y = values<float>((*r)[0]);
    EXPECT_NEAR(y[0], 1.0 / (1.0 + std::exp(-1.702)), 1e-6);
    EXPECT_NEAR(y[1], -2.0 / (1.0 + std::exp(2 * 1.702)), 1e-6);
  }
  {
    OneNode m("BiasGelu", "bg");
    m.input("X", kFloat, {1, 2}).input("Bi", kFloat, {2}).output("Y");
    auto r =
        plan_and_run(m, {{"X", {kFloat, {1, 2}, x.data()}}, {"Bi", {kFloat, {2}, bias.data()}}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    auto y = values<float>((*r)[0]);
    EXPECT_NEAR(y[0], 0.75 * (1 + std::erf(1.5 / std::sqrt(2.0))), 1e-6);
    EXPECT_NEAR(y[1], -0.75 * (1 + std::erf(-1.5 / std::sqrt(2.0))), 1e-6);
  }
  {
    OneNode m("BiasGelu", "bg");
    m.input("X", kFloat, {1, 2}).input("Bi", kFloat, {3}).output("Y");
    std::vector<float> b3(3, 0.0f);
    expect_error(
        plan_and_run(m, {{"X", {kFloat, {1, 2}, x.data()}}, {"Bi", {kFloat, {3}, b3.data()}}}),
        {"node 'bg' (BiasGelu)", "bias [3] must be 1-D of X's last dimension"});
  }
  {
    OneNode m("BiasGelu", "bg");
    m.input("X", kFloat, {1, 2}).output("Y");
    expect_error(plan_and_run(m, {{"X", {kFloat, {1, 2}, x.data()}}}),
                 {"node 'bg' (BiasGelu)", "bias input is required"});
  }
  {
    std::vector<int32_t> xi = {1, 2};
    OneNode m("FastGelu", "fg");
    m.input("X", kInt32, {2}).output("Y");
    expect_error(plan_and_run(m, {{"X", {kInt32, {2}, xi.data()}}}),
                 {"node 'fg' (FastGelu)", "X must be float"});
  }
}

// ---- GatherBlockQuantized ----

// uint8 data [3, 16] (bits 8), block 16: one scale per row.
OneNode gbq_uint8(int64_t bits, int64_t block, int64_t gaxis = 0, int64_t qaxis = 1) {
  OneNode m("GatherBlockQuantized", "gbq");
  std::vector<uint8_t> data(48);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(120 + i % 16);
  m.raw("D", kUint8, {3, 16}, bytes(data)).input("I", kInt64, {2});
  m.raw("Sc", kFloat, {3, 1}, bytes(std::vector<float>{1.0f, 0.5f, 2.0f}));
  m.output("Y").attr_int("bits", bits).attr_int("block_size", block);
  m.attr_int("gather_axis", gaxis).attr_int("quantize_axis", qaxis);
  return m;
}

TEST(ContribNorm, GatherBlockQuantizedUint8Values) {
  std::vector<int64_t> idx = {2, -3};
  auto r = plan_and_run(gbq_uint8(8, 16), {{"I", {kInt64, {2}, idx.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 16}));
  auto y = values<float>((*r)[0]);
  // default zero point 128 for 8 bits; row 2 scale 2, row 0 scale 1
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[size_t(j)], float(120 + j - 128) * 2.0f) << j;
    EXPECT_EQ(y[size_t(16 + j)], float(120 + j - 128)) << j;
  }
}

TEST(ContribNorm, GatherBlockQuantizedInt4Values) {
  // int4 data [2, 16] (logical), block 16, zero points [2, 1]
  std::string d(16, '\0');
  for (int i = 0; i < 16; ++i) d[size_t(i)] = char(((i % 8) & 0xF) | (((-(i % 8)) & 0xF) << 4));
  OneNode m("GatherBlockQuantized", "gbq");
  m.raw("D", kInt4, {2, 16}, d).input("I", kInt32, {1});
  m.raw("Sc", kFloat, {2, 1}, bytes(std::vector<float>{0.5f, 0.25f}));
  m.raw("Z", kInt4, {2, 1}, std::string(1, char(0x1 | (0xF << 4))));  // zp row 0: 1, row 1: -1
  m.output("Y").attr_int("block_size", 16);
  std::vector<int32_t> idx = {1};
  auto r = plan_and_run(m, {{"I", {kInt32, {1}, idx.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto y = values<float>((*r)[0]);
  ASSERT_EQ(y.size(), 16u);
  // row 1 holds bytes 8..15: elements (i%8, -(i%8)) for i = 8..15
  for (int e = 0; e < 16; ++e) {
    const int byte = 8 + e / 2, v = byte % 8;
    const int q = e % 2 ? -v : v;
    EXPECT_EQ(y[size_t(e)], float(q - (-1)) * 0.25f) << e;
  }
}

TEST(ContribNorm, GatherBlockQuantizedHostileAttributesAndIndices) {
  std::vector<int64_t> idx = {0, 1};
  const std::map<std::string, Fed> f = {{"I", {kInt64, {2}, idx.data()}}};
  expect_error(plan_and_run(gbq_uint8(3, 16), f),
               {"node 'gbq' (GatherBlockQuantized)", "bits 3", "uint8 data (2, 4 or 8)"});
  expect_error(plan_and_run(gbq_uint8(8, 8), f), {"block_size 8 must be a power of 2"});
  expect_error(plan_and_run(gbq_uint8(8, 24), f), {"block_size 24"});
  expect_error(plan_and_run(gbq_uint8(8, 16, 1, 0), f),
               {"uint8 data needs gather_axis 0 and quantize_axis the last axis"});
  expect_error(plan_and_run(gbq_uint8(8, 16, 0, 2), f), {"node 'gbq'", "axis"});
  // bits 4: logical [3, 32], block 16 -> two scales per row; [3, 1] does not match.
  expect_error(plan_and_run(gbq_uint8(4, 16), f),
               {"scales [3, 1] do not match data [3, 32]", "dimension 1 should be 2"});
  for (int64_t bad : {int64_t(3), int64_t(-4), int64_t(1) << 40}) {
    std::vector<int64_t> b = {0, bad};
    expect_error(plan_and_run(gbq_uint8(8, 16), {{"I", {kInt64, {2}, b.data()}}}),
                 {"node 'gbq'", "index " + std::to_string(bad) + " is out of range",
                  "gather_axis 0 of size 3"});
  }
}

TEST(ContribNorm, GatherBlockQuantizedHostileTypesAndZeroPoints) {
  std::vector<int64_t> idx = {0};
  const std::map<std::string, Fed> f = {{"I", {kInt64, {1}, idx.data()}}};
  {
    OneNode m("GatherBlockQuantized", "gbq");
    m.raw("D", kFloat, {2, 16}, bytes(std::vector<float>(32, 1))).input("I", kInt64, {1});
    m.raw("Sc", kFloat, {2, 1}, bytes(std::vector<float>{1, 1})).output("Y");
    m.attr_int("block_size", 16);
    expect_error(plan_and_run(m, f), {"data must be int4, uint4 or uint8, got float"});
  }
  {
    OneNode m("GatherBlockQuantized", "gbq");
    m.raw("D", kUint4, {2, 16}, std::string(16, '\x11')).input("I", kInt64, {1});
    m.raw("Sc", kFloat, {2, 1}, bytes(std::vector<float>{1, 1}));
    m.raw("Z", kUint4, {2, 2}, std::string(2, '\x11')).output("Y");
    m.attr_int("block_size", 16);
    expect_error(plan_and_run(m, f), {"zero_points [2, 2] do not match scales [2, 1]"});
  }
  {
    OneNode m("GatherBlockQuantized", "gbq");
    m.raw("D", kUint4, {2, 16}, std::string(16, '\x11')).input("I", kInt64, {1});
    m.raw("Sc", kFloat, {2, 1}, bytes(std::vector<float>{1, 1}));
    m.raw("Z", kInt4, {2, 1}, std::string(1, '\x11')).output("Y");
    m.attr_int("block_size", 16);
    expect_error(plan_and_run(m, f), {"zero_points has type", "data"});
  }
  {
    OneNode m("GatherBlockQuantized", "gbq");
    m.raw("D", kUint4, {2, 16}, std::string(16, '\x11')).input("I", kInt64, {1});
    m.raw("Sc", kInt32, {2, 1}, bytes(std::vector<int32_t>{1, 1})).output("Y");
    m.attr_int("block_size", 16);
    expect_error(plan_and_run(m, f), {"scales must be float or float16"});
  }
  {
    OneNode m("GatherBlockQuantized", "gbq");
    m.raw("D", kUint4, {2, 16}, std::string(16, '\x11')).input("I", kInt64, {1});
    m.raw("Sc", kFloat, {2, 1}, bytes(std::vector<float>{1, 1})).output("Y");
    m.attr_int("block_size", 16).attr_int("bits", 8);
    expect_error(plan_and_run(m, f), {"bits 8 is not supported for int4/uint4 data (4)"});
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
