// `onnx-prepack check` end to end: exit codes and the JSON report, over the
// same invalid models as the rule tests (encoded to files at test time).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "check/rules.h"
#include "testing/test_models.h"
#include "textproto_models.h"

namespace onnx_prepack::check {
namespace {

const std::string kCli = OP_CLI_PATH;

std::string write_model(const testing::TempDir& dir, const std::string& name,
                        const onnx::ModelProto& m) {
  std::string path = dir.file(name + ".onnx");
  testing::write_bytes(path, m.SerializeAsString());
  return path;
}

TEST(CheckCli, ExitCodesAndJsonForEveryInvalidModel) {
  ASSERT_TRUE(std::filesystem::exists(kCli)) << kCli << " is not built";
  testing::TempDir dir;
  for (const auto& file : testing::text_files(std::string(OP_TEST_DATA_DIR) + "/check/invalid")) {
    SCOPED_TRACE(file);
    testing::TextModel m;
    std::string err;
    ASSERT_TRUE(testing::load_text_model(testing::read_text(file), &m, &err)) << err;
    if (!m.all("option").empty()) continue;  // needs non-default limits
    std::string model = write_model(dir, std::filesystem::path(file).stem(), m.proto);
    std::string out;
    int rc = testing::run_command("'" + kCli + "' check '" + model + "' --json", &out);
    const bool is_warning = m.first("rule").empty();
    const std::string rule = is_warning ? m.first("warning") : m.first("rule");
    EXPECT_EQ(rc, is_warning ? 0 : 1) << out;
    EXPECT_NE(out.find(std::string("\"valid\": ") + (is_warning ? "true" : "false")),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("\"rule\": \"" + rule + "\""), std::string::npos) << out;
    EXPECT_NE(out.find("\"path\": \"" + m.first("path") + "\""), std::string::npos) << out;
  }
}

TEST(CheckCli, ValidModelExitsZeroAndUnreadableExitsTwo) {
  testing::TempDir dir;
  std::string good = write_model(dir, "mlp", testing::make_mlp(4, 8, 2, 3));
  std::string out;
  EXPECT_EQ(testing::run_command("'" + kCli + "' check '" + good + "'", &out), 0) << out;
  EXPECT_EQ(testing::run_command("'" + kCli + "' check '" + good + "' --json", &out), 0) << out;
  EXPECT_NE(out.find("\"valid\": true"), std::string::npos) << out;
  EXPECT_NE(out.find("\"errors\": []"), std::string::npos) << out;
  testing::write_bytes(dir.file("junk.onnx"), "\xff\xff\xff not a model");
  EXPECT_EQ(testing::run_command("'" + kCli + "' check '" + dir.file("junk.onnx") + "'", &out), 2)
      << out;
  EXPECT_EQ(testing::run_command("'" + kCli + "' check '" + dir.file("missing.onnx") + "'", &out),
            2)
      << out;
  EXPECT_EQ(testing::run_command("'" + kCli + "' check", &out), 2) << out;
}

}  // namespace
}  // namespace onnx_prepack::check
