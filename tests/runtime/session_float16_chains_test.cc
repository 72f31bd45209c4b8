// SessionOptions::float16_float_chains (session_float16_chains.cc): FLOAT16
// values stay float between nodes that compute in float, so a FLOAT16 chain
// equals the same graph in float32 rounded at its output, bit for bit; off, it
// equals the float32 graph with a float16 round trip after every node; a graph
// output and a value between two data movers stay rounded either way.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "format/model.h"
#include "kernels/vec_math/vec_half.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

// Builds the same graph in FLOAT16 or in float32 (with a float16 round trip,
// Cast to FLOAT16 and back, after the values named in `round_trip`).
class Graph {
 public:
  explicit Graph(int32_t type) : type_(type) {
    m_.set_ir_version(8);
    auto* o = m_.add_opset_import();
    o->set_version(17);
    g_ = m_.mutable_graph();
    g_->set_name("chains");
  }
  void input(const std::string& name, std::vector<int64_t> dims) {
    io(g_->add_input(), name, dims);
  }
  void output(const std::string& name, std::vector<int64_t> dims) {
    io(g_->add_output(), name, dims);
  }
  // A weight of values exact in float16.
  void weight(const std::string& name, std::vector<int64_t> dims, uint32_t seed, float scale) {
    size_t n = 1;
    for (int64_t d : dims) n *= size_t(d);
    auto v = testing::pseudo_random_floats(n, seed);
    for (float& f : v) f = half_to_float(float_to_half(f * scale));
    onnx::TensorProto t = testing::float_tensor(name, dims, v);
    if (type_ == kFloat16) {
      std::string raw(n * 2, '\0');
      for (size_t i = 0; i < n; ++i) {
        uint16_t h = float_to_half(v[i]);
        std::memcpy(&raw[i * 2], &h, 2);
      }
      t.clear_float_data();
      t.set_data_type(kFloat16);
      t.set_raw_data(raw);
    }
    *g_->add_initializer() = t;
  }
  void int64s(const std::string& name, std::vector<int64_t> values) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::string out,
                        bool round_trip = false) {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (auto& s : in) n->add_input(s);
    if (type_ == kFloat16 || !round_trip) {
      n->add_output(out);
      return n;
    }
    n->add_output(out + "_f32");
    cast(out + "_f32", out + "_f16", kFloat16);
    cast(out + "_f16", out, kFloat);
    return n;
  }
  void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  std::shared_ptr<const format::Model> model() const {
    return std::shared_ptr<const format::Model>(format::Model::from_proto(m_, "."));
  }

 private:
  void io(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type_);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void cast(const std::string& in, const std::string& out, int32_t to) {
    auto* n = g_->add_node();
    n->set_op_type("Cast");
    n->set_name(out);
    n->add_input(in);
    n->add_output(out);
    auto* a = n->add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to);
  }
  int32_t type_;
  onnx::ModelProto m_;
  onnx::GraphProto* g_;
};

constexpr int64_t kC = 8, kH = 6;

HostTensor input_of(int32_t type) {
  auto v = testing::pseudo_random_floats(size_t(kC * kH * kH), 11);
  HostTensor t = HostTensor::allocate(type, {1, kC, kH, kH});
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t h = float_to_half(v[i]);
    if (type == kFloat16)
      static_cast<uint16_t*>(t.mutable_data())[i] = h;
    else
      static_cast<float*>(t.mutable_data())[i] = half_to_float(h);
  }
  return t;
}

// Every output of `g` for the input above; float32 outputs rounded to float16.
std::vector<std::vector<uint16_t>> run(const Graph& g, int32_t type, bool chains) {
  SessionOptions o;
  o.float16_float_chains = chains;
  auto s = Session::create(g.model(), o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  HostTensor x = input_of(type);
  Status st = testing::plan_status((*s)->plan({{"x", {type, x.shape()}}}));
  EXPECT_TRUE(st.ok()) << st.message();
  auto got = (*s)->run({{"x", x.view()}});
  EXPECT_TRUE(got.ok()) << got.status().message();
  std::vector<std::vector<uint16_t>> outs;
  for (const HostTensor& t : *got) {
    std::vector<uint16_t> h(size_t(t.numel()));
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = type == kFloat16 ? static_cast<const uint16_t*>(t.data())[i]
                              : float_to_half(static_cast<const float*>(t.data())[i]);
    }
    outs.push_back(std::move(h));
  }
  return outs;
}

