// Attention pattern fusion (runtime/attention_fusion.h): the standard-op attention subgraph
// (MatMul Q K^T, scale, additive mask, Softmax, MatMul V) fuses in the forms torch.onnx /
// optimum exports write it (PlanStats::attention_fused) and agrees with the unfused plan
// within 1e-5 of max(|unfused|, 1); near misses are left alone and stay bitwise equal; fully
// masked (-inf) rows give NaN as unfused, T = 0 and S = 0 run as unfused; the optimum-form tiny
// decoder fuses every layer's attention and agrees with its unfused plan.
#include "runtime/attention_fusion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "base/thread_pool.h"
#include "format/model_writer.h"
#include "runtime/generate.h"
#include "runtime/norm_gelu_fusion.h"
#include "runtime/session.h"
#include "testing/graph_builder.h"
#include "testing/plan_status.h"
#include "testing/session_run.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

struct Graph : testing::GraphBuilder {
  explicit Graph(int opset = 17) : GraphBuilder("attention", opset) {}
};

struct Form {
  enum Scale { kScores, kDivScores, kSqrtOnQK, kOnKt, kNone, kScaleInput } scale = kScores;
  bool mask = true;
  bool mask_first = false;       // Add(mask, scores)
  bool mask_after = false;       // Mul(Add(scores, mask), c): the scale after the mask
  int rep = 1;                   // repeat_kv: K / V hold heads / rep heads
  int64_t softmax_axis = -1;     // 3 is the same axis
  bool scores_output = false;    // the scores are a graph output as well
  bool k_pretransposed = false;  // K fed [B, H, D, T], no Transpose
  bool k_btnd = false;           // K fed [B, T, H, D], one Transpose(0, 2, 3, 1) (BERT exports)
  // Q fed [B, S, H, D] and V [B, T, H, Dv] through Transpose(0, 2, 1, 3), the context
  // transposed back to [B, S, H, Dv] (BERT exports): read and written in place.
  bool bsnd = false;
  int64_t B = 2, H = 4, S = 5, T = 7, D = 16, Dv = 16;
  Shape mask_shape;  // default [B, 1, S, T]
};

Shape mask_shape(const Form& f) {
  return f.mask_shape.empty() ? Shape{f.B, 1, f.S, f.T} : f.mask_shape;
}

Shape q_shape(const Form& f) {
  return f.bsnd ? Shape{f.B, f.S, f.H, f.D} : Shape{f.B, f.H, f.S, f.D};
}
Shape v_shape(const Form& f) {
  const int64_t kvh = f.H / f.rep;
  return f.bsnd ? Shape{f.B, f.T, kvh, f.Dv} : Shape{f.B, kvh, f.T, f.Dv};
}

Shape k_shape(const Form& f) {
  const int64_t kvh = f.H / f.rep;
  if (f.k_btnd) return {f.B, f.T, kvh, f.D};
  if (f.k_pretransposed) return {f.B, kvh, f.D, f.T};
  return {f.B, kvh, f.T, f.D};
}

onnx::ModelProto attention_model(const Form& f) {
  Graph b;
  b.input("q", q_shape(f));
  b.input("k", k_shape(f));
  b.input("v", v_shape(f));
  if (f.mask) b.input("mask", mask_shape(f));
  if (f.scale == Form::kScaleInput) b.input("scale", {1});
  const float c = 1.0f / std::sqrt(float(f.D));
  auto repeat = [&](const std::string& x, int64_t d) {
    if (f.rep == 1) return x;
    const std::string u = b.node("Unsqueeze", {x, b.ints({2})});
    const std::string e = b.node("Expand", {u, b.ints({1, 1, f.rep, 1, 1})});
    return b.node("Reshape", {e, b.ints({0, f.H, -1, d})});
  };
  auto swap12 = [&](const std::string& x) {
    const std::string y = b.node("Transpose", {x});
    b.ints_attr("perm", {0, 2, 1, 3});
    return y;
  };
  std::string q = f.bsnd ? swap12("q") : "q", k = repeat("k", f.D);
  const std::string v = f.bsnd ? swap12("v") : repeat("v", f.Dv);
  if (f.scale == Form::kSqrtOnQK) {
    q = b.node("Mul", {q, b.scalar(std::sqrt(c))});
    k = b.node("Mul", {b.scalar(std::sqrt(c)), k});
  }
  std::string kt = k;
  if (!f.k_pretransposed) {
    kt = b.node("Transpose", {k});
    b.ints_attr("perm",
                f.k_btnd ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 1, 3, 2});
  }
  if (f.scale == Form::kOnKt) kt = b.node("Mul", {kt, b.scalar(c)});
  std::string s = b.node("MatMul", {q, kt});
  if (f.scores_output) b.output(s);
  auto scale = [&] {
    if (f.scale == Form::kScores) s = b.node("Mul", {s, b.scalar(c)});
    if (f.scale == Form::kDivScores) s = b.node("Div", {s, b.scalar(std::sqrt(float(f.D)))});
    if (f.scale == Form::kScaleInput) s = b.node("Mul", {s, "scale"});
  };
  if (!f.mask_after) scale();
  if (f.mask) s = f.mask_first ? b.node("Add", {"mask", s}) : b.node("Add", {s, "mask"});
  if (f.mask_after) scale();
  const std::string p = b.node("Softmax", {s});
  b.int_attr("axis", f.softmax_axis);
  const std::string ctx = b.node("MatMul", {p, v});
  b.output(f.bsnd ? swap12(ctx) : ctx);
  return b.m;
}

