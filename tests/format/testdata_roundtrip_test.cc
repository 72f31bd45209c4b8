// Every model of Debian's libonnx-testdata reads, and an unchanged model
// re-serialises byte-identically.
#include <gtest/gtest.h>

#include <filesystem>

#include "format/model.h"
#include "testing/test_models.h"

namespace onnx_prepack::format {
namespace {

constexpr const char* kTestData = "/usr/share/libonnx-testdata/data";

TEST(LibOnnxTestdata, EveryModelReadsAndReserialisesIdentically) {
  ASSERT_TRUE(std::filesystem::is_directory(kTestData))
      << "install libonnx-testdata (tools/setup.sh)";
  int models = 0, identical = 0;
  std::vector<std::string> differ;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kTestData)) {
    if (e.path().extension() != ".onnx") continue;
    ++models;
    auto model = Model::load(e.path().string());
    ASSERT_TRUE(model.ok()) << e.path() << ": " << model.status().to_string();
    std::string again;
    ASSERT_TRUE((*model)->proto().SerializeToString(&again));
    if (again == testing::read_bytes(e.path().string()))
      ++identical;
    else
      differ.push_back(e.path().string());
  }
  EXPECT_GT(models, 1000);
  EXPECT_EQ(identical, models) << "first that differs: " << (differ.empty() ? "" : differ[0]);
}

}  // namespace
}  // namespace onnx_prepack::format
