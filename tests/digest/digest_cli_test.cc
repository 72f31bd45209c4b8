// `onnx-prepack digest`: output per initializer agrees with digest_tensor. Skipped when the
// CLI is not built (this test binary does not depend on it).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>

#include "base/json.h"
#include "digest/digest.h"
#include "format/model.h"
#include "testing/test_models.h"

namespace onnx_prepack::digest {
namespace {

bool cli_built() {
  struct stat st;
  return ::stat(OP_CLI_PATH, &st) == 0;
}

class DigestCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cli_built()) << "onnx-prepack not built at " << OP_CLI_PATH;
    proto_ = testing::make_mlp(16, 32, 8, 3);
    path_ = dir_.file("mlp.onnx");
    testing::write_bytes(path_, proto_.SerializeAsString());
  }
  int run(const std::string& args, std::string* out) {
    return testing::run_command(std::string(OP_CLI_PATH) + " digest " + args + " 2>&1", out);
  }
  std::string expected(int i, Algorithm a) {
    auto model = format::Model::load(path_);
    const auto& t = (*model)->proto().graph().initializer(i);
    auto d = digest_tensor(**model, t, t.name(), {a, nullptr});
    return base::hex_lower(d->digest.data(), d->digest.size());
  }

  testing::TempDir dir_;
  onnx::ModelProto proto_;
  std::string path_;
};

TEST_F(DigestCli, OneLinePerInitializer) {
  std::string out;
  ASSERT_EQ(run(path_ + " --threads 2", &out), 0) << out;
  std::istringstream lines(out);
  std::string line;
  int i = 0;
  while (std::getline(lines, line)) {
    const auto& t = proto_.graph().initializer(i);
    EXPECT_EQ(line.rfind(t.name(), 0), 0u) << line;
    EXPECT_NE(line.find("FLOAT"), std::string::npos) << line;
    EXPECT_NE(
        line.find(std::to_string(t.raw_data().size()) + "  " + expected(i, Algorithm::kBlake3)),
        std::string::npos)
        << line;
    ++i;
  }
  EXPECT_EQ(i, proto_.graph().initializer_size());
}

TEST_F(DigestCli, JsonKeysAndSha256) {
  std::string out;
  ASSERT_EQ(run(path_ + " --algorithm sha256 --json", &out), 0) << out;
  const auto& t = proto_.graph().initializer(0);
  std::string dims = "[";
  for (int k = 0; k < t.dims_size(); ++k) dims += (k ? ", " : "") + std::to_string(t.dims(k));
  dims += "]";
  EXPECT_NE(out.find("\"name\": \"" + t.name() + "\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"data_type\": \"FLOAT\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"bytes\": " + std::to_string(t.raw_data().size())), std::string::npos);
  EXPECT_NE(out.find("\"algorithm\": \"sha256\""), std::string::npos);
  EXPECT_NE(out.find("\"digest\": \"" + expected(0, Algorithm::kSha256) + "\""), std::string::npos)
      << out;
  EXPECT_EQ(out.front(), '[');
}

TEST_F(DigestCli, UsageErrorsAndBadTensors) {
  std::string out;
  EXPECT_EQ(run(path_ + " --algorithm md5", &out), 2);
  EXPECT_NE(out.find("--algorithm 'md5' is not known"), std::string::npos) << out;
  EXPECT_EQ(run(path_ + " --threads -1", &out), 2);
  EXPECT_EQ(run("", &out), 2);
  EXPECT_EQ(run(dir_.file("absent.onnx"), &out), 2);

  proto_.mutable_graph()->mutable_initializer(1)->mutable_raw_data()->resize(3);
  testing::write_bytes(path_, proto_.SerializeAsString());
  EXPECT_EQ(run(path_, &out), 1);
  EXPECT_NE(out.find("initializers[1] '" + proto_.graph().initializer(1).name() +
                     "': raw_data is 3 bytes"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace onnx_prepack::digest