struct Outcome {
  std::vector<HostTensor> outputs;
  PlanStats stats;
};

struct Feeds {
  std::map<std::string, HostTensor> t;
};

Feeds make_feeds(const Form& f, uint32_t seed = 3) {
  Feeds fd;
  std::map<std::string, Shape> shapes = {{"q", q_shape(f)}, {"k", k_shape(f)}, {"v", v_shape(f)}};
  if (f.mask) shapes["mask"] = mask_shape(f);
  if (f.scale == Form::kScaleInput) shapes["scale"] = {1};
  for (const auto& [name, shape] : shapes) {
    HostTensor h = HostTensor::allocate(kFloat, shape);
    auto r = testing::pseudo_random_floats(size_t(h.numel()), seed++);
    float* p = static_cast<float*>(h.mutable_data());
    for (int64_t i = 0; i < h.numel(); ++i) p[i] = 3.0f * r[size_t(i)];
    if (name == "mask") {  // a causal-looking mask: 0 or the float lowest
      const Shape& ms = shape;
      const int64_t rows = ms.size() >= 2 ? ms[ms.size() - 2] : 1, cols = ms.back();
      for (int64_t i = 0; i < h.numel(); ++i) {
        const int64_t col = i % cols, row = (i / cols) % rows;
        p[i] = col > row + (cols - rows) ? std::numeric_limits<float>::lowest() : 0.0f;
      }
    }
    if (name == "scale") p[0] = 0.25f;
    fd.t.emplace(name, std::move(h));
  }
  return fd;
}

Outcome run(const onnx::ModelProto& proto, const Feeds& fd, bool fuse, size_t threads = 1) {
  base::ThreadPool pool(threads);
  SessionOptions opts;
  opts.pool = &pool;
  opts.fuse_patterns = fuse;
  auto model = std::shared_ptr<const format::Model>(format::Model::from_proto(proto, "."));
  auto s = Session::create(model, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  std::map<std::string, Session::Feed> feeds;
  std::map<std::string, Tensor> inputs;
  for (const auto& [name, t] : fd.t) {
    feeds[name] = {kFloat, t.shape(), nullptr};
    inputs[name] = t.view();
  }
  Status st = testing::plan_status((*s)->plan(feeds));
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  auto outs = (*s)->run(inputs);
  EXPECT_TRUE(outs.ok()) << outs.status().message();
  return {outs.ok() ? std::move(*outs) : std::vector<HostTensor>{}, (*s)->stats()};
}

// max |a - b| / max(|b|, 1) over every element; NaN where the other is not counts as infinite.
double worst_error(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b,
                   bool* bitwise = nullptr) {
  double worst = 0;
  if (bitwise) *bitwise = true;
  EXPECT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size() && o < b.size(); ++o) {
    EXPECT_EQ(a[o].shape(), b[o].shape());
    if (a[o].shape() != b[o].shape() || a[o].dtype() != kFloat) return INFINITY;
    if (bitwise && !testing::same_bits(a[o], b[o])) *bitwise = false;
    const float* x = a[o].as<float>();
    const float* y = b[o].as<float>();
    for (int64_t i = 0; i < a[o].numel(); ++i) {
      if (std::isnan(x[i]) || std::isnan(y[i])) {
        if (std::isnan(x[i]) != std::isnan(y[i])) worst = INFINITY;
        continue;
      }
      const double e =
          std::fabs(double(x[i]) - double(y[i])) / std::max(1.0, std::fabs(double(y[i])));
      worst = std::max(worst, e);
    }
  }
  return worst;
}

