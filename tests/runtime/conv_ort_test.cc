// Conv, ConvTranspose and pooling agree with ONNX Runtime (onnxruntime-node via
// tests/runtime/ort_run.js) within 1e-4 of the output's largest magnitude, over
// groups, depthwise filters, dilations, strides, pads and auto_pad, in 1-D,
// 2-D and 3-D; and the result does not depend on the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "device/cpu_features.h"
#include "format/model_writer.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

// The case tables below leave trailing fields at their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

bool ort_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

struct Case {
  std::string op;
  Shape x;
  Shape w;  // empty for pooling
  bool bias = true;
  std::vector<std::pair<std::string, std::vector<int64_t>>> ints;
  std::vector<std::pair<std::string, int64_t>> scalars;
  std::string auto_pad;
};

void add_init(onnx::GraphProto* g, const std::string& name, const Shape& s, uint32_t seed) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : s) t->add_dims(d);
  auto v = testing::pseudo_random_floats(size_t(shape_numel(s)), seed);
  t->set_raw_data(v.data(), v.size() * 4);
}

onnx::ModelProto make_model(const Case& c) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("case");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : c.x)
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* n = g->add_node();
  n->set_op_type(c.op);
  n->set_name("node");
  n->add_input("x");
  if (!c.w.empty()) {
    add_init(g, "w", c.w, 7);
    n->add_input("w");
    if (c.bias) {
      const int64_t m_out = c.op == "ConvTranspose" ? c.w[1] *
                                                          [&] {
                                                            for (auto& [k, v] : c.scalars)
                                                              if (k == "group") return v;
                                                            return int64_t(1);
                                                          }()
                                                    : c.w[0];
      add_init(g, "b", {m_out}, 9);
      n->add_input("b");
    }
  }
  n->add_output("y");
  for (auto& [k, v] : c.ints) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  for (auto& [k, v] : c.scalars) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  if (!c.auto_pad.empty()) {
    auto* a = n->add_attribute();
    a->set_name("auto_pad");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(c.auto_pad);
  }
  return m;
}

