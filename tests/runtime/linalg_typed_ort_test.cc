// double MatMul and Gemm and int32/int64 MatMul agree with ONNX Runtime
// (onnxruntime-node via tests/runtime/ort_run.js): integers bitwise, double
// within 1e-12 of the output's largest magnitude. ORT's CPU provider has no
// integer Gemm (docs/runtime.md gives ours). Skipped without node and ORT.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "format/model_writer.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

std::string ort_modules() {
  const char* env = std::getenv("ORT_NODE_MODULES");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(OP_PEERS_DIR);
}

bool ort_available() {
  std::string out;
  return fs::exists(ort_modules() + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

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

// One `op` node over inputs `ins` (all of one type), output "y"; opset 13.
onnx::ModelProto one_node(const std::string& op, const std::map<std::string, HostTensor>& ins,
                          const std::vector<onnx::AttributeProto>& attrs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("case");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("node");
  int32_t dt = kUndefined;
  for (const auto& [name, t] : ins) {  // names sort as the inputs' order: a, b, c
    auto* v = g->add_input();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t.dtype());
    for (int64_t d : t.shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    n->add_input(name);
    dt = t.dtype();
  }
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(dt);
  n->add_output("y");
  for (const auto& a : attrs) *n->add_attribute() = a;
  return m;
}

// Values in [-span, span]: integers, or doubles with a fraction.
HostTensor values(int32_t dtype, const Shape& s, uint32_t seed, int64_t span) {
  HostTensor t = HostTensor::allocate(dtype, s);
  uint32_t x = seed * 2654435761u + 7;
  for (int64_t i = 0; i < t.numel(); ++i) {
    x = x * 1664525u + 1013904223u;
    const int64_t v = int64_t((x >> 8) % uint32_t(2 * span + 1)) - span;
    if (dtype == kDouble) {
      static_cast<double*>(t.mutable_data())[i] = double(v) / 7.0;
    } else if (dtype == kInt32) {
      static_cast<int32_t*>(t.mutable_data())[i] = int32_t(v);
    } else {
      static_cast<int64_t*>(t.mutable_data())[i] = v * 1000003;
    }
  }
  return t;
}

void check(const onnx::ModelProto& model, const std::map<std::string, HostTensor>& inputs,
           const std::string& what) {
  SCOPED_TRACE(what);
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx");
  ASSERT_TRUE(format::write_model_inline(model, path).ok());
  std::string args;
  std::map<std::string, Session::Feed> feeds;
  std::map<std::string, Tensor> views;
  for (const auto& [name, t] : inputs) {
    ASSERT_TRUE(write_npy(dir.file(name + ".npy"), t.view()).ok());
    args += " " + name + "=" + dir.file(name + ".npy");
    Session::Feed f;
    f.dtype = t.dtype();
    f.shape = t.shape();
    feeds[name] = f;
    views[name] = t.view();
  }
  std::string log;
  ASSERT_EQ(testing::run_command("ORT_NODE_MODULES='" + ort_modules() + "' node " +
                                     std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                                     path + " " + dir.file("ort") + args,
                                 &log),
            0)
      << log;
  auto loaded = format::Model::load(path);
  ASSERT_TRUE(loaded.ok());
  auto s = Session::create(std::shared_ptr<const format::Model>(std::move(*loaded)), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  Status planned = testing::plan_status((*s)->plan(feeds));
  ASSERT_TRUE(planned.ok()) << planned.message();
  auto got = (*s)->run(views);
  ASSERT_TRUE(got.ok()) << got.status().message();
  auto want = read_npy(dir.file("ort/y.npy"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  const HostTensor& g = (*got)[0];
  ASSERT_EQ(g.dtype(), want->dtype());
  ASSERT_EQ(g.shape(), want->shape());
  if (g.dtype() == kDouble) {
    double mx = 0, worst = 0;
    for (int64_t i = 0; i < want->numel(); ++i) {
      mx = std::max(mx, std::fabs(want->as<double>()[i]));
      worst = std::max(worst, std::fabs(g.as<double>()[i] - want->as<double>()[i]));
    }
    EXPECT_LE(worst, 1e-12 * std::max(mx, 1.0)) << "max |diff| " << worst;
  } else {
    EXPECT_EQ(std::memcmp(g.data(), want->data(), g.nbytes()), 0) << "not bitwise equal";
  }
}

const std::vector<std::pair<Shape, Shape>> kShapes = {
    {{7, 9}, {9, 5}},       {{2, 3, 4}, {4, 6}},  {{3, 1, 2, 4}, {5, 4, 3}}, {{4}, {4, 3}},
    {{3, 4}, {4}},          {{6}, {6}},           {{4}, {2, 4, 3}},          {{2, 3, 4}, {4}},
    {{1, 5, 8}, {3, 8, 2}}, {{33, 70}, {70, 65}},
};

TEST(LinalgTypedOrt, MatMul) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  for (int32_t dt : {kDouble, kInt32, kInt64}) {
    for (const auto& [sa, sb] : kShapes) {
      std::map<std::string, HostTensor> in;
      in["a"] = values(dt, sa, 1, 1000);
      in["b"] = values(dt, sb, 2, 1000);
      check(one_node("MatMul", in, {}), in,
            "MatMul " + dtype_name(dt) + " " + shape_string(sa) + " x " + shape_string(sb));
    }
  }
}

// Full-range integers: products and sums wrap around; ORT's bits are the same.
HostTensor full_range(int32_t dtype, const Shape& s, uint32_t seed) {
  HostTensor t = HostTensor::allocate(dtype, s);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    if (dtype == kInt32) {
      static_cast<int32_t*>(t.mutable_data())[i] = int32_t(uint32_t(x >> 32));
    } else {
      static_cast<int64_t*>(t.mutable_data())[i] = int64_t(x ^ (x >> 29));
    }
  }
  return t;
}

TEST(LinalgTypedOrt, MatMulIntegerWrapAround) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  for (int32_t dt : {kInt32, kInt64}) {
    for (const auto& [sa, sb] : kShapes) {
      std::map<std::string, HostTensor> in;
      in["a"] = full_range(dt, sa, 1);
      in["b"] = full_range(dt, sb, 2);
      check(one_node("MatMul", in, {}), in,
            "MatMul wrap " + dtype_name(dt) + " " + shape_string(sa) + " x " + shape_string(sb));
    }
  }
}

TEST(LinalgTypedOrt, GemmDouble) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const int64_t m = 6, k = 11, n = 5;
  const std::vector<Shape> cs = {{0}, {m, n}, {n}, {1, n}, {m, 1}, {1}, {}};  // {0}: no C
  const std::pair<float, float> scales[] = {{1.0f, 1.0f}, {0.25f, -1.5f}, {3.0f, 0.0f}};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (size_t ci = 0; ci < cs.size(); ++ci) {
        // Each C shape meets every (alpha, beta) over the four transposes.
        const auto [alpha, beta] = scales[(ci + 2 * ta + tb) % 3];
        const Shape& c = cs[ci];
        const bool has_c = !(c.size() == 1 && c[0] == 0);
        std::map<std::string, HostTensor> in;
        in["a"] = values(kDouble, ta ? Shape{k, m} : Shape{m, k}, 3, 500);
        in["b"] = values(kDouble, tb ? Shape{n, k} : Shape{k, n}, 4, 500);
        if (has_c) in["c"] = values(kDouble, c, 5, 500);
        check(one_node("Gemm", in,
                       {attr_int("transA", ta), attr_int("transB", tb), attr_float("alpha", alpha),
                        attr_float("beta", beta)}),
              in,
              "Gemm transA " + std::to_string(ta) + " transB " + std::to_string(tb) + " C " +
                  (has_c ? shape_string(c) : "none") + " alpha " + std::to_string(alpha) +
                  " beta " + std::to_string(beta));
      }
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
