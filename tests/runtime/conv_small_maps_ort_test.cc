// Conv on small maps and batches of them (the batch-folded kernel,
// kernels/f32_conv/conv_folded.h) agrees with ONNX Runtime within 1e-4 of the
// output's largest magnitude, and gives the same bits at 1 and 2 threads.
// Every case runs in one node process (tests/runtime/ort_batch.js).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "format/model_writer.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

// The case table below leaves trailing fields at their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

bool ort_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

struct Case {
  Shape x;
  Shape w;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
  int64_t group = 1;
  bool bias = true;
};

void add_init(onnx::GraphProto* g, const std::string& name, const Shape& s, uint32_t seed) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : s) t->add_dims(d);
  auto v = testing::pseudo_random_floats(size_t(shape_numel(s)), seed);
  t->set_raw_data(v.data(), v.size() * 4);
}

void add_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

onnx::ModelProto make_model(const Case& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("conv");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : c.x)
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* n = g->add_node();
  n->set_op_type("Conv");
  n->set_name("conv");
  n->add_input("x");
  add_init(g, "w", c.w, 7);
  n->add_input("w");
  if (c.bias) {
    add_init(g, "b", {c.w[0]}, 9);
    n->add_input("b");
  }
  n->add_output("y");
  if (!c.pads.empty()) add_ints(n, "pads", c.pads);
  if (!c.strides.empty()) add_ints(n, "strides", c.strides);
  auto* a = n->add_attribute();
  a->set_name("group");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(c.group);
  return m;
}

HostTensor run_ours(const std::string& path, const HostTensor& in, size_t threads) {
  auto loaded = format::Model::load(path);
  EXPECT_TRUE(loaded.ok());
  if (!loaded.ok()) return {};
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  base::ThreadPool pool(threads);
  SessionOptions so;
  so.pool = &pool;
  auto s = Session::create(model, so);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  Status planned = testing::plan_status((*s)->plan({{"x", {in.dtype(), in.shape()}}}));
  EXPECT_TRUE(planned.ok()) << planned.message();
  auto got = (*s)->run({{"x", in.view()}});
  EXPECT_TRUE(got.ok()) << got.status().message();
  if (!got.ok()) return {};
  return std::move((*got)[0]);
}

TEST(ConvSmallMapsOrt, BatchesAndOneByOneAgreeWithOrt) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const std::vector<Case> cases = {
      // openWakeWord's embedding model: 1x3 and 3x1 filters on tiny maps, batch 34.
      {{34, 24, 10, 2}, {24, 24, 1, 3}, {0, 1, 0, 1}},
      {{34, 48, 8, 2}, {48, 48, 3, 1}},
      {{34, 96, 3, 1}, {96, 96, 3, 1}, {}, {}, 1, false},
      // 3x3 on 4x2 and 7x7 maps, a stride-2 3x3 on 9x9.
      {{8, 64, 4, 2}, {96, 64, 3, 3}, {1, 1, 1, 1}},
      {{1, 128, 7, 7}, {64, 128, 3, 3}, {1, 1, 1, 1}},
      {{3, 32, 9, 9}, {48, 32, 3, 3}, {1, 1, 1, 1}, {2, 2}},
      // 1x1 on 7x7 and 10x10 maps (one image, and a batch), grouped.
      {{1, 96, 7, 7}, {512, 96, 1, 1}},
      {{1, 320, 10, 10}, {160, 320, 1, 1}},
      {{4, 64, 10, 10}, {96, 64, 1, 1}},
      {{3, 12, 6, 6}, {18, 4, 1, 1}, {}, {}, 3},
  };
  testing::TempDir dir;
  std::vector<HostTensor> inputs;
  std::ofstream manifest(dir.file("manifest.json"));
  manifest << "[";
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string c = dir.file("case" + std::to_string(i));
    fs::create_directories(c);
    ASSERT_TRUE(format::write_model_inline(make_model(cases[i]), c + "/model.onnx").ok());
    auto v = testing::pseudo_random_floats(size_t(shape_numel(cases[i].x)), 11 + uint32_t(i));
    HostTensor in = HostTensor::allocate(kFloat, cases[i].x);
    std::memcpy(in.mutable_data(), v.data(), v.size() * 4);
    ASSERT_TRUE(write_npy(c + "/x.npy", in.view()).ok());
    inputs.push_back(std::move(in));
    manifest << (i ? "," : "") << "{\"model\":\"" << c << "/model.onnx\",\"out_dir\":\"" << c
             << "/ort\",\"inputs\":{\"x\":\"" << c << "/x.npy\"}}";
  }
  manifest << "]";
  manifest.close();
  std::string log;
  ASSERT_EQ(testing::run_command("node " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/ort_batch.js " + dir.file("manifest.json"),
                                 &log),
            0)
      << log;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string c = dir.file("case" + std::to_string(i));
    SCOPED_TRACE("x " + shape_string(cases[i].x) + " w " + shape_string(cases[i].w));
    ASSERT_FALSE(fs::exists(c + "/ort/error.txt")) << testing::read_bytes(c + "/ort/error.txt");
    auto want = read_npy(c + "/ort/y.npy");
    ASSERT_TRUE(want.ok()) << want.status().message();
    HostTensor got1 = run_ours(c + "/model.onnx", inputs[i], 1);
    HostTensor got2 = run_ours(c + "/model.onnx", inputs[i], 2);
    ASSERT_EQ(got1.shape(), want->shape());
    ASSERT_EQ(got2.shape(), want->shape());
    double mx = 0, worst = 0;
    for (int64_t j = 0; j < want->numel(); ++j) {
      mx = std::max(mx, double(std::fabs(want->as<float>()[j])));
      worst = std::max(worst, std::fabs(double(got1.as<float>()[j]) - want->as<float>()[j]));
    }
    EXPECT_LE(worst, 1e-4 * std::max(mx, 1e-6)) << "max |diff| " << worst << ", max |ort| " << mx;
    EXPECT_EQ(std::memcmp(got1.data(), got2.data(), size_t(got1.numel()) * 4), 0)
        << "1 and 2 threads differ";
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
