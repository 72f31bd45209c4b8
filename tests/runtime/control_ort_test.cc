// Control flow (If, Loop, Scan with outer-scope values and nested subgraphs)
// and recurrent layers (RNN, GRU, LSTM: every direction, activation lists,
// clip, sequence lengths, initial states, peepholes, linear_before_reset,
// input_forget), plus a keyword-spotter and a voice-activity-detector model,
// agree with ONNX Runtime (onnxruntime-node via tests/runtime/ort_run.js)
// within 1e-4 of each output's largest magnitude: through the library (plan
// again with fed values pinned when the plan needs them) and through
// `onnx-prepack run`. Models and inputs come from tests/runtime/control_models.py.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "runtime/npy.h"
#include "runtime/session.h"
#include "runtime/tensor.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name;
  std::string ort_model;  // an equivalent model for ONNX Runtime ("": the same)
  std::vector<std::pair<std::string, std::string>> inputs;  // name, .npy file
};

bool tools_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0 &&
         testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

std::vector<Case> build_cases(const std::string& dir) {
  std::string log;
  EXPECT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/control_models.py " + dir,
                                 &log),
            0)
      << log;
  std::vector<Case> cases;
  std::ifstream f(dir + "/manifest.txt");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    Case c;
    ss >> c.name;
    std::string spec;
    while (ss >> spec) {
      auto eq = spec.find('=');
      if (spec.substr(0, eq) == "ort_model") {
        c.ort_model = spec.substr(eq + 1);
        continue;
      }
      c.inputs.push_back({spec.substr(0, eq), spec.substr(eq + 1)});
    }
    if (!c.name.empty()) cases.push_back(c);
  }
  return cases;
}

std::string sanitized(const std::string& name) {
  std::string s = name;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-')
      ch = '_';
  }
  return s;
}

double element(const HostTensor& t, int64_t i) {
  return t.dtype() == kFloat16 ? half_to_float(t.as<uint16_t>()[i]) : t.as<float>()[i];
}

// "" when every element of `got` is within 1e-4 * max|want| of `want` (FLOAT16
// outputs: 4e-3, about four half-precision steps at the largest magnitude, as
// the two runtimes round intermediate values differently).
std::string compare(const HostTensor& got, const HostTensor& want) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    return "got " + dtype_name(got.dtype()) + shape_string(got.shape()) + ", want " +
           dtype_name(want.dtype()) + shape_string(want.shape());
  }
  if (want.dtype() != kFloat && want.dtype() != kFloat16) return "not a float type";
  double mx = 0, worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) mx = std::max(mx, std::fabs(element(want, i)));
  for (int64_t i = 0; i < want.numel(); ++i) {
    worst = std::max(worst, std::fabs(element(got, i) - element(want, i)));
  }
  double tolerance = (want.dtype() == kFloat16 ? 4e-3 : 1e-4) * mx + 1e-6;
  if (worst > tolerance) {
    return "max |diff| " + std::to_string(worst) + ", max |ort| " + std::to_string(mx);
  }
  return "";
}

TEST(ControlOrt, ModelsAgreeWithOrtThroughLibraryAndCli) {
  if (!tools_available()) GTEST_SKIP() << "node, onnxruntime-node or python3-onnx not available";
  testing::TempDir dir;
  std::vector<Case> cases = build_cases(dir.file("models"));
  ASSERT_GE(cases.size(), 20u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string model_path = dir.file("models/" + c.name + ".onnx");
    std::string specs;
    for (const auto& [name, file] : c.inputs) specs += " " + name + "=" + file;
    std::string log;
    ASSERT_EQ(
        testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                                 (c.ort_model.empty() ? model_path : c.ort_model) + " " +
                                 dir.file("ort_" + c.name) + specs,
                             &log),
        0)
        << log;

    // Library: plan, and plan again with the fed values pinned when asked.
    auto loaded = format::Model::load(model_path);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    std::shared_ptr<const format::Model> model(std::move(*loaded));
    auto session = Session::create(model, SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().message();
    std::vector<HostTensor> keep;
    std::map<std::string, Tensor> inputs;
    std::map<std::string, Session::Feed> feeds;
    for (const auto& [name, file] : c.inputs) {
      auto t = read_npy(file);
      ASSERT_TRUE(t.ok()) << t.status().message();
      keep.push_back(std::move(*t));
    }
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      inputs[c.inputs[i].first] = keep[i].view();
      feeds[c.inputs[i].first] = {keep[i].dtype(), keep[i].shape()};
    }
    auto planned = (*session)->plan(feeds);
    if (testing::needs_values(planned)) {
      for (auto& [name, f] : feeds) f.value = &inputs[name];
      planned = (*session)->plan(feeds);
    }
    Status st = testing::plan_status(planned);
    ASSERT_TRUE(st.ok()) << st.message();
    auto outs = (*session)->run(inputs);
    ASSERT_TRUE(outs.ok()) << outs.status().message();

    // CLI.
    std::string cli_inputs;
    for (const auto& [name, file] : c.inputs) cli_inputs += " --input " + name + "=" + file;
    ASSERT_EQ(testing::run_command(std::string(OP_CLI_PATH) + " run " + model_path + cli_inputs +
                                       " --output-dir " + dir.file("cli_" + c.name),
                                   &log),
              0)
        << log;

    const auto& names = (*session)->output_names();
    ASSERT_EQ(outs->size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      auto want = read_npy(dir.file("ort_" + c.name + "/" + sanitized(names[i]) + ".npy"));
      ASSERT_TRUE(want.ok()) << want.status().message();
      EXPECT_EQ(compare((*outs)[i], *want), "") << "library, output " << names[i];
      auto cli = read_npy(dir.file("cli_" + c.name + "/" + sanitized(names[i]) + ".npy"));
      ASSERT_TRUE(cli.ok()) << cli.status().message();
      EXPECT_EQ(compare(*cli, *want), "") << "cli, output " << names[i];
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