// Runs `model` on `in` unfused (got[0]) and fused (got[1]); the fused plan
// holds `layers` attention steps (none when fusion is off by the environment).
void run_unfused_and_fused(const std::shared_ptr<const format::Model>& model,
                           const std::map<std::string, HostTensor>& in, size_t layers,
                           std::vector<HostTensor> (&got)[2]) {
  for (bool fuse : {false, true}) {
    SessionOptions so;
    so.fuse_patterns = fuse;
    auto s = Session::create(model, so);
    ASSERT_TRUE(s.ok()) << s.status().message();
    std::map<std::string, Session::Feed> feeds;
    std::map<std::string, Tensor> views;
    for (const auto& [name, t] : in) {
      feeds[name] = {t.dtype(), t.shape(), nullptr};
      views[name] = t.view();
    }
    Status st = testing::plan_status((*s)->plan(feeds));
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ((*s)->stats().attention_fused,
              fuse && !pattern_fusion_disabled_by_env() ? layers : 0u);
    auto r = (*s)->run(views);
    ASSERT_TRUE(r.ok()) << r.status().message();
    got[fuse] = std::move(*r);
  }
}

void expect_fused(const Form& f, const char* what, const Feeds* given = nullptr) {
  const onnx::ModelProto m = attention_model(f);
  const Feeds fd = given ? Feeds{} : make_feeds(f);
  const Feeds& use = given ? *given : fd;
  const Outcome plain = run(m, use, false);
  ASSERT_FALSE(plain.outputs.empty()) << what;
  EXPECT_EQ(plain.stats.attention_fused, 0u) << what;
  for (size_t threads : {1, 3}) {
    const Outcome fz = run(m, use, true, threads);
    EXPECT_EQ(fz.stats.attention_fused, 1u) << what;
    EXPECT_LT(fz.stats.kernels, plain.stats.kernels) << what;
    bool bitwise = false;
    const double e = worst_error(fz.outputs, plain.outputs, &bitwise);
    EXPECT_LE(e, 1e-5) << what;
    std::printf(
        "[attention fusion] %-34s threads %zu: max |fused - unfused| / max(|unfused|, 1) "
        "= %.3g%s\n",
        what, threads, e, bitwise ? " (bitwise)" : "");
  }
}

void expect_left_alone(const Form& f, const char* what) {
  const onnx::ModelProto m = attention_model(f);
  const Feeds fd = make_feeds(f);
  const Outcome plain = run(m, fd, false);
  const Outcome fz = run(m, fd, true);
  ASSERT_FALSE(fz.outputs.empty()) << what;
  EXPECT_EQ(fz.stats.attention_fused, 0u) << what;
  ASSERT_EQ(fz.outputs.size(), plain.outputs.size());
  for (size_t o = 0; o < fz.outputs.size(); ++o)
    EXPECT_TRUE(testing::same_bits(fz.outputs[o], plain.outputs[o])) << what << " output " << o;
}

TEST(AttentionFusion, Variants) {
  Form f;
  expect_fused(f, "Mul scores, Add mask");
  f.mask_first = true;
  expect_fused(f, "Add(mask, scores)");
  f = {};
  f.scale = Form::kDivScores;
  expect_fused(f, "Div scores by sqrt(D)");
  f.scale = Form::kSqrtOnQK;
  expect_fused(f, "sqrt(scale) on Q and on K");
  f.scale = Form::kOnKt;
  expect_fused(f, "scale on K^T");
  f.scale = Form::kNone;
  expect_fused(f, "no scale");
  f = {};
  f.mask = false;
  expect_fused(f, "no mask");
  f = {};
  f.mask_shape = {1, 1, f.S, f.T};
  expect_fused(f, "mask [1, 1, S, T]");
  f.mask_shape = {f.B, 1, 1, f.T};
  expect_fused(f, "mask [B, 1, 1, T]");
  f.mask_shape = {f.B, f.H, f.S, f.T};
  expect_fused(f, "mask [B, H, S, T]");
  f = {};
  f.softmax_axis = 3;
  expect_fused(f, "Softmax axis 3");
  f = {};
  f.rep = 2;
  expect_fused(f, "repeat_kv (GQA, 2 kv heads)");
  f.rep = 4;
  f.Dv = 8;
  f.S = 70;  // more than one block of query rows, the gemm path
  f.T = 90;
  expect_fused(f, "repeat_kv 4, S 70, T 90, Dv 8");
  f = {};
  f.S = 1;
  f.T = 1;
  expect_fused(f, "S 1, T 1");
  f = {};
  f.k_btnd = true;
  f.scale = Form::kDivScores;
  f.mask_shape = {f.B, 1, 1, f.T};
  expect_fused(f, "BERT: K [B, T, H, D], Transpose 0,2,3,1");
  f.S = 70;
  f.T = 70;
  f.mask_shape = {f.B, 1, 1, f.T};
  expect_fused(f, "BERT form, S = T = 70");
  // The whole BERT layout: Q, V and the context through Transpose(0, 2, 1, 3) too; every
  // Transpose is absorbed (read and written in place): the plan is the one fused step.
  for (int64_t st : {5, 70}) {
    f = {};
    f.k_btnd = f.bsnd = true;
    f.scale = Form::kDivScores;
    f.S = f.T = st;
    f.mask_shape = {f.B, 1, 1, f.T};
    expect_fused(f, st == 5 ? "BERT: Q, K, V, context transposed" : "BERT transposed, S = T = 70");
    const Outcome fz = run(attention_model(f), make_feeds(f), true, 3);
    EXPECT_EQ(fz.stats.kernels, 1u) << st;
  }
}

