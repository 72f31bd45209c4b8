// Double forms of the norm family (LayerNormalization, BatchNormalization,
// InstanceNormalization, GroupNormalization with rank-2 X, LRN), of Softmax,
// LogSoftmax and Hardmax, and Dropout's ratio of every float type: each
// against a plain double reference computed here, and against ONNX Runtime
// (onnxruntime-node via tests/runtime/ort_run.js) within 1e-12 of the output's
// largest magnitude. Where ORT has no double kernel (InstanceNormalization,
// LRN, Hardmax) it runs an equivalent double graph of operators it has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "format/model.h"
#include "format/model_writer.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool ort_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

using Values = std::vector<double>;

onnx::AttributeProto attr_int(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto attr_float(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

// A graph of nodes over fed inputs and initializers.
class Graph {
 public:
  explicit Graph(int opset) {
    m_.set_ir_version(8);
    m_.add_opset_import()->set_version(opset);
    m_.mutable_graph()->set_name("case");
  }
  Graph& input(const std::string& name, const HostTensor& t) {
    auto* v = m_.mutable_graph()->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(t.dtype());
    for (int64_t d : t.shape())
      v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    feeds_[name] = t.view();
    return *this;
  }
  Graph& init(const std::string& name, const HostTensor& t) {
    auto* p = m_.mutable_graph()->add_initializer();
    p->set_name(name);
    p->set_data_type(t.dtype());
    for (int64_t d : t.shape()) p->add_dims(d);
    p->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
    return *this;
  }
  Graph& output(const std::string& name, int32_t dtype) {
    auto* v = m_.mutable_graph()->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
    return *this;
  }
  Graph& node(const std::string& op, const std::vector<std::string>& ins,
              const std::vector<std::string>& outs,
              const std::vector<onnx::AttributeProto>& attrs = {}) {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name("n" + std::to_string(m_.graph().node_size()));
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    for (const auto& a : attrs) *n->add_attribute() = a;
    return *this;
  }
  const onnx::ModelProto& proto() const { return m_; }
  const std::map<std::string, Tensor>& feeds() const { return feeds_; }

 private:
  onnx::ModelProto m_;
  std::map<std::string, Tensor> feeds_;  // views of the caller's tensors
};

// Outputs by name, or the error.
Result<std::map<std::string, HostTensor>> run_ours(const Graph& g) {
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx");
  OP_RETURN_IF_ERROR(format::write_model_inline(g.proto(), path));
  OP_ASSIGN_OR_RETURN(auto loaded, format::Model::load(path));
  OP_ASSIGN_OR_RETURN(auto s,
                      Session::create(std::shared_ptr<const format::Model>(std::move(loaded)), {}));
  std::map<std::string, Session::Feed> feeds;
  for (const auto& [name, t] : g.feeds()) {
    Session::Feed f;
    f.dtype = t.dtype;
    f.shape = t.shape;
    feeds[name] = f;
  }
  OP_RETURN_IF_ERROR(testing::plan_status(s->plan(feeds)));
  OP_ASSIGN_OR_RETURN(auto got, s->run(g.feeds()));
  std::map<std::string, HostTensor> out;
  for (size_t o = 0; o < s->output_names().size(); ++o) out[s->output_names()[o]] = got[o];
  return out;
}

// ORT's outputs by name (gtest failures when it does not run).
std::map<std::string, HostTensor> run_ort(const Graph& g) {
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx");
  EXPECT_TRUE(format::write_model_inline(g.proto(), path).ok());
  std::string args;
  for (const auto& [name, t] : g.feeds()) {
    EXPECT_TRUE(write_npy(dir.file(name + ".npy"), t).ok());
    args += " " + name + "=" + dir.file(name + ".npy");
  }
  std::string log;
  EXPECT_EQ(
      testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                               path + " " + dir.file("ort") + args,
                           &log),
      0)
      << log;
  std::map<std::string, HostTensor> out;
  for (const auto& o : g.proto().graph().output()) {
    auto t = read_npy(dir.file("ort/" + o.name() + ".npy"));
    EXPECT_TRUE(t.ok()) << o.name() << ": " << t.status().message();
    if (t.ok()) out[o.name()] = std::move(*t);
  }
  return out;
}

// Deterministic doubles in [offset - scale, offset + scale) using all 53 bits (so that a
// computation in float would show).
HostTensor doubles(const Shape& s, uint64_t seed, double scale = 1.0, double offset = 0.0) {
  HostTensor t = HostTensor::allocate(kDouble, s);
  double* d = static_cast<double*>(t.mutable_data());
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    d[i] = offset + scale * (double(state >> 11) / double(uint64_t(1) << 53) * 2.0 - 1.0);
  }
  return t;
}