HostTensor run_ours(std::shared_ptr<const format::Model> model, const HostTensor& in,
                    base::ThreadPool* pool) {
  SessionOptions so;
  so.pool = pool;
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

void check(const Case& c) {
  SCOPED_TRACE(c.op + " x " + shape_string(c.x) + " w " + shape_string(c.w));
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx");
  ASSERT_TRUE(format::write_model_inline(make_model(c), path).ok());
  auto v = testing::pseudo_random_floats(size_t(shape_numel(c.x)), 11);
  HostTensor in = HostTensor::allocate(kFloat, c.x);
  std::memcpy(in.mutable_data(), v.data(), v.size() * 4);
  ASSERT_TRUE(write_npy(dir.file("in.npy"), in.view()).ok());
  std::string log;
  ASSERT_EQ(
      testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                               path + " " + dir.file("ort") + " x=" + dir.file("in.npy"),
                           &log),
      0)
      << log;
  auto want = read_npy(dir.file("ort/y.npy"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto loaded = format::Model::load(path);
  ASSERT_TRUE(loaded.ok());
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  base::ThreadPool one(1), two(2);
  HostTensor got1 = run_ours(model, in, &one);
  HostTensor got2 = run_ours(model, in, &two);
  ASSERT_EQ(got1.shape(), want->shape());
  ASSERT_EQ(got2.shape(), want->shape());
  double mx = 0, worst = 0;
  for (int64_t i = 0; i < want->numel(); ++i)
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
  for (int64_t i = 0; i < want->numel(); ++i) {
    worst = std::max(worst, std::fabs(double(got1.as<float>()[i]) - want->as<float>()[i]));
  }
  EXPECT_LE(worst, 1e-4 * std::max(mx, 1e-6)) << "max |diff| " << worst << ", max |ort| " << mx;
  EXPECT_EQ(std::memcmp(got1.data(), got2.data(), size_t(got1.numel()) * 4), 0)
      << "1 and 2 threads differ";
}

TEST(ConvOrt, ConvShapes) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const std::vector<Case> cases = {
      {"Conv", {1, 3, 33, 37}, {16, 3, 3, 3}, true, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}},
      {"Conv", {2, 20, 17, 19}, {30, 20, 1, 1}, true, {}},
      {"Conv", {1, 300, 9, 7}, {17, 300, 3, 3}, false, {{"pads", {1, 0, 2, 1}}}},
      {"Conv", {1, 12, 15, 16}, {18, 4, 3, 2}, true, {{"dilations", {2, 1}}}, {{"group", 3}}},
      {"Conv", {1, 24, 40, 41}, {24, 1, 5, 5}, true, {{"pads", {2, 2, 2, 2}}}, {{"group", 24}}},
      {"Conv",
       {2, 16, 23, 20},
       {16, 1, 3, 3},
       true,
       {{"strides", {2, 1}}, {"pads", {1, 1, 1, 1}}},
       {{"group", 16}}},
      {"Conv",
       {1, 8, 12, 30},
       {8, 1, 3, 3},
       false,
       {{"strides", {1, 2}}, {"dilations", {2, 2}}},
       {{"group", 8}}},
      {"Conv", {1, 5, 11, 13}, {7, 5, 4, 3}, true, {{"strides", {3, 2}}}, {}, "SAME_UPPER"},
      {"Conv", {1, 5, 11, 13}, {7, 5, 4, 3}, true, {{"strides", {2, 2}}}, {}, "SAME_LOWER"},
      {"Conv", {1, 5, 11, 13}, {7, 5, 2, 3}, true, {}, {}, "VALID"},
      {"Conv", {2, 6, 50}, {10, 3, 5}, true, {{"pads", {2, 1}}, {"strides", {2}}}, {{"group", 2}}},
      {"Conv", {1, 4, 6, 7, 8}, {5, 4, 3, 2, 3}, true, {{"pads", {1, 0, 1, 1, 1, 0}}}},
      {"Conv", {1, 96, 20, 20}, {24, 96, 3, 3}, false, {{"pads", {1, 1, 1, 1}}}},
      {"ConvTranspose", {1, 6, 7, 8}, {6, 4, 2, 2}, true, {{"strides", {2, 2}}}},
      {"ConvTranspose",
       {1, 6, 7, 8},
       {6, 2, 3, 3},
       true,
       {{"strides", {2, 3}}, {"pads", {1, 0, 1, 2}}, {"output_padding", {1, 1}}},
       {{"group", 2}}},
      {"ConvTranspose", {1, 4, 9}, {4, 3, 4}, false, {{"dilations", {2}}, {"strides", {2}}}},
  };
  for (const Case& c : cases) check(c);
}