void conv(Graph& g, const std::string& x, const std::string& w, const std::string& y, bool rt,
          uint32_t seed) {
  g.weight(w, {kC, kC, 3, 3}, seed, 0.3f);
  g.weight(w + "_b", {kC}, seed + 1, 0.1f);
  auto* n = g.node("Conv", {x, w, w + "_b"}, y, rt);
  g.ints(n, "kernel_shape", {3, 3});
  g.ints(n, "pads", {1, 1, 1, 1});
}

// Conv -> Relu -> MaxPool -> Resize -> Conv -> Sigmoid, as FLOAT16 or float32
// (round-tripping every node but the last when `rt`).
Graph cnn(int32_t type, bool rt) {
  Graph g(type);
  g.input("x", {1, kC, kH, kH});
  g.output("y", {1, kC, kH, kH});
  conv(g, "x", "w1", "c1", rt, 1);
  g.node("Relu", {"c1"}, "r1", rt);
  auto* p = g.node("MaxPool", {"r1"}, "p1", rt);
  g.ints(p, "kernel_shape", {2, 2});
  g.ints(p, "strides", {2, 2});
  auto* sc = g.node("Constant", {}, "scales");
  auto* a = sc->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = testing::float_tensor("scales", {4}, {1, 1, 2, 2});
  auto* r = g.node("Resize", {"p1", "", "scales"}, "u1", rt);
  auto* mode = r->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("linear");
  conv(g, "u1", "w2", "c2", rt, 3);
  g.node("Sigmoid", {"c2"}, "y");
  return g;
}

TEST(Float16Chains, ChainEqualsFloatGraphRoundedOnce) {
  const auto f32 = run(cnn(kFloat, false), kFloat, false);
  const auto chains = run(cnn(kFloat16, false), kFloat16, true);
  EXPECT_EQ(chains, f32);
}

TEST(Float16Chains, DefaultRoundsEveryNode) {
  const auto round_trips = run(cnn(kFloat, true), kFloat, false);
  const auto rounded = run(cnn(kFloat16, false), kFloat16, false);
  EXPECT_EQ(rounded, round_trips);
  // The option changes the answer on this graph (so the test above can fail).
  EXPECT_NE(rounded, run(cnn(kFloat16, false), kFloat16, true));
}

// Conv -> y1 (a graph output) -> Relu -> y2: y1 is rounded for Relu too.
TEST(Float16Chains, GraphOutputStaysRoundedForItsReaders) {
  auto build = [](int32_t type, bool rt) {
    Graph g(type);
    g.input("x", {1, kC, kH, kH});
    g.output("y1", {1, kC, kH, kH});
    g.output("y2", {1, kC, kH, kH});
    conv(g, "x", "w1", "y1", rt, 5);
    g.node("Relu", {"y1"}, "y2");
    return g;
  };
  EXPECT_EQ(run(build(kFloat16, false), kFloat16, true), run(build(kFloat, true), kFloat, false));
}

// A data mover alone between two float nodes runs in float (Conv -> Reshape ->
// Relu is one chain); two in a row keep their value rounded, as ONNX Runtime
// runs them in float16 (Conv -> Transpose -> Transpose -> Relu).
TEST(Float16Chains, DataMovers) {
  auto lone = [](int32_t type) {
    Graph g(type);
    g.input("x", {1, kC, kH, kH});
    g.output("y", {1, kC * kH * kH});
    conv(g, "x", "w1", "c1", false, 7);
    g.int64s("shape", {1, kC * kH * kH});
    g.node("Reshape", {"c1", "shape"}, "s1");
    g.node("Relu", {"s1"}, "y");
    return g;
  };
  EXPECT_EQ(run(lone(kFloat16), kFloat16, true), run(lone(kFloat), kFloat, false));
  auto pair = [](int32_t type, bool rt) {
    Graph g(type);
    g.input("x", {1, kC, kH, kH});
    g.output("y", {1, kC, kH, kH});
    conv(g, "x", "w1", "c1", rt, 9);
    auto* t1 = g.node("Transpose", {"c1"}, "t1");
    g.ints(t1, "perm", {0, 1, 3, 2});
    auto* t2 = g.node("Transpose", {"t1"}, "t2");
    g.ints(t2, "perm", {0, 1, 3, 2});
    g.node("Sigmoid", {"t2"}, "y");
    return g;
  };
  EXPECT_EQ(run(pair(kFloat16, false), kFloat16, true), run(pair(kFloat, true), kFloat, false));
}

}  // namespace
}  // namespace onnx_prepack::runtime
