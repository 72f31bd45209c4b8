// Pattern fusion (runtime/norm_gelu_fusion.h): the decomposed LayerNorm, RMSNorm, Gelu and
// FastGelu forms of standard-op exports fuse (PlanStats::patterns_fused) and agree with the
// unfused plan within 1e-5 of max(|unfused|, 1); near misses (an eps fed at run time, an
// intermediate read elsewhere, a reduction not over the trailing axes, a broadcasting gamma,
// wrong constants) are left alone and stay bitwise equal; the generated transformer fuses
// every decomposed LayerNorm and Gelu and agrees with ONNX Runtime within 1e-4.
#include "runtime/norm_gelu_fusion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/thread_pool.h"
#include "format/model_writer.h"
#include "runtime/generate.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/graph_builder.h"
#include "testing/plan_status.h"
#include "testing/session_run.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

struct Graph : testing::GraphBuilder {
  explicit Graph(int opset = 17) : GraphBuilder("patterns", opset) {}
  // ReduceMean over `axes`: an attribute before opset 18, an input from it.
  std::string mean(const std::string& x, const std::vector<int64_t>& axes) {
    if (m.opset_import(0).version() >= 18) return node("ReduceMean", {x, ints(axes)});
    const std::string y = node("ReduceMean", {x});
    ints_attr("axes", axes);
    return y;
  }
};

struct LnForm {
  bool mul_square = false;  // Mul(d, d) for Pow(d, 2)
  bool reciprocal = false;  // Reciprocal + Mul for Div
  bool gamma_first = false;
  bool affine = true;
  std::vector<int64_t> axes = {-1};
  std::string eps;  // "" : a 1e-5 initializer
};

// Decomposed LayerNorm of x; returns the output name.
std::string layer_norm(Graph& b, const std::string& x, const Shape& norm, const LnForm& f) {
  const std::string mean = b.mean(x, f.axes);
  const std::string d = b.node("Sub", {x, mean});
  const std::string sq = f.mul_square ? b.node("Mul", {d, d}) : b.node("Pow", {d, b.scalar(2)});
  const std::string var = b.mean(sq, f.axes);
  const std::string ve = b.node("Add", {var, f.eps.empty() ? b.scalar(1e-5f) : f.eps});
  const std::string sd = b.node("Sqrt", {ve});
  std::string n =
      f.reciprocal ? b.node("Mul", {b.node("Reciprocal", {sd}), d}) : b.node("Div", {d, sd});
  if (!f.affine) return n;
  const std::string g = b.init(norm, 3);
  n = f.gamma_first ? b.node("Mul", {g, n}) : b.node("Mul", {n, g});
  return b.node("Add", {n, b.init(norm, 4)});
}

struct Outcome {
  std::vector<HostTensor> outputs;
  PlanStats stats;
};

Outcome run(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes, bool fuse,
            size_t threads = 1) {
  base::ThreadPool pool(threads);
  SessionOptions opts;
  opts.pool = &pool;
  opts.fuse_patterns = fuse;
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
    auto v = testing::pseudo_random_floats(size_t(shape_numel(shape)), seed++);
    for (size_t i = 0; i < v.size(); ++i) v[i] = 4.0f * v[i] + (i % 3 == 0 ? 2.5f : -0.5f);
    data.push_back(std::move(v));
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

// max |a - b| / max(|b|, 1) over every element of every output.
double worst_error(const Outcome& a, const Outcome& b) {
  double worst = 0;
  EXPECT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t o = 0; o < a.outputs.size() && o < b.outputs.size(); ++o) {
    EXPECT_EQ(a.outputs[o].shape(), b.outputs[o].shape());
    if (a.outputs[o].shape() != b.outputs[o].shape()) return INFINITY;
    const float* x = a.outputs[o].as<float>();
    const float* y = b.outputs[o].as<float>();
    for (int64_t i = 0; i < a.outputs[o].numel(); ++i) {
      const double e =
          std::fabs(double(x[i]) - double(y[i])) / std::max(1.0, std::fabs(double(y[i])));
      worst = std::max(worst, std::isnan(e) ? INFINITY : e);
    }
  }
  return worst;
}

