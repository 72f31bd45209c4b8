// Payload integrity and publication (format.md §4.6, issue 11 items 1, 2, 8, 9):
// damaged compiled data is a miss that repacks (outputs unchanged), compile
// publishes so no model is paired with bytes it was not written with, and
// cache-store failures are never fatal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "format/model_writer.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

namespace fs = std::filesystem;

std::string cli() { return "timeout 120 " + std::string(OP_CLI_PATH); }

std::string data_file_of(const testing::TempDir& dir, const std::string& model) {
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string n = e.path().filename().string();
    if (n.rfind(model + ".", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".data") {
      return e.path().string();
    }
  }
  return "";
}

void flip_byte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(offset));
  char c = 0;
  f.read(&c, 1);
  c = char(c ^ 0x5a);
  f.seekp(std::streamoff(offset));
  f.write(&c, 1);
}

struct Fixture {
  testing::TempDir dir;
  std::string out;
  Fixture() {
    testing::write_bytes(dir.file("m.onnx"), testing::make_mlp(64, 96, 32, 5).SerializeAsString());
    EXPECT_EQ(testing::run_command(cli() + " run " + dir.file("m.onnx") + " --weights plain " +
                                       "--input x=random --output-dir " + dir.file("ref"),
                                   &out),
              0)
        << out;
  }
  int run(const std::string& model, const std::string& flags, const std::string& outdir) {
    return testing::run_command(cli() + " run " + dir.file(model) + " --input x=random --json " +
                                    "--memo-dir " + dir.file("memo") + " --output-dir " +
                                    dir.file(outdir) + " " + flags,
                                &out);
  }
  bool same_output(const std::string& outdir) {
    return testing::read_bytes(dir.file(outdir + "/y.npy")) ==
           testing::read_bytes(dir.file("ref/y.npy"));
  }
};

TEST(PayloadIntegrity, FlippedPayloadByteIsACorruptPayloadMissUnderFullAndMemo) {
  Fixture f;
  ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " +
                                     f.dir.file("c.onnx") + " --target host --memo-dir " +
                                     f.dir.file("memo"),
                                 &f.out),
            0)
      << f.out;
  ASSERT_EQ(f.run("c.onnx", "--verify memo", "o0"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  const std::string data = data_file_of(f.dir, "c.onnx");
  ASSERT_FALSE(data.empty());
  flip_byte(data, 100);  // inside the first payload (payloads are written first)
  for (const char* policy : {"full", "memo"}) {
    ASSERT_EQ(f.run("c.onnx", std::string("--verify ") + policy, policy), 0) << f.out;
    EXPECT_NE(f.out.find("corrupt_payload"), std::string::npos) << policy << f.out;
    EXPECT_TRUE(f.same_output(policy)) << policy;
  }
}

TEST(PayloadIntegrity, EntryWithoutPayloadDigestIsUnverifiable) {
  Fixture f;
  ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " +
                                     f.dir.file("c.onnx") + " --target host --no-memo",
                                 &f.out),
            0);
  onnx::ModelProto p;
  ASSERT_TRUE(p.ParseFromString(testing::read_bytes(f.dir.file("c.onnx"))));
  for (auto& ct : *p.mutable_compiled_tensors()) ct.clear_metadata_props();
  testing::write_bytes(f.dir.file("c.onnx"), p.SerializeAsString());
  ASSERT_EQ(f.run("c.onnx", "--verify full", "full"), 0) << f.out;
  EXPECT_NE(f.out.find("unverifiable_payload"), std::string::npos) << f.out;
  ASSERT_EQ(f.run("c.onnx", "--verify off", "off"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("full"));
}