Values values_of(const HostTensor& t) {
  Values v(size_t(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = t.dtype() == kDouble ? t.as<double>()[i] : double(t.as<float>()[i]);
  }
  return v;
}

HostTensor scalar(int32_t dtype, double v) {
  HostTensor t = HostTensor::allocate(dtype, {});
  if (dtype == kDouble) {
    *static_cast<double*>(t.mutable_data()) = v;
  } else if (dtype == kFloat) {
    *static_cast<float*>(t.mutable_data()) = float(v);
  } else if (dtype == kFloat16) {  // 0, 0.25 and 0.5 only
    const uint16_t bits = v == 0 ? 0 : v == 0.25 ? 0x3400 : 0x3800;
    EXPECT_TRUE(v == 0 || v == 0.25 || v == 0.5);
    *static_cast<uint16_t*>(t.mutable_data()) = bits;
  } else if (dtype == kBool) {
    *static_cast<uint8_t*>(t.mutable_data()) = v != 0;
  }
  return t;
}

// max |got - want| <= rel * max |want|, elementwise over `want`.
void expect_close(const Values& got, const Values& want, double rel, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double mx = 0, worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    mx = std::max(mx, std::fabs(want[i]));
    const double d = std::fabs(got[i] - want[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  EXPECT_LE(worst, rel * mx) << what << ": worst at [" << at << "] " << got[at] << " vs "
                             << want[at] << " (max |want| " << mx << ")";
}

void expect_double(const HostTensor& got, const Values& want, double rel, const std::string& what) {
  EXPECT_EQ(got.dtype(), kDouble) << what;
  expect_close(values_of(got), want, rel, what);
}

// Ours and ORT on the same graph (or ORT on `ort_graph`, an equivalent one): every output
// of ORT's has ours of the same type and shape within 1e-12 relative.
void expect_agrees_with_ort(const Graph& ours_graph, const Graph& ort_graph,
                            const std::string& what) {
  SCOPED_TRACE(what);
  auto ours = run_ours(ours_graph);
  ASSERT_TRUE(ours.ok()) << ours.status().message();
  auto ort = run_ort(ort_graph);
  ASSERT_EQ(ort.size(), size_t(ort_graph.proto().graph().output_size()));
  for (const auto& [name, want] : ort) {
    ASSERT_TRUE(ours->count(name)) << name;
    const HostTensor& got = ours->at(name);
    EXPECT_EQ(got.dtype(), want.dtype()) << name;
    EXPECT_EQ(got.shape(), want.shape()) << name;
    if (want.dtype() == kBool) {
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << name;
    } else {
      expect_close(values_of(got), values_of(want), 1e-12, name);
    }
  }
}

void expect_agrees_with_ort(const Graph& g, const std::string& what) {
  expect_agrees_with_ort(g, g, what);
}

constexpr double kEps = double(1e-5f);  // the epsilon attribute's default, a float

// ---- references, plain double ----

struct LayerNormRef {
  Values y, mean, inv;
};

// X [outer, len] (axis split), scale/bias broadcast over the normalised shape `ns`.
LayerNormRef ref_layer_norm(const HostTensor& x, int64_t axis, const HostTensor& scale,
                            const HostTensor* bias) {
  const Shape& s = x.shape();
  Shape ns(s.begin() + axis, s.end());
  int64_t len = 1, outer = 1;
  for (int64_t d : ns) len *= d;
  for (int64_t i = 0; i < axis; ++i) outer *= s[size_t(i)];
  // Broadcast index of element e of the normalised shape into a parameter of shape p.
  auto param = [&](const HostTensor& p, int64_t e) {
    const Shape& ps = p.shape();
    int64_t off = 0, stride = 1, rem = e;
    for (size_t d = ns.size(); d-- > 0;) {
      const int64_t idx = rem % ns[d];
      rem /= ns[d];
      const size_t pd = d + ps.size() - ns.size();  // right-aligned
      if (d + ps.size() >= ns.size() && ps[pd] != 1) off += idx * stride;
      if (d + ps.size() >= ns.size()) stride *= ps[pd];
    }
    return p.as<double>()[off];
  };
  LayerNormRef r;
  const double* xp = x.as<double>();
  for (int64_t o = 0; o < outer; ++o) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < len; ++j) m += xp[o * len + j];
    m /= double(len);
    for (int64_t j = 0; j < len; ++j) v += (xp[o * len + j] - m) * (xp[o * len + j] - m);
    const double inv = 1.0 / std::sqrt(v / double(len) + kEps);
    r.mean.push_back(m);
    r.inv.push_back(inv);
    for (int64_t j = 0; j < len; ++j) {
      r.y.push_back((xp[o * len + j] - m) * inv * param(scale, j) + (bias ? param(*bias, j) : 0.0));
    }
  }
  return r;
}

int64_t plane_of(const Shape& s) {
  int64_t p = 1;
  for (size_t i = 2; i < s.size(); ++i) p *= s[i];
  return p;
}

// y = (x - mean) / sqrt(var + eps) * scale + bias with per-(n, group) statistics over
// groups of `cg` channels; scale and bias per channel (`per_channel`) or per group.
Values ref_group_norm(const HostTensor& x, int64_t groups, const HostTensor& scale,
                      const HostTensor& bias, bool per_channel, double eps = kEps) {
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = plane_of(x.shape());
  const int64_t cg = c / groups, len = cg * plane;
  const double* xp = x.as<double>();
  Values y(size_t(x.numel()));
  for (int64_t i = 0; i < n * groups; ++i) {
    const double* xr = xp + i * len;
    double m = 0, v = 0;
    for (int64_t j = 0; j < len; ++j) m += xr[j];
    m /= double(len);
    for (int64_t j = 0; j < len; ++j) v += (xr[j] - m) * (xr[j] - m);
    const double sd = std::sqrt(v / double(len) + eps);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t ch = (i % groups) * cg + j / plane, p = per_channel ? ch : i % groups;
      y[size_t(i * len + j)] = (xr[j] - m) / sd * scale.as<double>()[p] + bias.as<double>()[p];
    }
  }
  return y;
}