// Fused (1 and 3 threads) against unfused: `fused` patterns, within the documented bound.
void expect_fused(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes,
                  size_t fused, const char* what, double bound = 1e-5) {
  const Outcome plain = run(proto, shapes, false);
  ASSERT_FALSE(plain.outputs.empty()) << what;
  EXPECT_EQ(plain.stats.patterns_fused, 0u) << what;
  for (size_t threads : {1, 3}) {
    const Outcome f = run(proto, shapes, true, threads);
    EXPECT_EQ(f.stats.patterns_fused, fused) << what;
    EXPECT_LT(f.stats.kernels, plain.stats.kernels) << what;
    const double e = worst_error(f, plain);
    EXPECT_LE(e, bound) << what;
    std::printf("[pattern fusion] %-40s max |fused - unfused| / max(|unfused|, 1) = %.3g\n", what,
                e);
  }
}

// Not fused: no pattern counted and the outputs bitwise those of the unfused plan.
void expect_left_alone(const onnx::ModelProto& proto, const std::map<std::string, Shape>& shapes,
                       const char* what) {
  const Outcome plain = run(proto, shapes, false);
  const Outcome f = run(proto, shapes, true);
  ASSERT_FALSE(f.outputs.empty()) << what;
  EXPECT_EQ(f.stats.patterns_fused, 0u) << what;
  ASSERT_EQ(f.outputs.size(), plain.outputs.size());
  for (size_t o = 0; o < f.outputs.size(); ++o)
    EXPECT_TRUE(testing::same_bits(f.outputs[o], plain.outputs[o])) << what << " output " << o;
}

TEST(PatternFusion, LayerNormVariants) {
  for (int opset : {14, 17, 18}) {
    for (int v = 0; v < 8; ++v) {
      LnForm f;
      f.mul_square = v & 1;
      f.reciprocal = v & 2;
      f.gamma_first = v & 4;
      Graph b(opset);
      b.input("x", {2, 5, 16});
      const std::string y = layer_norm(b, "x", {16}, f);
      b.node("Identity", {y}, "y");
      b.output("y");
      const std::string what =
          "LayerNorm opset " + std::to_string(opset) + " form " + std::to_string(v);
      expect_fused(b.m, {{"x", {2, 5, 16}}}, 1, what.c_str());
    }
  }
}

TEST(PatternFusion, LayerNormTrailingAxesAndNoAffine) {
  {
    Graph b(18);
    b.input("x", {2, 3, 4, 8});
    LnForm f;
    f.axes = {-2, 3};
    b.output(layer_norm(b, "x", {4, 8}, f));
    expect_fused(b.m, {{"x", {2, 3, 4, 8}}}, 1, "LayerNorm over two trailing axes");
  }
  {
    Graph b;
    b.input("x", {6, 32});
    LnForm f;
    f.affine = false;
    b.output(layer_norm(b, "x", {32}, f));
    expect_fused(b.m, {{"x", {6, 32}}}, 1, "LayerNorm without gamma and beta");
  }
  {  // gamma of shape [1, 1, 16]: leading ones
    Graph b;
    b.input("x", {2, 5, 16});
    LnForm f;
    f.affine = false;
    std::string n = layer_norm(b, "x", {16}, f);
    n = b.node("Mul", {n, b.init({1, 1, 16}, 5)});
    b.output(n);
    expect_fused(b.m, {{"x", {2, 5, 16}}}, 1, "LayerNorm gamma [1, 1, 16]");
  }
}

// Llama's RMSNorm: x * 1 / sqrt(mean(x^2) + eps) * weight.
std::string rms_norm(Graph& b, const std::string& x, int form, bool scale) {
  const std::string sq = form & 1 ? b.node("Mul", {x, x}) : b.node("Pow", {x, b.scalar(2)});
  const std::string sd = b.node("Sqrt", {b.node("Add", {b.mean(sq, {-1}), b.scalar(1e-6f)})});
  std::string n =
      form & 2 ? b.node("Mul", {b.node("Reciprocal", {sd}), x}) : b.node("Div", {x, sd});
  if (scale) n = b.node("Mul", {b.init({24}, 9), n});
  return n;
}

