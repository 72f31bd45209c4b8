// Executor behaviour: refusal of unsupported operators, plan statistics
// (folding, aliases, buffer reuse), numerics against a direct computation, npy.
#include "runtime/session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/generate.h"
#include "runtime/kernel.h"
#include "runtime/npy.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

std::shared_ptr<const format::Model> model_of(onnx::ModelProto proto) {
  return std::shared_ptr<const format::Model>(format::Model::from_proto(std::move(proto), "."));
}

TEST(Session, RefusesEveryUnsupportedOperatorBeforeRunning) {
  onnx::ModelProto m = testing::make_mlp(4, 8, 2, 1);
  auto* g = m.mutable_graph();
  auto* a = g->add_node();
  a->set_op_type("StringNormalizer");
  a->add_input("y");
  a->add_output("z1");
  auto* b = g->add_node();
  b->set_op_type("Bernoulli");
  b->add_input("y");
  b->add_output("z2");
  auto* c = g->add_node();
  c->set_op_type("FusedGemm");
  c->set_domain("com.microsoft");
  c->add_input("y");
  c->add_output("z3");
  auto s = Session::create(model_of(m), {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnimplemented);
  const std::string& msg = s.status().message();
  EXPECT_NE(msg.find("StringNormalizer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Bernoulli"), std::string::npos) << msg;
  EXPECT_NE(msg.find("com.microsoft::FusedGemm"), std::string::npos) << msg;
}

TEST(Session, RefusesCyclesAndUndefinedInputs) {
  onnx::ModelProto m = testing::make_mlp(4, 8, 2, 1);
  m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  auto s = Session::create(model_of(m), {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'nowhere' is not defined"), std::string::npos);
}

// y = relu(x W1 + b1) W2 + b2, computed directly.
std::vector<float> mlp_reference(const onnx::ModelProto& m, const std::vector<float>& x,
                                 int batch) {
  auto get = [&](const std::string& name) {
    for (const auto& t : m.graph().initializer()) {
      if (t.name() == name) {
        std::vector<float> v(size_t(t.raw_data().size() / 4));
        std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
        return std::make_pair(v, std::vector<int64_t>(t.dims().begin(), t.dims().end()));
      }
    }
    return std::make_pair(std::vector<float>(), std::vector<int64_t>());
  };
  std::vector<float> cur = x;
  int64_t width = int64_t(x.size()) / batch;
  for (int layer = 0;; ++layer) {
    auto [w, wd] = get("fc" + std::to_string(layer) + ".weight");
    if (w.empty()) break;
    auto [bias, bd] = get("fc" + std::to_string(layer) + ".bias");
    int64_t n = wd[1];
    std::vector<float> next(size_t(batch * n));
    for (int i = 0; i < batch; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < width; ++k)
          acc += double(cur[size_t(i * width + k)]) * w[size_t(k * n + j)];
        next[size_t(i * n + j)] = float(acc) + bias[size_t(j)];
      }
    }
    bool last = get("fc" + std::to_string(layer + 1) + ".weight").first.empty();
    if (!last)
      for (auto& v : next) v = std::max(v, 0.0f);
    cur = std::move(next);
    width = n;
  }
  return cur;
}

TEST(Session, GeneratedMlpMatchesDirectComputationAndReusesBuffers) {
  GenerateOptions o;
  o.layers = 6;
  o.width = 96;
  onnx::ModelProto m = generate_model(o);
  auto s = Session::create(model_of(m), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const int batch = 5;
  std::vector<float> x = testing::pseudo_random_floats(size_t(batch * o.width), 3);
  ASSERT_TRUE((*s)->plan({{"x", {kFloat, {batch, o.width}}}}).ok());
  const auto& st = (*s)->stats();
  EXPECT_EQ(st.kernels, 17u);                 // 6 MatMul + 6 Add + 5 Relu
  EXPECT_LT(st.arena_bytes, st.value_bytes);  // slots reused across lifetimes
  Tensor in{kFloat, {batch, o.width}, x.data()};
  auto out = (*s)->run({{"x", in}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto want = mlp_reference(m, x, batch);
  ASSERT_EQ((*out)[0].numel(), int64_t(want.size()));
  double mx = 0;
  for (float v : want) mx = std::max(mx, double(std::fabs(v)));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR((*out)[0].as<float>()[i], want[i], 1e-4 * mx) << i;
  }
  // A second run gives the same bytes.
  auto again = (*s)->run({{"x", in}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::memcmp((*out)[0].data(), (*again)[0].data(), (*out)[0].nbytes()), 0);
}

TEST(Session, TransformerFoldsShapeArithmeticAndAliasesReshapes) {
  GenerateOptions o;
  o.kind = "transformer";
  o.layers = 2;
  o.width = 32;
  o.heads = 4;
  o.seq = 6;
  o.vocab = 50;
  auto s = Session::create(model_of(generate_model(o)), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE((*s)->plan({{"input_ids", {kInt64, {2, 6}}}}).ok());
  const auto& st = (*s)->stats();
  EXPECT_GT(st.folded, 0u);   // Shape -> Gather -> Unsqueeze computed at plan time
  EXPECT_GT(st.aliases, 0u);  // Reshape/Unsqueeze share storage
  EXPECT_LT(st.kernels, st.nodes);
  std::vector<int64_t> ids = {1, 2, 3, 0, 0, 0, 7, 8, 9, 10, 11, 12};
  auto out = (*s)->run({{"input_ids", Tensor{kInt64, {2, 6}, ids.data()}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6, 32}));
  for (int64_t i = 0; i < (*out)[0].numel(); ++i)
    ASSERT_TRUE(std::isfinite((*out)[0].as<float>()[i]));
  // The plan checks fed shapes.
  auto bad = (*s)->run({{"input_ids", Tensor{kInt64, {1, 6}, ids.data()}}});
  EXPECT_FALSE(bad.ok());
}

TEST(Session, ShapeErrorsNameTheNode) {
  GenerateOptions o;
  o.layers = 1;
  o.width = 8;
  auto s = Session::create(model_of(generate_model(o)), {});
  ASSERT_TRUE(s.ok());
  Status st = (*s)->plan({{"x", {kFloat, {2, 8}}}});
  EXPECT_TRUE(st.ok()) << st.message();
  // The declared width is 8: 9 columns is refused with the input named.
  st = (*s)->plan({{"x", {kFloat, {2, 9}}}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'x'"), std::string::npos) << st.message();
}

TEST(Npy, RoundTripsTypesAndShapes) {
  testing::TempDir dir;
  std::vector<float> f = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  ASSERT_TRUE(write_npy(dir.file("f.npy"), Tensor{kFloat, {2, 3}, f.data()}).ok());
  auto r = read_npy(dir.file("f.npy"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->shape(), (Shape{2, 3}));
  EXPECT_EQ(std::memcmp(r->data(), f.data(), 24), 0);
  std::vector<int64_t> i = {42};
  ASSERT_TRUE(write_npy(dir.file("i.npy"), Tensor{kInt64, {}, i.data()}).ok());
  auto ri = read_npy(dir.file("i.npy"));
  ASSERT_TRUE(ri.ok());
  EXPECT_EQ(ri->shape(), Shape{});
  EXPECT_EQ(ri->as<int64_t>()[0], 42);
  testing::write_bytes(dir.file("bad.npy"), "\x93NUMPY\x01\x00\x10\x00{'descr': '<c8'}");
  EXPECT_FALSE(read_npy(dir.file("bad.npy")).ok());
}

}  // namespace
}  // namespace onnx_prepack::runtime