Values ref_batch_norm(const HostTensor& x, const HostTensor& scale, const HostTensor& b,
                      const HostTensor& mean, const HostTensor& var, bool spatial) {
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = plane_of(x.shape());
  Values y(size_t(x.numel()));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t k = 0; k < plane; ++k) {
        const int64_t e = (i * c + ch) * plane + k, p = spatial ? ch : ch * plane + k;
        y[size_t(e)] = (x.as<double>()[e] - mean.as<double>()[p]) /
                           std::sqrt(var.as<double>()[p] + kEps) * scale.as<double>()[p] +
                       b.as<double>()[p];
      }
    }
  }
  return y;
}

Values ref_lrn(const HostTensor& x, int64_t size, double alpha, double beta, double bias) {
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = plane_of(x.shape());
  const double* xp = x.as<double>();
  Values y(size_t(x.numel()));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t k = 0; k < plane; ++k) {
        double sq = 0;
        for (int64_t j = std::max<int64_t>(0, ch - (size - 1) / 2);
             j <= std::min<int64_t>(c - 1, ch + size / 2); ++j) {
          sq += xp[(i * c + j) * plane + k] * xp[(i * c + j) * plane + k];
        }
        const int64_t e = (i * c + ch) * plane + k;
        y[size_t(e)] = xp[e] / std::pow(bias + alpha / double(size) * sq, beta);
      }
    }
  }
  return y;
}

enum class Soft { kSoftmax, kLogSoftmax, kHardmax };

