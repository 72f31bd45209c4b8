// `compile` records what it hashed, so `explain --verify memo` on its output
// hashes nothing; touching the data file invalidates the records.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "format/model_writer.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using testing::TempDir;

std::string cli() { return OP_CLI_PATH; }

TEST(CompileMemo, MemoLoadHashesNothingUntilTheFileChanges) {
  TempDir dir;
  auto m = testing::make_mlp(128, 256, 64, 7);
  ASSERT_TRUE(format::write_model(m, dir.file("m.onnx"), format::WriteOptions{}, nullptr).ok());
  std::string out;
  ASSERT_EQ(
      testing::run_command(cli() + " compile " + dir.file("m.onnx") + " -o " + dir.file("c.onnx") +
                               " --target host --memo-dir " + dir.file("memo"),
                           &out),
      0)
      << out;
  const std::string explain = cli() + " explain " + dir.file("c.onnx") +
                              " --verify memo --json --memo-dir " + dir.file("memo");
  ASSERT_EQ(testing::run_command(explain, &out), 0) << out;
  EXPECT_NE(out.find("\"bytes_hashed\": 0"), std::string::npos) << out;
  EXPECT_NE(out.find("\"memo_hits\": 2"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"decision\": \"miss\""), std::string::npos) << out;

  // Touch the compiled model's data file (it holds the weights too): the
  // records no longer match its identity.
  std::string data;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string n = e.path().filename().string();
    if (n.rfind("c.onnx.", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".data")
      data = e.path().string();
  }
  ASSERT_FALSE(data.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  std::filesystem::last_write_time(data, std::filesystem::file_time_type::clock::now());
  ASSERT_EQ(testing::run_command(explain, &out), 0) << out;
  EXPECT_EQ(out.find("\"bytes_hashed\": 0"), std::string::npos) << out;
  EXPECT_NE(out.find("\"memo_hits\": 0"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"decision\": \"miss\""), std::string::npos)
      << out;  // still verified, by hashing
}

}  // namespace
}  // namespace onnx_prepack