TEST(PatternFusion, RmsNormVariants) {
  for (int opset : {14, 18}) {
    for (int form = 0; form < 4; ++form) {
      for (bool scale : {true, false}) {
        Graph b(opset);
        b.input("x", {3, 7, 24});
        b.output(rms_norm(b, "x", form, scale));
        const std::string what = "RMSNorm opset " + std::to_string(opset) + " form " +
                                 std::to_string(form) + (scale ? " scale" : "");
        expect_fused(b.m, {{"x", {3, 7, 24}}}, 1, what.c_str());
      }
    }
  }
}

// A float16 export's RMSNorm: Cast to float, the float core, Cast back, the float16 weight Mul.
// The float core fuses (scale 1); the Casts and the float16 Mul stay. The graph's input and
// output are float (Casts at both ends) so the test feeds floats.
TEST(PatternFusion, RmsNormBetweenFloat16Casts) {
  Graph b(14);
  b.input("x", {3, 7, 24});
  auto cast = [&](const std::string& x, int32_t to) {
    const std::string y = b.node("Cast", {x});
    auto* a = b.last()->add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to);
    return y;
  };
  const std::string x16 = cast("x", kFloat16);
  const std::string xf = cast(x16, kFloat);
  const std::string n16 = cast(rms_norm(b, xf, 2, false), kFloat16);
  const std::string w16 = cast(b.init({24}, 12), kFloat16);  // folded at plan time
  b.output(cast(b.node("Mul", {w16, n16}), kFloat));
  // Both plans round the float core to float16: they may differ by one float16 ulp (2^-10).
  expect_fused(b.m, {{"x", {3, 7, 24}}}, 1, "RMSNorm between float16 Casts", 1.0 / 1024);
}

// Gelu, erf form: x * 0.5 * (1 + erf(x / sqrt 2)), the 0.5 at each place exporters put it.
std::string gelu(Graph& b, const std::string& x, bool mul_inv, int tail, float half = 0.5f,
                 float sqrt2 = float(std::sqrt(2.0))) {
  const std::string t = mul_inv ? b.node("Mul", {b.scalar(float(1.0 / std::sqrt(2.0))), x})
                                : b.node("Div", {x, b.scalar(sqrt2)});
  const std::string e1 = b.node("Add", {b.node("Erf", {t}), b.scalar(1.0f)});
  if (tail == 0) return b.node("Mul", {b.node("Mul", {x, e1}), b.scalar(half)});
  if (tail == 1) return b.node("Mul", {b.node("Mul", {b.scalar(half), x}), e1});
  return b.node("Mul", {x, b.node("Mul", {e1, b.scalar(half)})});
}

// FastGelu: x * 0.5 * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
std::string gelu_tanh(Graph& b, const std::string& x, bool pow, int tail) {
  const std::string x3 =
      pow ? b.node("Pow", {x, b.scalar(3)}) : b.node("Mul", {b.node("Mul", {x, x}), x});
  const std::string in = b.node("Add", {x, b.node("Mul", {b.scalar(0.044715f), x3})});
  const std::string th = b.node("Tanh", {b.node("Mul", {in, b.scalar(0.7978845608f)})});
  const std::string e1 = b.node("Add", {b.scalar(1.0f), th});
  if (tail == 0) return b.node("Mul", {b.node("Mul", {x, e1}), b.scalar(0.5f)});
  if (tail == 1) return b.node("Mul", {b.node("Mul", {x, b.scalar(0.5f)}), e1});
  return b.node("Mul", {b.node("Mul", {e1, b.scalar(0.5f)}), x});
}