// Along rows of `len` elements `inner` apart.
Values ref_softmax(const HostTensor& x, int64_t outer, int64_t len, int64_t inner, Soft kind) {
  const double* xp = x.as<double>();
  Values y(size_t(x.numel()));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return size_t((o * len + j) * inner + i); };
      double mx = xp[at(0)], sum = 0;
      int64_t arg = 0;
      for (int64_t j = 1; j < len; ++j) {
        if (xp[at(j)] > mx) mx = xp[at(j)], arg = j;
      }
      for (int64_t j = 0; j < len; ++j) sum += std::exp(xp[at(j)] - mx);
      for (int64_t j = 0; j < len; ++j) {
        y[at(j)] = kind == Soft::kSoftmax      ? std::exp(xp[at(j)] - mx) / sum
                   : kind == Soft::kLogSoftmax ? xp[at(j)] - mx - std::log(sum)
                                               : double(j == arg);
      }
    }
  }
  return y;
}

// ---- ours against the references ----

TEST(NormDouble, LayerNormalizationMatchesReference) {
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale, bias;  // bias {} : none
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, -1, {4}, {4}},
      {{2, 3, 4}, 1, {3, 4}, {}},
      {{2, 3, 4}, 1, {1, 4}, {3, 1}},  // broadcast parameters: the scalar loop
      {{5, 7}, 0, {5, 7}, {7}},
  };
  for (const Case& c : cases) {
    const std::string what = shape_string(c.x) + " axis " + std::to_string(c.axis);
    HostTensor x = doubles(c.x, 1, 3.0, 0.5), s = doubles(c.scale, 2), b = doubles(c.bias, 3);
    Graph g(17);
    g.input("x", x).init("s", s);
    std::vector<std::string> ins = {"x", "s"};
    if (!c.bias.empty()) {
      g.init("b", b);
      ins.push_back("b");
    }
    g.node("LayerNormalization", ins, {"y", "mean", "inv"}, {attr_int("axis", c.axis)})
        .output("y", kDouble)
        .output("mean", kFloat)
        .output("inv", kFloat);
    auto got = run_ours(g);
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    const int64_t axis = c.axis < 0 ? c.axis + int64_t(c.x.size()) : c.axis;
    LayerNormRef want = ref_layer_norm(x, axis, s, c.bias.empty() ? nullptr : &b);
    expect_double(got->at("y"), want.y, 1e-13, what);
    // Mean and InvStdDev are float (type U, stash_type's default): the double statistics
    // rounded once.
    EXPECT_EQ(got->at("mean").dtype(), kFloat);
    EXPECT_EQ(got->at("inv").dtype(), kFloat);
    expect_close(values_of(got->at("mean")), want.mean, 1e-7, what + " mean");
    expect_close(values_of(got->at("inv")), want.inv, 1e-7, what + " inv");
  }
}

TEST(NormDouble, BatchNormalizationMatchesReference) {
  struct Case {
    int opset;
    Shape x, param;
    bool spatial;
  };
  const std::vector<Case> cases = {
      {15, {2, 3, 4, 5}, {3}, true},
      {9, {4, 3}, {3}, true},            // rank 2: N x C
      {7, {2, 3, 2}, {3, 2}, false},     // spatial = 0: parameters per (channel, position)
      {14, {1, 2, 3, 2, 2}, {2}, true},  // rank 5
  };
  for (const Case& c : cases) {
    const std::string what = "opset " + std::to_string(c.opset) + " " + shape_string(c.x);
    HostTensor x = doubles(c.x, 4, 2.0, -0.25), s = doubles(c.param, 5), b = doubles(c.param, 6),
               m = doubles(c.param, 7, 0.5), v = doubles(c.param, 8, 0.4, 0.6);
    Graph g(c.opset);
    g.input("x", x).init("s", s).init("b", b).init("m", m).init("v", v);
    std::vector<onnx::AttributeProto> attrs;
    if (c.opset < 9) attrs.push_back(attr_int("spatial", c.spatial ? 1 : 0));
    g.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, attrs).output("y", kDouble);
    auto got = run_ours(g);
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    expect_double(got->at("y"), ref_batch_norm(x, s, b, m, v, c.spatial), 1e-13, what);
  }
}