TEST(AttentionFusion, NearMissesAreLeftAlone) {
  Form f;
  f.scores_output = true;
  expect_left_alone(f, "scores read by a graph output");
  f = {};
  f.scale = Form::kScaleInput;
  expect_left_alone(f, "scale fed at run time");
  f = {};
  f.softmax_axis = 2;
  expect_left_alone(f, "Softmax over the query axis");
  f = {};
  f.mask_shape = {f.B, 1, f.S, 1};
  expect_left_alone(f, "mask broadcast along the keys");
  f = {};
  f.mask_after = true;
  expect_left_alone(f, "scale after the mask");
  f = {};
  f.k_pretransposed = true;
  expect_left_alone(f, "K fed as K^T [B, H, D, T]");
}

// A mask with fully -inf rows: NaN rows as the unfused Softmax gives them; float-lowest rows
// (uniform weights) agree within the bound.
TEST(AttentionFusion, FullyMaskedRowsMatchUnfused) {
  Form f;
  Feeds fd = make_feeds(f);
  float* m = static_cast<float*>(fd.t.at("mask").mutable_data());
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t t = 0; t < f.T; ++t) {
    m[1 * f.T + t] = -inf;                      // batch 0, row 1: every key -inf
    m[(f.S + 2) * f.T + t] = t % 2 ? -inf : 0;  // batch 1, row 2: half the keys
    m[(f.S + 3) * f.T + t] = std::numeric_limits<float>::lowest();  // batch 1, row 3
  }
  const onnx::ModelProto model = attention_model(f);
  const Outcome plain = run(model, fd, false);
  const Outcome fz = run(model, fd, true);
  EXPECT_EQ(fz.stats.attention_fused, 1u);
  ASSERT_EQ(plain.outputs.size(), 1u);
  const float* y = plain.outputs[0].as<float>();
  EXPECT_TRUE(std::isnan(y[1 * f.D])) << "the unfused Softmax of an all -inf row";
  bool bitwise = false;
  const double e = worst_error(fz.outputs, plain.outputs, &bitwise);
  EXPECT_LE(e, 1e-5);
  std::printf("[attention fusion] -inf rows: max relative difference %.3g%s\n", e,
              bitwise ? " (bitwise)" : "");
}

TEST(AttentionFusion, EmptySequences) {
  for (const auto& [S, T] : {std::pair<int64_t, int64_t>{0, 7}, {5, 0}, {0, 0}}) {
    Form f;
    f.S = S;
    f.T = T;
    const onnx::ModelProto model = attention_model(f);
    const Feeds fd = make_feeds(f);
    const Outcome plain = run(model, fd, false);
    const Outcome fz = run(model, fd, true);
    ASSERT_EQ(plain.outputs.size(), 1u);
    ASSERT_EQ(fz.outputs.size(), 1u);
    EXPECT_EQ(fz.outputs[0].shape(), (Shape{f.B, f.H, S, f.Dv}));
    EXPECT_TRUE(testing::same_bits(fz.outputs[0], plain.outputs[0])) << "S " << S << " T " << T;
  }
}

TEST(AttentionFusion, EnvAndOptionTurnItOff) {
  Form f;
  const Feeds fd = make_feeds(f);
  EXPECT_EQ(run(attention_model(f), fd, false).stats.attention_fused, 0u);
  EXPECT_EQ(run(attention_model(f), fd, true).stats.attention_fused,
            pattern_fusion_disabled_by_env() ? 0u : 1u);
}

