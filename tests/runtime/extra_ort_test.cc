// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss and GridSample agree with
// ONNX Runtime (onnxruntime-node via tests/runtime/ort_run.js) within 1e-5 of
// the output's largest magnitude, over reductions, weights, ignore_index and
// ranks (losses) and every mode, padding and align_corners (GridSample).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "format/model_writer.h"
#include "testing/plan_status.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool ort_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

struct Io {
  std::string name;
  int32_t dtype;
  Shape shape;
};

// A one-node model over graph inputs `ins` and outputs `outs`.
onnx::ModelProto one_node(const std::string& op, const std::vector<Io>& ins,
                          const std::vector<Io>& outs,
                          const std::vector<onnx::AttributeProto>& attrs, int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("case");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("node");
  for (const Io& i : ins) {
    auto* v = g->add_input();
    v->set_name(i.name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(i.dtype);
    for (int64_t d : i.shape)
      v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    n->add_input(i.name);
  }
  for (const Io& o : outs) {
    auto* v = g->add_output();
    v->set_name(o.name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(o.dtype);
    n->add_output(o.name);
  }
  for (const auto& a : attrs) *n->add_attribute() = a;
  return m;
}

onnx::AttributeProto attr_int(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto attr_str(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

HostTensor floats(const Shape& s, uint32_t seed, float scale) {
  auto v = testing::pseudo_random_floats(size_t(shape_numel(s)), seed);
  HostTensor t = HostTensor::allocate(kFloat, s);
  float* d = static_cast<float*>(t.mutable_data());
  for (size_t i = 0; i < v.size(); ++i) d[i] = v[i] * scale;
  return t;
}

// Runs the model with ORT and with the runtime; compares every output.
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
  ASSERT_EQ(
      testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
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
  for (size_t o = 0; o < (*s)->output_names().size(); ++o) {
    auto want = read_npy(dir.file("ort/" + (*s)->output_names()[o] + ".npy"));
    ASSERT_TRUE(want.ok()) << want.status().message();
    const HostTensor& g = (*got)[o];
    ASSERT_EQ(g.shape(), want->shape()) << "output " << o;
    double mx = 0, worst = 0;
    for (int64_t i = 0; i < want->numel(); ++i) {
      mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
      worst = std::max(worst, std::fabs(double(g.as<float>()[i]) - want->as<float>()[i]));
    }
    EXPECT_LE(worst, 1e-5 * std::max(mx, 1.0)) << "output " << o << ": max |diff| " << worst;
  }
}

TEST(ExtraOrt, Losses) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  struct LossCase {
    Shape x;
    std::string reduction;
    bool weight;
    int64_t ignore;  // -100: no ignore_index attribute
  };
  const std::vector<LossCase> cases = {
      {{5, 4}, "none", false, -100},   {{5, 4}, "mean", true, -100},
      {{3, 6, 7}, "sum", true, 2},     {{3, 6, 7}, "mean", false, 1},
      {{2, 3, 4, 5}, "mean", true, 0}, {{2, 5, 3, 2, 2}, "none", true, -1},
  };
  for (bool softmax : {false, true}) {
    for (const LossCase& c : cases) {
      int64_t classes = c.x[1];
      Shape ts = c.x;
      ts.erase(ts.begin() + 1);
      HostTensor target = HostTensor::allocate(kInt64, ts);
      int64_t* t = static_cast<int64_t*>(target.mutable_data());
      // Every class and, where set, ignore_index (-1 included) appear.
      for (int64_t i = 0; i < target.numel(); ++i)
        t[i] = (i * 7 + 3) % (classes + 1) == classes ? (c.ignore == -100 ? 0 : c.ignore)
                                                      : (i * 7 + 3) % (classes + 1);
      std::map<std::string, HostTensor> in;
      in["x"] = floats(c.x, 3, softmax ? 3.0f : 1.0f);
      in["t"] = std::move(target);
      std::vector<Io> ins = {{"x", kFloat, c.x}, {"t", kInt64, ts}};
      if (c.weight) {
        in["w"] = floats({classes}, 5, 1.0f);
        float* w = static_cast<float*>(in["w"].mutable_data());
        for (int64_t i = 0; i < classes; ++i) w[i] = std::fabs(w[i]) + 0.1f;
        ins.push_back({"w", kFloat, {classes}});
      }
      std::vector<onnx::AttributeProto> attrs = {attr_str("reduction", c.reduction)};
      if (c.ignore != -100) attrs.push_back(attr_int("ignore_index", c.ignore));
      std::vector<Io> outs = {{"loss", kFloat, {}}};
      if (softmax) outs.push_back({"log_prob", kFloat, c.x});
      check(one_node(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", ins, outs,
                     attrs, 13),
            in,
            std::string(softmax ? "SCE " : "NLL ") + shape_string(c.x) + " " + c.reduction +
                (c.weight ? " weight" : "") + " ignore " + std::to_string(c.ignore));
    }
  }
}

TEST(ExtraOrt, GridSample) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const Shape xs = {2, 3, 5, 7}, gs = {2, 4, 6, 2};
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* pad : {"zeros", "border", "reflection"}) {
      for (int align : {0, 1}) {
        std::map<std::string, HostTensor> in;
        in["x"] = floats(xs, 7, 1.0f);
        // Past [-1, 1] on purpose, so that padding matters.
        in["grid"] = floats(gs, 9, 1.4f);
        check(one_node("GridSample", {{"x", kFloat, xs}, {"grid", kFloat, gs}}, {{"y", kFloat, {}}},
                       {attr_str("mode", mode), attr_str("padding_mode", pad),
                        attr_int("align_corners", align)},
                       16),
              in, std::string(mode) + " " + pad + " align " + std::to_string(align));
      }
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