// The float Conv shape classes of first layers and depthwise stages (the layers of
// bench/conv_class_bench.py at smaller maps, odd sizes for partial tiles): every
// case against ONNX Runtime in one node process (tests/runtime/ort_batch.js), and
// 1 and 2 threads bitwise equal.
TEST(ConvOrt, FirstLayerAndDepthwiseClassesInOneOrtProcess) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const std::vector<int64_t> s2 = {2, 2}, p1 = {1, 1, 1, 1}, p2 = {2, 2, 2, 2};
  const std::vector<Case> cases = {
      {"Conv", {1, 3, 67, 61}, {16, 3, 3, 3}, true, {{"strides", s2}, {"pads", p1}}},
      {"Conv", {1, 3, 70, 66}, {24, 3, 3, 3}, true, {{"strides", s2}, {"pads", p1}}},
      {"Conv", {1, 3, 65, 80}, {32, 3, 3, 3}, false, {{"strides", s2}, {"pads", p1}}},
      {"Conv", {1, 16, 40, 38}, {32, 16, 3, 3}, true, {{"strides", s2}, {"pads", p1}}},
      {"Conv", {1, 64, 20, 21}, {96, 64, 3, 3}, true, {{"strides", s2}, {"pads", p1}}},
      {"Conv",
       {1, 32, 41, 40},
       {32, 1, 3, 3},
       true,
       {{"strides", s2}, {"pads", p1}},
       {{"group", 32}}},
      {"Conv", {1, 24, 37, 35}, {24, 1, 5, 5}, true, {{"pads", p2}}, {{"group", 24}}},
      {"Conv",
       {1, 72, 33, 36},
       {72, 1, 5, 5},
       true,
       {{"strides", s2}, {"pads", p2}},
       {{"group", 72}}},
  };
  testing::TempDir dir;
  std::string manifest = "[";
  std::vector<HostTensor> ins;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string d = dir.file("case" + std::to_string(i));
    std::filesystem::create_directories(d);
    ASSERT_TRUE(format::write_model_inline(make_model(cases[i]), d + "/model.onnx").ok());
    auto v = testing::pseudo_random_floats(size_t(shape_numel(cases[i].x)), 31 + uint32_t(i));
    HostTensor in = HostTensor::allocate(kFloat, cases[i].x);
    std::memcpy(in.mutable_data(), v.data(), v.size() * 4);
    ASSERT_TRUE(write_npy(d + "/in.npy", in.view()).ok());
    ins.push_back(std::move(in));
    manifest += std::string(i ? "," : "") + "{\"model\": \"" + d +
                "/model.onnx\", \"out_dir\": \"" + d + "/ort\", \"inputs\": {\"x\": \"" + d +
                "/in.npy\"}}";
  }
  manifest += "]";
  {
    std::ofstream f(dir.file("manifest.json"));
    f << manifest;
  }
  std::string log;
  ASSERT_EQ(testing::run_command("node " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/ort_batch.js " + dir.file("manifest.json"),
                                 &log),
            0)
      << log;
  base::ThreadPool one(1), two(2);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("x " + shape_string(c.x) + " w " + shape_string(c.w));
    const std::string d = dir.file("case" + std::to_string(i));
    ASSERT_FALSE(fs::exists(d + "/ort/error.txt"));
    auto want = read_npy(d + "/ort/y.npy");
    ASSERT_TRUE(want.ok()) << want.status().message();
    auto loaded = format::Model::load(d + "/model.onnx");
    ASSERT_TRUE(loaded.ok());
    std::shared_ptr<const format::Model> model(std::move(*loaded));
    HostTensor got1 = run_ours(model, ins[i], &one);
    HostTensor got2 = run_ours(model, ins[i], &two);
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

TEST(ConvOrt, PoolShapes) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const std::vector<Case> cases = {
      {"MaxPool",
       {1, 3, 17, 18},
       {},
       false,
       {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}},
      {"MaxPool",
       {1, 3, 17, 18},
       {},
       false,
       {{"kernel_shape", {3, 2}}, {"strides", {2, 2}}, {"dilations", {2, 1}}},
       {{"ceil_mode", 1}}},
      {"AveragePool",
       {1, 3, 17, 18},
       {},
       false,
       {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}},
       {{"count_include_pad", 1}}},
      {"AveragePool",
       {2, 4, 12, 13},
       {},
       false,
       {{"kernel_shape", {2, 3}}, {"strides", {2, 2}}, {"pads", {0, 1, 1, 1}}},
       {{"ceil_mode", 1}}},
      {"AveragePool", {1, 2, 9, 9, 9}, {}, false, {{"kernel_shape", {2, 2, 2}}}, {}, "SAME_UPPER"},
      // Wide rows: the vectorised row kernels (strides 1 and 2) and their scalar borders.
      {"MaxPool",
       {1, 4, 30, 67},
       {},
       false,
       {{"kernel_shape", {3, 3}}, {"strides", {1, 1}}, {"pads", {1, 1, 1, 1}}}},
      {"MaxPool", {1, 3, 40, 41}, {}, false, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}},
      {"MaxPool",
       {2, 3, 33, 59},
       {},
       false,
       {{"kernel_shape", {5, 5}}, {"strides", {2, 2}}, {"pads", {2, 2, 2, 2}}},
       {{"ceil_mode", 1}}},
      {"AveragePool",
       {1, 4, 20, 57},
       {},
       false,
       {{"kernel_shape", {5, 5}}, {"strides", {1, 1}}, {"pads", {2, 2, 2, 2}}},
       {{"ceil_mode", 1}}},
      {"AveragePool",
       {1, 4, 23, 61},
       {},
       false,
       {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}},
       {{"count_include_pad", 1}}},
      {"LpPool",
       {1, 3, 10, 11},
       {},
       false,
       {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}},
       {{"p", 3}}},
      {"GlobalAveragePool", {2, 5, 7, 9}, {}, false, {}},
      {"GlobalMaxPool", {2, 5, 7, 9}, {}, false, {}},
  };
  for (const Case& c : cases) check(c);
}