// The optimum-form tiny decoder (`generate decoder --form optimum`, GQA: 4 heads, 2 kv heads)
// fuses each layer's attention; prompt and one cached step agree with the unfused plan.
TEST(AttentionFusion, OptimumDecoderFusesEveryLayer) {
  auto o = decoder_preset("tiny");
  ASSERT_TRUE(o.ok());
  o->form = "optimum";
  testing::TempDir dir;
  const std::string path = dir.file("decoder.onnx");
  ASSERT_TRUE(write_decoder(*o, path, false).ok());
  auto loaded = format::Model::load(path);
  ASSERT_TRUE(loaded.ok());
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  const int64_t hs = o->hidden / o->heads;
  for (const auto& [S, P] : {std::pair<int64_t, int64_t>{6, 0}, {1, 6}}) {
    const int64_t B = 2, T = P + S;
    std::map<std::string, HostTensor> in;
    in.emplace("input_ids", HostTensor::allocate(kInt64, {B, S}));
    in.emplace("attention_mask", HostTensor::allocate(kInt64, {B, T}));
    in.emplace("position_ids", HostTensor::allocate(kInt64, {B, S}));
    auto* ids = static_cast<int64_t*>(in.at("input_ids").mutable_data());
    auto* am = static_cast<int64_t*>(in.at("attention_mask").mutable_data());
    auto* pos = static_cast<int64_t*>(in.at("position_ids").mutable_data());
    for (int64_t i = 0; i < B * S; ++i) ids[i] = (i * 7919 + 13) % o->vocab;
    for (int64_t i = 0; i < B * T; ++i) am[i] = (i / T == 1 && i % T == 0) ? 0 : 1;  // left pad
    for (int64_t i = 0; i < B * S; ++i) pos[i] = P + i % S;
    for (int64_t l = 0; l < o->layers; ++l) {
      for (const char* kv : {"key", "value"}) {
        HostTensor t = HostTensor::allocate(kFloat, {B, o->kv_heads, P, hs});
        auto r = testing::pseudo_random_floats(size_t(t.numel()), uint32_t(l * 2 + 1));
        std::copy(r.begin(), r.end(), static_cast<float*>(t.mutable_data()));
        in.emplace("past_key_values." + std::to_string(l) + "." + kv, std::move(t));
      }
    }
    std::vector<HostTensor> got[2];
    run_unfused_and_fused(model, in, size_t(o->layers), got);
    if (::testing::Test::HasFatalFailure()) return;
    bool bitwise = false;
    const double e = worst_error(got[1], got[0], &bitwise);
    std::printf(
        "[attention fusion] optimum decoder S %lld past %lld: max relative difference "
        "%.3g%s\n",
        (long long)S, (long long)P, e, bitwise ? " (bitwise)" : "");
    EXPECT_LE(e, 1e-5);
  }
}

// The optimum-form BERT encoder (`generate encoder`): K through one Transpose(0, 2, 3, 1), Div
// by sqrt(head size), the [B, 1, 1, T] extended mask; every layer fuses.
TEST(AttentionFusion, OptimumEncoderFusesEveryLayer) {
  auto o = encoder_preset("tiny");
  ASSERT_TRUE(o.ok());
  testing::TempDir dir;
  const std::string path = dir.file("encoder.onnx");
  ASSERT_TRUE(write_encoder(*o, path, false).ok());
  auto loaded = format::Model::load(path);
  ASSERT_TRUE(loaded.ok());
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  const int64_t B = 2, S = 9;
  std::map<std::string, HostTensor> in;
  for (const char* n : {"input_ids", "attention_mask", "token_type_ids"}) {
    HostTensor t = HostTensor::allocate(kInt64, {B, S});
    auto* p = static_cast<int64_t*>(t.mutable_data());
    for (int64_t i = 0; i < B * S; ++i) {
      if (std::string(n) == "input_ids") p[i] = (i * 7919 + 13) % o->vocab;
      if (std::string(n) == "attention_mask") p[i] = i >= S + 6 ? 0 : 1;  // row 1 padded
      if (std::string(n) == "token_type_ids") p[i] = i % S >= 5 ? 1 : 0;
    }
    in.emplace(n, std::move(t));
  }
  std::vector<HostTensor> got[2];
  run_unfused_and_fused(model, in, size_t(o->layers), got);
  if (::testing::Test::HasFatalFailure()) return;
  bool bitwise = false;
  const double e = worst_error(got[1], got[0], &bitwise);
  std::printf("[attention fusion] optimum encoder: max relative difference %.3g%s\n", e,
              bitwise ? " (bitwise)" : "");
  EXPECT_LE(e, 1e-5);
}

}  // namespace
}  // namespace onnx_prepack::runtime