TEST(NormDouble, InstanceNormalizationMatchesReference) {
  for (const Shape& xs : {Shape{2, 3, 5}, Shape{1, 2, 3, 4}, Shape{2, 1, 1, 2, 3}}) {
    const int64_t c = xs[1];
    HostTensor x = doubles(xs, 9, 4.0, 1.0), s = doubles({c}, 10), b = doubles({c}, 11);
    Graph g(6);
    g.input("x", x).init("s", s).init("b", b);
    g.node("InstanceNormalization", {"x", "s", "b"}, {"y"}, {attr_float("epsilon", 1e-3f)})
        .output("y", kDouble);
    auto got = run_ours(g);
    ASSERT_TRUE(got.ok()) << shape_string(xs) << ": " << got.status().message();
    // InstanceNormalization is GroupNormalization with one channel per group.
    expect_double(got->at("y"), ref_group_norm(x, c, s, b, true, double(1e-3f)), 1e-13,
                  shape_string(xs));
  }
}

TEST(NormDouble, GroupNormalizationMatchesReferenceAtRanks2To4) {
  struct Case {
    int opset;  // 18: scale and bias per group; 21: per channel
    Shape x;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {18, {2, 6, 3, 2}, 3}, {21, {2, 6, 5}, 2}, {18, {3, 6}, 3},
      {21, {3, 6}, 2},       {18, {2, 4}, 1},    {21, {1, 4}, 4},
  };
  for (const Case& c : cases) {
    const std::string what = "opset " + std::to_string(c.opset) + " " + shape_string(c.x) +
                             " groups " + std::to_string(c.groups);
    const int64_t np = c.opset >= 21 ? c.x[1] : c.groups;
    HostTensor x = doubles(c.x, 12, 3.0, -1.0), s = doubles({np}, 13), b = doubles({np}, 14);
    Graph g(c.opset);
    g.input("x", x).init("s", s).init("b", b);
    g.node("GroupNormalization", {"x", "s", "b"}, {"y"}, {attr_int("num_groups", c.groups)})
        .output("y", kDouble);
    auto got = run_ours(g);
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    expect_double(got->at("y"), ref_group_norm(x, c.groups, s, b, c.opset >= 21), 1e-13, what);
  }
}

TEST(NormDouble, GroupNormalizationOfFloat16RankTwoRunsThroughFloat) {
  HostTensor x = HostTensor::allocate(kFloat16, {2, 4});
  const uint16_t bits[] = {0x3C00, 0x4000, 0x4200, 0x4400,   // 1 2 3 4
                           0xBC00, 0x0000, 0x3C00, 0x4000};  // -1 0 1 2
  std::memcpy(x.mutable_data(), bits, sizeof(bits));
  HostTensor s = HostTensor::allocate(kFloat16, {2}), b = HostTensor::allocate(kFloat16, {2});
  const uint16_t one[] = {0x3C00, 0x3C00};
  std::memcpy(s.mutable_data(), one, sizeof(one));
  Graph g(18);
  g.input("x", x).init("s", s).init("b", b);
  g.node("GroupNormalization", {"x", "s", "b"}, {"y"}, {attr_int("num_groups", 2)})
      .output("y", kFloat16);
  auto got = run_ours(g);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->at("y").dtype(), kFloat16);
  EXPECT_EQ(got->at("y").shape(), (Shape{2, 4}));
}

TEST(NormDouble, LrnMatchesReference) {
  struct Case {
    Shape x;
    int64_t size;
    float alpha, beta, bias;
  };
  const std::vector<Case> cases = {
      {{2, 5, 3, 2}, 3, 1e-4f, 0.75f, 1.0f},
      {{1, 7, 4, 1}, 5, 0.3f, 0.6f, 2.5f},
      {{1, 3, 2}, 1, 0.5f, 1.5f, 0.75f},
  };
  for (const Case& c : cases) {
    const std::string what = shape_string(c.x) + " size " + std::to_string(c.size);
    HostTensor x = doubles(c.x, 15, 2.0);
    Graph g(13);
    g.input("x", x);
    g.node("LRN", {"x"}, {"y"},
           {attr_int("size", c.size), attr_float("alpha", c.alpha), attr_float("beta", c.beta),
            attr_float("bias", c.bias)})
        .output("y", kDouble);
    auto got = run_ours(g);
    ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
    expect_double(got->at("y"), ref_lrn(x, c.size, c.alpha, c.beta, c.bias), 1e-13, what);
  }
}