// A two-Conv graph (blocked, then depthwise) compiled by the CLI: the compiled
// run maps both filters (hits), its output is bitwise that of the uncompiled
// run (same formats, same kernels), and both agree with ONNX Runtime.
TEST(ConvOrt, CompiledFiltersHitAndMatchTheUncompiledRun) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  if (device::host_isa_level() == device::IsaLevel::kRef) {
    GTEST_SKIP() << "no packed format runs natively on this host (compile --target host refuses)";
  }
  Case c{
      "Conv", {1, 3, 30, 34}, {16, 3, 3, 3}, true, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}};
  onnx::ModelProto m = make_model(c);
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_output(0, "c1");
  add_init(g, "w2", {16, 1, 3, 3}, 13);
  auto* dw = g->add_node();
  dw->set_op_type("Conv");
  dw->set_name("dw");
  dw->add_input("c1");
  dw->add_input("w2");
  dw->add_output("y");
  auto* a = dw->add_attribute();
  a->set_name("group");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(16);
  auto* pads = dw->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  testing::TempDir dir;
  const std::string path = dir.file("model.onnx"), compiled = dir.file("compiled.onnx");
  ASSERT_TRUE(format::write_model_inline(m, path).ok());
  auto v = testing::pseudo_random_floats(size_t(shape_numel(c.x)), 17);
  HostTensor in = HostTensor::allocate(kFloat, c.x);
  std::memcpy(in.mutable_data(), v.data(), v.size() * 4);
  ASSERT_TRUE(write_npy(dir.file("in.npy"), in.view()).ok());
  const std::string cli = OP_CLI_PATH;
  std::string log;
  ASSERT_EQ(testing::run_command(cli + " compile " + path + " -o " + compiled, &log), 0) << log;
  std::string plain_json, compiled_json;
  ASSERT_EQ(testing::run_command(cli + " run " + path + " --input x=" + dir.file("in.npy") +
                                     " --output-dir " + dir.file("plain") + " --json",
                                 &plain_json),
            0)
      << plain_json;
  ASSERT_EQ(testing::run_command(cli + " run " + compiled + " --input x=" + dir.file("in.npy") +
                                     " --output-dir " + dir.file("compiled") + " --json",
                                 &compiled_json),
            0)
      << compiled_json;
  EXPECT_NE(compiled_json.find("\"hits\": 2"), std::string::npos) << compiled_json;
  EXPECT_NE(compiled_json.find("f32_conv_dw_"), std::string::npos) << compiled_json;
  EXPECT_NE(plain_json.find("\"misses\": 2"), std::string::npos) << plain_json;
  auto a_plain = read_npy(dir.file("plain/y.npy"));
  auto a_comp = read_npy(dir.file("compiled/y.npy"));
  ASSERT_TRUE(a_plain.ok() && a_comp.ok());
  ASSERT_EQ(a_plain->shape(), a_comp->shape());
  EXPECT_EQ(0, std::memcmp(a_plain->data(), a_comp->data(), size_t(a_plain->numel()) * 4));
  ASSERT_EQ(
      testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                               path + " " + dir.file("ort") + " x=" + dir.file("in.npy"),
                           &log),
      0)
      << log;
  auto want = read_npy(dir.file("ort/y.npy"));
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(want->shape(), a_comp->shape());
  double mx = 0, worst = 0;
  for (int64_t i = 0; i < want->numel(); ++i) {
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
    worst = std::max(worst, std::fabs(double(a_comp->as<float>()[i]) - want->as<float>()[i]));
  }
  EXPECT_LE(worst, 1e-4 * mx);
}

}  // namespace
}  // namespace onnx_prepack::runtime