TEST(PatternFusion, GeluVariants) {
  for (int tail = 0; tail < 3; ++tail) {
    for (bool alt : {false, true}) {
      {
        Graph b;
        b.input("x", {4, 300});
        b.output(gelu(b, "x", alt, tail));
        const std::string what = "Gelu tail " + std::to_string(tail) + (alt ? " Mul 1/sqrt2" : "");
        expect_fused(b.m, {{"x", {4, 300}}}, 1, what.c_str());
      }
      {
        Graph b;
        b.input("x", {4, 300});
        b.output(gelu_tanh(b, "x", alt, tail));
        const std::string what = "FastGelu tail " + std::to_string(tail) + (alt ? " Pow 3" : "");
        expect_fused(b.m, {{"x", {4, 300}}}, 1, what.c_str());
      }
    }
  }
}

TEST(PatternFusion, NearMissesAreLeftAlone) {
  const std::map<std::string, Shape> x16 = {{"x", {2, 5, 16}}};
  {  // eps fed at run time
    Graph b;
    b.input("x", {2, 5, 16});
    b.input("eps", {});
    LnForm f;
    f.eps = "eps";
    b.output(layer_norm(b, "x", {16}, f));
    const Outcome plain = run(b.m, {{"x", {2, 5, 16}}, {"eps", {}}}, false);
    const Outcome fz = run(b.m, {{"x", {2, 5, 16}}, {"eps", {}}}, true);
    EXPECT_EQ(fz.stats.patterns_fused, 0u);
    ASSERT_FALSE(fz.outputs.empty());
    EXPECT_TRUE(testing::same_bits(fz.outputs[0], plain.outputs[0]));
  }
  {  // eps a vector, not one value
    Graph b;
    b.input("x", {2, 5, 16});
    LnForm f;
    f.eps = b.scalar(1e-5f, {16});
    b.output(layer_norm(b, "x", {16}, f));
    expect_left_alone(b.m, x16, "eps of shape [16]");
  }
  {  // the centered value is read elsewhere too
    Graph b;
    b.input("x", {2, 5, 16});
    const std::string mean = b.mean("x", {-1});
    const std::string d = b.node("Sub", {"x", mean});
    const std::string var = b.mean(b.node("Pow", {d, b.scalar(2)}), {-1});
    const std::string sd = b.node("Sqrt", {b.node("Add", {var, b.scalar(1e-5f)})});
    b.output(b.node("Div", {d, sd}));
    b.output(b.node("Relu", {d}));
    // No LayerNorm: ReduceMean and Sub stay; the rest is an RMSNorm of d, which fuses.
    const Outcome plain = run(b.m, x16, false);
    const Outcome fz = run(b.m, x16, true);
    EXPECT_EQ(fz.stats.patterns_fused, 1u);
    EXPECT_EQ(fz.stats.kernels, 4u);  // ReduceMean, Sub, FusedRmsNorm, Relu
    EXPECT_LE(worst_error(fz, plain), 1e-5);
  }
  {  // the standard deviation is read elsewhere too
    Graph b;
    b.input("x", {2, 5, 16});
    const std::string mean = b.mean("x", {-1});
    const std::string d = b.node("Sub", {"x", mean});
    const std::string var = b.mean(b.node("Mul", {d, d}), {-1});
    const std::string sd = b.node("Sqrt", {b.node("Add", {var, b.scalar(1e-5f)})});
    b.output(b.node("Div", {d, sd}));
    b.output(b.node("Neg", {sd}));
    expect_left_alone(b.m, x16, "std with a second reader");
  }
  {  // an intermediate that is a graph output (the variance)
    Graph b;
    b.input("x", {6, 24});
    const std::string sq = b.node("Pow", {"x", b.scalar(2)});
    const std::string ms = b.mean(sq, {-1});
    const std::string sd = b.node("Sqrt", {b.node("Add", {ms, b.scalar(1e-6f)})});
    b.output(b.node("Div", {"x", sd}));
    b.output(ms);
    expect_left_alone(b.m, {{"x", {6, 24}}}, "mean square is a graph output");
  }
  {  // reduction over axis 1, not the last
    Graph b;
    b.input("x", {2, 5, 16});
    LnForm f;
    f.axes = {1};
    f.affine = false;
    b.output(layer_norm(b, "x", {16}, f));
    expect_left_alone(b.m, x16, "axis 1 of 3");
  }
  {  // gamma [5, 16] broadcasting over the sequence
    Graph b;
    b.input("x", {2, 5, 16});
    LnForm f;
    f.affine = false;
    b.output(b.node("Mul", {layer_norm(b, "x", {16}, f), b.init({5, 16}, 8)}));
    const Outcome plain = run(b.m, x16, false);
    const Outcome fz = run(b.m, x16, true);
    // The core fuses; the broadcasting Mul stays a step of its own.
    EXPECT_EQ(fz.stats.patterns_fused, 1u);
    EXPECT_EQ(fz.stats.kernels, 2u);
    EXPECT_LE(worst_error(fz, plain), 1e-5);
  }
  {  // gamma [1] (one value for every element) is not a LayerNorm scale
    Graph b;
    b.input("x", {2, 5, 16});
    LnForm f;
    f.affine = false;
    b.output(b.node("Mul", {layer_norm(b, "x", {16}, f), b.scalar(1.5f, {1})}));
    const Outcome fz = run(b.m, x16, true);
    EXPECT_EQ(fz.stats.patterns_fused, 1u);
    EXPECT_EQ(fz.stats.kernels, 2u);
  }
  {  // Gelu with 0.6 for 0.5, and with 1.5 for sqrt 2
    for (int which = 0; which < 2; ++which) {
      Graph b;
      b.input("x", {4, 300});
      b.output(which == 0 ? gelu(b, "x", false, 0, 0.6f) : gelu(b, "x", false, 1, 0.5f, 1.5f));
      expect_left_alone(b.m, {{"x", {4, 300}}}, which == 0 ? "Gelu 0.6" : "Gelu sqrt2 1.5");
    }
  }
  {  // the Erf input read elsewhere
    Graph b;
    b.input("x", {4, 300});
    const std::string t = b.node("Div", {"x", b.scalar(float(std::sqrt(2.0)))});
    const std::string e1 = b.node("Add", {b.node("Erf", {t}), b.scalar(1.0f)});
    b.output(b.node("Mul", {b.node("Mul", {"x", e1}), b.scalar(0.5f)}));
    b.output(b.node("Neg", {t}));
    expect_left_alone(b.m, {{"x", {4, 300}}}, "Gelu x / sqrt2 read elsewhere");
  }
}

