// Generated MLPs and transformer encoders agree with ONNX Runtime
// (onnxruntime-node via tests/runtime/ort_run.js) within 1e-4 of the output's
// largest magnitude, with packed weights and with weights used in place.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "device/cpu_features.h"
#include "format/model_writer.h"
#include "runtime/generate.h"
#include "runtime/npy.h"
#include "runtime/prepared_weights.h"
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

void check_against_ort(const GenerateOptions& o, const std::string& input, Shape shape,
                       bool external) {
  testing::TempDir dir;
  onnx::ModelProto m = generate_model(o);
  std::string path = dir.file("model.onnx");
  if (external) {
    format::WriteOptions wo;
    ASSERT_TRUE(format::write_model(m, path, wo, nullptr).ok());
  } else {
    ASSERT_TRUE(format::write_model_inline(m, path).ok());
  }
  // Input: floats in [-1, 1) or token ids in [0, vocab).
  HostTensor in;
  if (o.kind == "transformer") {
    in = HostTensor::allocate(kInt64, shape);
    auto* p = static_cast<int64_t*>(in.mutable_data());
    for (int64_t i = 0; i < in.numel(); ++i) p[i] = (i * 7919 + 13) % o.vocab;
    p[in.numel() - 1] = 0;  // one padding token
  } else {
    auto v = testing::pseudo_random_floats(size_t(shape_numel(shape)), 11);
    in = HostTensor::allocate(kFloat, shape);
    std::memcpy(in.mutable_data(), v.data(), v.size() * 4);
  }
  ASSERT_TRUE(write_npy(dir.file("in.npy"), in.view()).ok());
  std::string cmd = "node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " + path +
                    " " + dir.file("ort") + " " + input + "=" + dir.file("in.npy");
  std::string log;
  ASSERT_EQ(testing::run_command(cmd, &log), 0) << log;
  auto loaded = format::Model::load(path);
  ASSERT_TRUE(loaded.ok());
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  std::string out_name = model->proto().graph().output(0).name();
  auto want = read_npy(dir.file("ort/" + out_name + ".npy"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  double mx = 0;
  for (int64_t i = 0; i < want->numel(); ++i)
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
  ASSERT_GT(mx, 0.0);
  for (bool packed : {true, false}) {
    ResolvedWeights weights(nullptr, device::host_isa_level(), &base::ThreadPool::shared());
    SessionOptions so;
    if (packed) so.weights = &weights;
    auto s = Session::create(model, so);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->plan({{input, {in.dtype(), in.shape()}}}).ok());
    auto got = (*s)->run({{input, in.view()}});
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ((*got)[0].shape(), want->shape());
    double worst = 0;
    for (int64_t i = 0; i < want->numel(); ++i) {
      worst = std::max(worst, std::fabs(double((*got)[0].as<float>()[i]) - want->as<float>()[i]));
    }
    EXPECT_LE(worst, 1e-4 * mx) << o.kind << (packed ? " packed" : " in place") << ": max |diff| "
                                << worst << ", max |ort| " << mx;
  }
}

TEST(OrtAgreement, Mlp) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  GenerateOptions o;
  o.layers = 5;
  o.width = 200;
  check_against_ort(o, "x", {3, 200}, false);
}

TEST(OrtAgreement, TransformerEncoderExternalData) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  GenerateOptions o;
  o.kind = "transformer";
  o.layers = 3;
  o.width = 128;
  o.heads = 8;
  o.seq = 20;
  o.vocab = 500;
  check_against_ort(o, "input_ids", {2, 20}, true);
}

}  // namespace
}  // namespace onnx_prepack::runtime