TEST(PayloadIntegrity, CorruptCacheStoreEntryIsReplacedByTheWriteBack) {
  Fixture f;
  const std::string store = f.dir.file("store");
  ASSERT_EQ(f.run("m.onnx", "--verify full --cache " + store, "o1"), 0) << f.out;
  ASSERT_EQ(f.run("m.onnx", "--verify full --cache " + store, "o2"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  int flipped = 0;
  for (const auto& e : fs::directory_iterator(store + "/entries")) {
    flip_byte(e.path().string() + "/entry.data", 7);
    ++flipped;
  }
  ASSERT_EQ(flipped, 2);
  ASSERT_EQ(f.run("m.onnx", "--verify full --cache " + store, "o3"), 0) << f.out;
  EXPECT_NE(f.out.find("corrupt_payload"), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("o3"));
  // The write-back replaced both entries: hits again.
  ASSERT_EQ(f.run("m.onnx", "--verify full --cache " + store, "o4"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("o4"));
}

TEST(PayloadIntegrity, TruncatedCacheStoreEntryIsReplaced) {
  Fixture f;
  const std::string store = f.dir.file("store");
  ASSERT_EQ(f.run("m.onnx", "--cache " + store, "o1"), 0) << f.out;
  for (const auto& e : fs::directory_iterator(store + "/entries")) {
    fs::resize_file(e.path().string() + "/entry.data", 100);
  }
  ASSERT_EQ(f.run("m.onnx", "--cache " + store, "o2"), 0) << f.out;
  EXPECT_NE(f.out.find("invalid_entry"), std::string::npos) << f.out;
  ASSERT_EQ(f.run("m.onnx", "--cache " + store, "o3"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("o3"));
}

TEST(CacheStoreFailures, AreNeverFatal) {
  Fixture f;
  // A file where the store folder should be, and a store whose entries/ and tmp/ are files.
  testing::write_bytes(f.dir.file("file_store"), "x");
  ASSERT_EQ(f.run("m.onnx", "--cache " + f.dir.file("file_store"), "o1"), 0) << f.out;
  EXPECT_NE(f.out.find("\"store_error\""), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("o1"));
  for (const char* sub : {"entries", "tmp"}) {
    const std::string s = f.dir.file(std::string("bad_") + sub);
    fs::create_directories(s);
    testing::write_bytes(s + "/" + sub, "x");
    ASSERT_EQ(f.run("m.onnx", "--cache " + s, std::string("o_") + sub), 0) << f.out;
    EXPECT_NE(f.out.find("store_error"), std::string::npos) << f.out;
    EXPECT_TRUE(f.same_output(std::string("o_") + sub));
  }
}

TEST(CompilePublish, ExistingEntryWithMissingOrTruncatedPayloadIsReplaced) {
  Fixture f;
  ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " +
                                     f.dir.file("c.onnx") + " --target host --no-memo",
                                 &f.out),
            0);
  // Entry 0's payload file is gone; entry 1's range runs past the end of its file.
  onnx::ModelProto p;
  ASSERT_TRUE(p.ParseFromString(testing::read_bytes(f.dir.file("c.onnx"))));
  ASSERT_EQ(p.compiled_tensors_size(), 2);
  for (auto& kv : *p.mutable_compiled_tensors(0)->mutable_value()->mutable_external_data()) {
    if (kv.key() == "location") kv.set_value("gone.data");
  }
  for (auto& kv : *p.mutable_compiled_tensors(1)->mutable_value()->mutable_external_data()) {
    if (kv.key() == "offset") kv.set_value("1073741824");
  }
  testing::write_bytes(f.dir.file("c.onnx"), p.SerializeAsString());
  ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("c.onnx") + " -o " +
                                     f.dir.file("d.onnx") + " --target host --no-memo",
                                 &f.out),
            0)
      << f.out;
  ASSERT_EQ(f.run("d.onnx", "--verify full", "d"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("d"));
}

TEST(CompilePublish, InPlaceCompileUsesAFreshDataFileAndRemovesTheOldOne) {
  Fixture f;
  const std::string c = f.dir.file("c.onnx");
  ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " + c +
                                     " --target host --no-memo",
                                 &f.out),
            0);
  const std::string first = fs::path(data_file_of(f.dir, "c.onnx")).filename().string();
  auto data_files = [&] {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(f.dir.path())) {
      const std::string n = e.path().filename().string();
      if (n.rfind("c.onnx.", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".data")
        out.insert(n);
    }
    return out;
  };
  // The output stands alone: its data file holds the initializers too, so an
  // in-place recompile of the same input writes the same bytes under the same
  // (content-derived) name and leaves one data file.
  ASSERT_EQ(testing::run_command(cli() + " compile " + c + " -o " + c + " --target host --no-memo",
                                 &f.out),
            0)
      << f.out;
  EXPECT_EQ(data_files(), std::set<std::string>{first});
  ASSERT_EQ(f.run("c.onnx", "--verify full", "c"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("c"));
  // Other content (entries for one more level): a new name, and the
  // previous file is removed once the new model is in place.
  ASSERT_EQ(testing::run_command(cli() + " compile " + c + " -o " + c +
                                     " --target x86_64-v3 --target x86_64-v4 --no-memo",
                                 &f.out),
            0)
      << f.out;
  const std::set<std::string> after = data_files();
  EXPECT_EQ(after.size(), 1u);
  EXPECT_FALSE(after.count(first));
  // Portable weights too.
  ASSERT_EQ(f.run("c.onnx", "--weights plain", "plain"), 0) << f.out;
  EXPECT_TRUE(f.same_output("plain"));
}