TEST(NormDouble, SoftmaxLogSoftmaxHardmaxMatchReference) {
  struct Case {
    int opset;
    Shape x;
    int64_t axis, outer, len, inner;
  };
  const std::vector<Case> cases = {
      {13, {2, 4, 3}, -1, 8, 3, 1}, {13, {2, 4, 3}, 1, 2, 4, 3},   // strided rows
      {13, {5}, 0, 1, 5, 1},        {11, {2, 3, 4}, 1, 2, 12, 1},  // coerced to 2-D at axis
      {1, {2, 3, 4}, 2, 6, 4, 1},
  };
  const std::pair<const char*, Soft> ops[] = {
      {"Softmax", Soft::kSoftmax}, {"LogSoftmax", Soft::kLogSoftmax}, {"Hardmax", Soft::kHardmax}};
  for (const auto& [op, kind] : ops) {
    for (const Case& c : cases) {
      const std::string what = std::string(op) + "-" + std::to_string(c.opset) + " " +
                               shape_string(c.x) + " axis " + std::to_string(c.axis);
      HostTensor x = doubles(c.x, 16, 6.0);
      Graph g(c.opset);
      g.input("x", x).node(op, {"x"}, {"y"}, {attr_int("axis", c.axis)}).output("y", kDouble);
      auto got = run_ours(g);
      ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
      expect_double(got->at("y"), ref_softmax(x, c.outer, c.len, c.inner, kind), 1e-14, what);
    }
  }
}

TEST(NormDouble, DropoutReadsARatioOfEveryFloatType) {
  for (int32_t data_type : {kFloat, kDouble}) {
    for (int32_t ratio_type : {kFloat16, kFloat, kDouble}) {
      const std::string what =
          dtype_name(data_type) + " data, " + dtype_name(ratio_type) + " ratio";
      HostTensor x = doubles({2, 3}, 17);
      if (data_type == kFloat) {
        HostTensor f = HostTensor::allocate(kFloat, {2, 3});
        for (int64_t i = 0; i < 6; ++i)
          static_cast<float*>(f.mutable_data())[i] = float(x.as<double>()[i]);
        x = std::move(f);
      }
      // Inference: the data itself and an all-true mask, whatever the ratio.
      Graph g(13);
      g.input("x", x).init("r", scalar(ratio_type, 0.25));
      g.node("Dropout", {"x", "r"}, {"y", "mask"}).output("y", data_type).output("mask", kBool);
      auto got = run_ours(g);
      ASSERT_TRUE(got.ok()) << what << ": " << got.status().message();
      EXPECT_EQ(got->at("y").dtype(), data_type) << what;
      EXPECT_EQ(std::memcmp(got->at("y").data(), x.data(), x.nbytes()), 0) << what;
      EXPECT_EQ(got->at("mask").dtype(), kBool) << what;
      for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(got->at("mask").as<uint8_t>()[i], 1) << what;
      // Training mode: runs with a ratio of 0 (nothing dropped), refused with 0.5, so the
      // ratio's value was read.
      for (double ratio : {0.0, 0.5}) {
        Graph t(13);
        t.input("x", x).init("r", scalar(ratio_type, ratio)).init("t", scalar(kBool, 1));
        t.node("Dropout", {"x", "r", "t"}, {"y"}).output("y", data_type);
        auto r = run_ours(t);
        if (ratio == 0) {
          ASSERT_TRUE(r.ok()) << what << ": " << r.status().message();
          EXPECT_EQ(std::memcmp(r->at("y").data(), x.data(), x.nbytes()), 0) << what;
        } else {
          ASSERT_FALSE(r.ok()) << what;
          EXPECT_NE(r.status().message().find("training-mode Dropout"), std::string::npos)
              << r.status().message();
        }
      }
    }
  }
}

// ---- ours against ONNX Runtime ----