TEST(PatternFusion, EnvAndOptionTurnItOff) {
  Graph b;
  b.input("x", {4, 300});
  b.output(gelu(b, "x", false, 0));
  EXPECT_EQ(run(b.m, {{"x", {4, 300}}}, false).stats.patterns_fused, 0u);
  EXPECT_EQ(run(b.m, {{"x", {4, 300}}}, true).stats.patterns_fused,
            pattern_fusion_disabled_by_env() ? 0u : 1u);
  EXPECT_TRUE(near_constant(0.7978845608f, 0.79788456080286535588));
  EXPECT_FALSE(near_constant(0.79788, 0.79788456080286535588));
}

// The generated transformer writes each layer's second LayerNorm decomposed and its Gelu in
// the erf form: both fuse per layer, and the result agrees with the unfused plan and with
// ONNX Runtime.
TEST(PatternFusion, GeneratedTransformerAgreesWithOrt) {
  GenerateOptions o;
  o.kind = "transformer";
  o.layers = 3;
  o.width = 128;
  o.heads = 8;
  o.seq = 20;
  o.vocab = 500;
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx");
  ASSERT_TRUE(format::write_model_inline(generate_model(o), path).ok());
  HostTensor in = HostTensor::allocate(kInt64, {2, 20});
  auto* p = static_cast<int64_t*>(in.mutable_data());
  for (int64_t i = 0; i < in.numel(); ++i) p[i] = (i * 7919 + 13) % o.vocab;
  p[in.numel() - 1] = 0;
  auto loaded = format::Model::load(path);
  ASSERT_TRUE(loaded.ok());
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  std::vector<HostTensor> got[2];
  for (bool fuse : {false, true}) {
    SessionOptions so;
    so.fuse_patterns = fuse;
    auto s = Session::create(model, so);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->plan({{"input_ids", {kInt64, {2, 20}}}}).ok());
    EXPECT_EQ((*s)->stats().patterns_fused, fuse ? size_t(2 * o.layers) : 0u);
    auto r = (*s)->run({{"input_ids", in.view()}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    got[fuse] = std::move(*r);
  }
  const double e = worst_error({std::move(got[1]), {}}, {std::move(got[0]), {}});
  std::printf("[pattern fusion] transformer: max |fused - unfused| / max(|unfused|, 1) = %.3g\n",
              e);
  EXPECT_LE(e, 1e-5);

  if (!testing::ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  ASSERT_TRUE(write_npy(dir.file("in.npy"), in.view()).ok());
  const std::string cmd = "node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                          path + " " + dir.file("ort") + " input_ids=" + dir.file("in.npy");
  std::string log;
  ASSERT_EQ(testing::run_command(cmd, &log), 0) << log;
  auto want = read_npy(dir.file("ort/last_hidden_state.npy"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  SessionOptions so;
  auto s = Session::create(model, so);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->plan({{"input_ids", {kInt64, {2, 20}}}}).ok());
  ASSERT_EQ((*s)->stats().patterns_fused, size_t(2 * o.layers));
  auto r = (*s)->run({{"input_ids", in.view()}});
  ASSERT_TRUE(r.ok());
  double mx = 0, worst = 0;
  for (int64_t i = 0; i < want->numel(); ++i) {
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
    worst = std::max(worst, std::fabs(double((*r)[0].as<float>()[i]) - want->as<float>()[i]));
  }
  EXPECT_LE(worst, 1e-4 * mx) << "max |diff| " << worst << ", max |ort| " << mx;
}

// Every pattern kind in one opset-18 graph (ReduceMean axes as inputs) agrees with ONNX
// Runtime within 1e-4 of the output's largest magnitude, fused.
TEST(PatternFusion, AllPatternsAgreeWithOrt) {
  if (!testing::ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  Graph b(18);
  b.input("x", {2, 9, 24});
  LnForm f;
  f.reciprocal = true;
  std::string y = layer_norm(b, "x", {24}, f);
  y = gelu_tanh(b, y, false, 1);
  y = rms_norm(b, y, 3, true);
  y = gelu(b, y, true, 2);
  b.node("Identity", {y}, "y");
  b.output("y");
  testing::TempDir dir;
  const std::string path = dir.file("patterns.onnx");
  ASSERT_TRUE(format::write_model_inline(b.m, path).ok());
  HostTensor in = HostTensor::allocate(kFloat, {2, 9, 24});
  auto v = testing::pseudo_random_floats(size_t(in.numel()), 21);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 3.0f * v[i] + (i % 5 == 0 ? 1.5f : 0.0f);
  std::memcpy(in.mutable_data(), v.data(), v.size() * 4);
  ASSERT_TRUE(write_npy(dir.file("x.npy"), in.view()).ok());
  const std::string cmd = "node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                          path + " " + dir.file("ort") + " x=" + dir.file("x.npy");
  std::string log;
  ASSERT_EQ(testing::run_command(cmd, &log), 0) << log;
  auto want = read_npy(dir.file("ort/y.npy"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto model = std::shared_ptr<const format::Model>(format::Model::from_proto(b.m, "."));
  auto s = Session::create(model, SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE((*s)->plan({{"x", {kFloat, {2, 9, 24}}}}).ok());
  EXPECT_EQ((*s)->stats().patterns_fused, 4u);
  auto r = (*s)->run({{"x", in.view()}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  double mx = 0, worst = 0;
  for (int64_t i = 0; i < want->numel(); ++i) {
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
    worst = std::max(worst, std::fabs(double((*r)[0].as<float>()[i]) - want->as<float>()[i]));
  }
  EXPECT_LE(worst, 1e-4 * mx) << "max |diff| " << worst << ", max |ort| " << mx;
  std::printf("[pattern fusion] all patterns vs ORT: max |diff| %.3g, max |ort| %.3g\n", worst, mx);
}

}  // namespace
}  // namespace onnx_prepack::runtime