TEST(CompilePublish, OneInputGivesIdenticalFilesAndTheOutputStandsAlone) {
  Fixture f;
  fs::create_directories(f.dir.file("a"));
  fs::create_directories(f.dir.file("b"));
  for (const char* d : {"a", "b"}) {
    ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " +
                                       f.dir.file(std::string(d) + "/c.onnx") +
                                       " --target host --no-memo",
                                   &f.out),
              0)
        << f.out;
  }
  std::vector<std::string> names[2];
  for (int i = 0; i < 2; ++i) {
    for (const auto& e : fs::directory_iterator(f.dir.file(i == 0 ? "a" : "b")))
      names[i].push_back(e.path().filename().string());
    std::sort(names[i].begin(), names[i].end());
  }
  ASSERT_EQ(names[0], names[1]);
  ASSERT_EQ(names[0].size(), 2u);  // the model and its one data file
  for (const std::string& n : names[0]) {
    EXPECT_EQ(testing::read_bytes(f.dir.file("a/" + n)), testing::read_bytes(f.dir.file("b/" + n)))
        << n;
  }

  // A source with external data in the output's folder: the output copies
  // the weights, so it runs after the source's data file is gone.
  fs::create_directories(f.dir.file("s"));
  onnx::ModelProto m = testing::make_mlp(64, 96, 32, 5);
  ASSERT_TRUE(format::write_model(m, f.dir.file("s/m.onnx"), format::WriteOptions{}, nullptr).ok());
  ASSERT_TRUE(fs::exists(f.dir.file("s/m.onnx.data")));
  ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("s/m.onnx") + " -o " +
                                     f.dir.file("s/c.onnx") + " --target host --no-memo",
                                 &f.out),
            0)
      << f.out;
  fs::remove(f.dir.file("s/m.onnx.data"));
  ASSERT_EQ(f.run("s/c.onnx", "--verify full", "alone"), 0) << f.out;
  EXPECT_EQ(f.out.find("\"miss\""), std::string::npos) << f.out;
  EXPECT_TRUE(f.same_output("alone"));
}

TEST(CompilePublish, TemporariesOfAKilledCompileAreRemoved) {
  Fixture f;
  // A temporary of a writer whose process is gone (pid 2^22 - 1 is not running here).
  const std::string stale = f.dir.file("c.onnx.tmp.4194303.0badf00d");
  const std::string stale_data = f.dir.file("c.onnx.data.tmp.4194303.0badf00d");
  testing::write_bytes(stale, "partial");
  testing::write_bytes(stale_data, "partial");
  ASSERT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " +
                                     f.dir.file("c.onnx") + " --target host --no-memo",
                                 &f.out),
            0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_data));
}

TEST(CompilePublish, WriteFailureExitsThree) {
  Fixture f;
  if (::geteuid() == 0) {
    // root ignores permissions: write into a path under a file instead.
    testing::write_bytes(f.dir.file("afile"), "x");
    EXPECT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " +
                                       f.dir.file("afile/c.onnx") + " --target host --no-memo",
                                   &f.out),
              3)
        << f.out;
    return;
  }
  fs::create_directories(f.dir.file("ro"));
  ::chmod(f.dir.file("ro").c_str(), 0555);
  EXPECT_EQ(testing::run_command(cli() + " compile " + f.dir.file("m.onnx") + " -o " +
                                     f.dir.file("ro/c.onnx") + " --target host --no-memo",
                                 &f.out),
            3)
      << f.out;
}

}  // namespace
}  // namespace onnx_prepack

namespace onnx_prepack {
namespace {

TEST(CompileTarget, PsabiLevelsPickTheBestFormatTheTargetMeets) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("m.onnx"), testing::make_mlp(16, 32, 8, 1).SerializeAsString());
  std::string out;
  const std::pair<const char*, const char*> cases[] = {
      {"x86_64-v3", "\"architecture\": \"x86_64-avx2-fma\""},
      {"x86_64-v4", "\"architecture\": \"x86_64-avx512f\""},
      {"x86_64-v4-avx512vnni", "\"architecture\": \"x86_64-avx512f\""},
  };
  for (const auto& [target, want] : cases) {
    ASSERT_EQ(testing::run_command(cli() + " compile " + dir.file("m.onnx") + " -o " +
                                       dir.file("c.onnx") + " --no-memo --target " + target,
                                   &out),
              0)
        << target << out;
    ASSERT_EQ(testing::run_command(cli() + " inspect --json " + dir.file("c.onnx"), &out), 0);
    EXPECT_NE(out.find(want), std::string::npos) << target << out;
  }
  // A target too old for the f32 formats: only the baseline (MatMulNBits)
  // formats fit, so an MLP gets no entry and compile says why per weight.
  ASSERT_EQ(testing::run_command(cli() + " compile " + dir.file("m.onnx") + " -o " +
                                     dir.file("c.onnx") + " --no-memo --target x86_64-v2",
                                 &out),
            0)
      << out;
  EXPECT_NE(out.find("compiled 0 entries"), std::string::npos) << out;
  EXPECT_NE(out.find("no format for the targets"), std::string::npos) << out;
  // A target that does not parse.
  EXPECT_EQ(testing::run_command(cli() + " compile " + dir.file("m.onnx") + " -o " +
                                     dir.file("c.onnx") + " --target sparc64-vis",
                                 &out),
            2);
  EXPECT_NE(out.find("--target 'sparc64-vis'"), std::string::npos) << out;
}

}  // namespace
}  // namespace onnx_prepack