TEST(NormDoubleOrt, LayerNormalization) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  for (int64_t axis : {-1, 1, 0}) {
    HostTensor x = doubles({3, 4, 5}, 20, 2.0, 0.75), s = doubles({4, 5}, 21),
               b = doubles({4, 5}, 22);
    if (axis != 1) s = doubles(axis == -1 ? Shape{5} : Shape{3, 4, 5}, 21);
    if (axis != 1) b = doubles(axis == -1 ? Shape{5} : Shape{3, 4, 5}, 22);
    Graph g(17);
    g.input("x", x).init("s", s).init("b", b);
    g.node("LayerNormalization", {"x", "s", "b"}, {"y"}, {attr_int("axis", axis)})
        .output("y", kDouble);
    expect_agrees_with_ort(g, "axis " + std::to_string(axis));
  }
}

TEST(NormDoubleOrt, BatchNormalization) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  for (int opset : {9, 15}) {
    for (const Shape& xs : {Shape{2, 3, 4, 5}, Shape{4, 3}}) {
      HostTensor x = doubles(xs, 23, 2.0), s = doubles({3}, 24), b = doubles({3}, 25),
                 m = doubles({3}, 26, 0.5), v = doubles({3}, 27, 0.4, 0.6);
      Graph g(opset);
      g.input("x", x).init("s", s).init("b", b).init("m", m).init("v", v);
      g.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {attr_float("epsilon", 1e-3f)})
          .output("y", kDouble);
      expect_agrees_with_ort(g, "opset " + std::to_string(opset) + " " + shape_string(xs));
    }
  }
}

TEST(NormDoubleOrt, InstanceNormalizationAsGroupNormalization) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  // ORT has no double InstanceNormalization kernel: it runs GroupNormalization-21 with one
  // channel per group and a double stash type, the same computation by ONNX's function.
  for (const Shape& xs : {Shape{2, 3, 5}, Shape{2, 4, 3, 2}}) {
    const int64_t c = xs[1];
    HostTensor x = doubles(xs, 28, 3.0, 0.5), s = doubles({c}, 29), b = doubles({c}, 30);
    Graph ours(6), ort(21);
    ours.input("x", x).init("s", s).init("b", b);
    ours.node("InstanceNormalization", {"x", "s", "b"}, {"y"}).output("y", kDouble);
    ort.input("x", x).init("s", s).init("b", b);
    ort.node("GroupNormalization", {"x", "s", "b"}, {"y"},
             {attr_int("num_groups", c), attr_int("stash_type", kDouble)})
        .output("y", kDouble);
    expect_agrees_with_ort(ours, ort, shape_string(xs));
  }
}

TEST(NormDoubleOrt, GroupNormalization) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  struct Case {
    int opset;
    Shape x;
    int64_t groups;
  };
  // Opset 21 with stash_type double: its function computes the statistics in double (with
  // the default, float, ORT's expansion casts X to float first).
  for (const Case& c : std::vector<Case>{
           {18, {2, 6, 3, 2}, 3}, {21, {2, 6, 5}, 2}, {18, {3, 6}, 3}, {21, {3, 6}, 2}}) {
    const int64_t np = c.opset >= 21 ? c.x[1] : c.groups;
    HostTensor x = doubles(c.x, 31, 3.0, -1.0), s = doubles({np}, 32), b = doubles({np}, 33);
    Graph g(c.opset);
    g.input("x", x).init("s", s).init("b", b);
    std::vector<onnx::AttributeProto> attrs = {attr_int("num_groups", c.groups)};
    if (c.opset >= 21) attrs.push_back(attr_int("stash_type", kDouble));
    g.node("GroupNormalization", {"x", "s", "b"}, {"y"}, attrs).output("y", kDouble);
    expect_agrees_with_ort(g, "opset " + std::to_string(c.opset) + " " + shape_string(c.x));
  }
}

