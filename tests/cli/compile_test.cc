// `onnx-prepack compile`: entries per weight and target, aligned external
// payloads, a model that passes `check`, and clear usage errors.
#include <gtest/gtest.h>

#include <string>

#include "format/model.h"
#include "pack/format_list.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

std::string cli() { return std::string(OP_CLI_PATH); }

TEST(Compile, PacksEveryWeightForEveryTargetAndPassesCheck) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("mlp.onnx"), testing::make_mlp(40, 70, 10, 3).SerializeAsString());
  std::string out;
  ASSERT_EQ(testing::run_command(cli() + " compile " + dir.file("mlp.onnx") + " -o " +
                                     dir.file("out.onnx") +
                                     " --target x86_64-avx512f --target x86_64-avx2-fma --json",
                                 &out),
            0)
      << out;
  EXPECT_NE(out.find("\"entries\": 4"), std::string::npos) << out;
  EXPECT_NE(out.find("\"payload_bytes\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"targets\""), std::string::npos) << out;
  auto model = format::Model::load(dir.file("out.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const auto& p = (*model)->proto();
  ASSERT_EQ(p.compiled_tensors_size(), 4);
  EXPECT_EQ(p.devices_size(), 2);
  for (const auto& ct : p.compiled_tensors()) {
    EXPECT_EQ(ct.digest_algorithm(), "blake3");
    EXPECT_EQ(ct.source_digest().size(), 32u);
    auto ref = format::parse_external_entries(ct.value().external_data());
    ASSERT_TRUE(ref.ok());
    EXPECT_EQ(ref->offset % 4096, 0u) << ct.source_name();
    const auto& type = p.struct_types(ct.value().type());
    EXPECT_NE(pack::find_gemm_b_format(type.name()), nullptr) << type.name();
  }
  ASSERT_EQ(testing::run_command(cli() + " check " + dir.file("out.onnx"), &out), 0) << out;
}

TEST(Compile, UsageErrors) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("mlp.onnx"), testing::make_mlp(8, 8, 8, 1).SerializeAsString());
  std::string out;
  EXPECT_EQ(testing::run_command(cli() + " compile " + dir.file("mlp.onnx"), &out), 2) << out;
  EXPECT_EQ(testing::run_command(cli() + " compile " + dir.file("mlp.onnx") + " -o " +
                                     dir.file("o.onnx") + " --target x86_64-sve",
                                 &out),
            2);
  EXPECT_NE(out.find("--target 'x86_64-sve'"), std::string::npos) << out;
  EXPECT_EQ(testing::run_command(cli() + " compile " + dir.file("mlp.onnx") + " -o " +
                                     dir.file("o.onnx") + " --digest md5",
                                 &out),
            2);
  EXPECT_EQ(testing::run_command(
                cli() + " compile " + dir.file("missing.onnx") + " -o " + dir.file("o.onnx"), &out),
            2);
}

}  // namespace
}  // namespace onnx_prepack

namespace onnx_prepack {
namespace {

// docs/cli.md: 2 for a missing or malformed model, 3 when the operating
// system refuses to write an output.
TEST(Compile, ExitCodesOfReadAndWriteFailures) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("mlp.onnx"), testing::make_mlp(8, 16, 4, 3).SerializeAsString());
  testing::write_bytes(dir.file("a_file"), "x");
  std::string out;
  EXPECT_EQ(testing::run_command(cli() + " compile " + dir.file("missing.onnx") + " -o " +
                                     dir.file("o.onnx") + " 2>&1",
                                 &out),
            2)
      << out;
  EXPECT_EQ(testing::run_command(cli() + " compile " + dir.file("mlp.onnx") + " -o " +
                                     dir.file("no_such_dir/o.onnx") + " 2>&1",
                                 &out),
            3)
      << out;
  EXPECT_EQ(testing::run_command(cli() + " run " + dir.file("mlp.onnx") + " --output-dir " +
                                     dir.file("a_file/sub") + " 2>&1",
                                 &out),
            3)
      << out;
}

}  // namespace
}  // namespace onnx_prepack