TEST(NormDoubleOrt, LrnAsMatMulOfSquares) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  // ORT has no double LRN kernel: it runs y = x / (bias + alpha / size * W @ x^2)^beta over
  // [N, C, H * W], W the band of `size` channels around each.
  const int64_t n = 2, c = 5, h = 3, w = 2, size = 3;
  const float alpha = 0.2f, beta = 0.75f, bias = 1.5f;
  HostTensor x = doubles({n, c, h, w}, 34, 2.0);
  Graph ours(13);
  ours.input("x", x);
  ours.node("LRN", {"x"}, {"y"},
            {attr_int("size", size), attr_float("alpha", alpha), attr_float("beta", beta),
             attr_float("bias", bias)})
      .output("y", kDouble);
  HostTensor band = HostTensor::allocate(kDouble, {c, c});
  for (int64_t i = 0; i < c; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      static_cast<double*>(band.mutable_data())[i * c + j] =
          j >= i - (size - 1) / 2 && j <= i + size / 2 ? 1.0 : 0.0;
    }
  }
  HostTensor flat = HostTensor::allocate(kInt64, {3}), back = HostTensor::allocate(kInt64, {4});
  const int64_t fd[] = {n, c, h * w}, bd[] = {n, c, h, w};
  std::memcpy(flat.mutable_data(), fd, sizeof(fd));
  std::memcpy(back.mutable_data(), bd, sizeof(bd));
  Graph ort(13);
  ort.input("x", x)
      .init("band", band)
      .init("flat", flat)
      .init("back", back)
      .init("k", scalar(kDouble, double(alpha) / double(size)))
      .init("bias", scalar(kDouble, bias))
      .init("beta", scalar(kDouble, beta));
  ort.node("Mul", {"x", "x"}, {"sq"})
      .node("Reshape", {"sq", "flat"}, {"sq2"})
      .node("MatMul", {"band", "sq2"}, {"sum2"})
      .node("Reshape", {"sum2", "back"}, {"sum"})
      .node("Mul", {"sum", "k"}, {"ks"})
      .node("Add", {"ks", "bias"}, {"d"})
      .node("Pow", {"d", "beta"}, {"dp"})
      .node("Div", {"x", "dp"}, {"y"})
      .output("y", kDouble);
  expect_agrees_with_ort(ours, ort, "LRN size 3");
}

TEST(NormDoubleOrt, SoftmaxAndLogSoftmax) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int opset : {11, 13}) {
      for (int64_t axis : {1, -1}) {
        HostTensor x = doubles({2, 4, 3}, 35, 8.0);
        Graph g(opset);
        g.input("x", x).node(op, {"x"}, {"y"}, {attr_int("axis", axis)}).output("y", kDouble);
        expect_agrees_with_ort(
            g, std::string(op) + "-" + std::to_string(opset) + " axis " + std::to_string(axis));
      }
    }
  }
}

TEST(NormDoubleOrt, HardmaxAsArgMaxEqualToARange) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  // ORT has no double Hardmax kernel: it runs Cast(Equal(ArgMax(x, axis), range), double).
  const int64_t len = 4;
  HostTensor x = doubles({2, len, 3}, 36, 5.0);
  Graph ours(13);
  ours.input("x", x).node("Hardmax", {"x"}, {"y"}, {attr_int("axis", 1)}).output("y", kDouble);
  HostTensor range = HostTensor::allocate(kInt64, {1, len, 1});
  for (int64_t i = 0; i < len; ++i) static_cast<int64_t*>(range.mutable_data())[i] = i;
  Graph ort(13);
  ort.input("x", x).init("range", range);
  ort.node("ArgMax", {"x"}, {"arg"}, {attr_int("axis", 1), attr_int("keepdims", 1)})
      .node("Equal", {"arg", "range"}, {"hit"})
      .node("Cast", {"hit"}, {"y"}, {attr_int("to", kDouble)})
      .output("y", kDouble);
  expect_agrees_with_ort(ours, ort, "Hardmax axis 1");
}

TEST(NormDoubleOrt, Dropout) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  for (int32_t ratio_type : {kFloat16, kFloat, kDouble}) {
    HostTensor x = doubles({3, 4}, 37);
    Graph g(13);
    g.input("x", x).init("r", scalar(ratio_type, 0.5));
    g.node("Dropout", {"x", "r"}, {"y", "mask"}).output("y", kDouble).output("mask", kBool);
    expect_agrees_with_ort(g, dtype_name(ratio_type) + " ratio");
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
