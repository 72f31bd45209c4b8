// Memo policy (format.md §7.2): records are trusted for the same file identity only,
// never within the timestamp granularity, and invalidated by touch or edit.
#include "resolve/memo_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>

#include <filesystem>
#include <fstream>

#include "format/model_writer.h"
#include "resolve/resolve_fixture.h"
#include "resolve/resolver.h"

namespace onnx_prepack::resolve {
namespace {

using namespace testing_fixture;
using onnx_prepack::testing::TempDir;

struct MemoRun {
  bool hit;
  bool memo_used;
  uint64_t bytes_hashed;
  MissReason reason;
};

MemoRun run(const std::string& path, const std::string& memo_dir, int64_t granularity_ns) {
  auto model = format::Model::load(path).value();
  ResolverOptions opts;
  opts.verify = VerifyPolicy::kMemo;
  opts.memo_dir = memo_dir;
  opts.memo_granularity_ns = granularity_ns;
  Resolver r(*model, host(), opts);
  Resolution res = r.resolve(request("W1"));
  return {res.is_hit(), res.memo_used, res.bytes_hashed, res.reason};
}

// Moves the file's mtime back (ctime stays "now").
void set_mtime(const std::string& path, int64_t sec) {
  timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = sec;
  ts[0].tv_nsec = ts[1].tv_nsec = 0;
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), ts, 0), 0);
}

class MemoTest : public ::testing::TestWithParam<bool> {};  // param: external data

TEST_P(MemoTest, RecordedDigestIsTrustedThenInvalidated) {
  TempDir dir;
  onnx::ModelProto m = onnx_prepack::testing::make_mlp(8, 16, 4, 7);
  add_entry(m, {});
  const std::string path = dir.file("m.onnx");
  if (GetParam()) {
    format::WriteOptions wo;
    wo.external_threshold = 0;
    ASSERT_TRUE(format::write_model(m, path, wo, nullptr).ok());
  } else {
    ASSERT_TRUE(format::write_model_inline(m, path).ok());
  }
  const std::string memo = dir.file("memo");

  MemoRun first = run(path, memo, 0);
  EXPECT_TRUE(first.hit);
  EXPECT_FALSE(first.memo_used);
  EXPECT_EQ(first.bytes_hashed, 1024u);  // source and payload (format.md §4.6)
  MemoRun second = run(path, memo, 0);
  EXPECT_TRUE(second.hit);
  EXPECT_TRUE(second.memo_used);
  EXPECT_EQ(second.bytes_hashed, 0u);

  // A record taken within the granularity of the file's last change is not trusted.
  MemoRun racy = run(path, memo, int64_t(3600) * 1'000'000'000);
  EXPECT_TRUE(racy.hit);
  EXPECT_FALSE(racy.memo_used);
  EXPECT_EQ(racy.bytes_hashed, 1024u);

  // Touch: same bytes, new identity -> hashed again (still a hit), then memoised.
  const std::string data_file = GetParam() ? path + ".data" : path;
  set_mtime(data_file, 1'000'000'000);
  MemoRun touched = run(path, memo, 0);
  EXPECT_TRUE(touched.hit);
  EXPECT_FALSE(touched.memo_used);
  EXPECT_EQ(touched.bytes_hashed, 1024u);
  EXPECT_TRUE(run(path, memo, 0).memo_used);

  // Modify the weight in place (same size), restore the old mtime: ctime and
  // the content differ, so the memo must not vouch for the old digest.
  struct stat before;
  ASSERT_EQ(stat(data_file.c_str(), &before), 0);
  std::string bytes = onnx_prepack::testing::read_bytes(data_file);
  size_t at = std::string::npos;
  if (GetParam()) {  // write_model moved W1 out: its offset says where
    auto ref = format::parse_external_entries(find_init(m, "W1")->external_data());
    ASSERT_TRUE(ref.ok());
    at = size_t(ref->offset);
  } else {
    at = bytes.find(find_init(m, "W1")->raw_data().substr(0, 64));
  }
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] ^= 0x40;
  {
    std::fstream f(data_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(at + 1));
    f.put(bytes[at + 1]);
  }
  set_mtime(data_file, before.st_mtim.tv_sec);
  MemoRun modified = run(path, memo, 0);
  EXPECT_FALSE(modified.memo_used);
  EXPECT_FALSE(modified.hit);
  EXPECT_EQ(modified.reason, MissReason::kStaleDigest);
}

// Records are published without fsync (base::Durability::kRebuildable): one
// torn by a power loss, or edited, is not trusted; the range is hashed again.
TEST(MemoStore, TornOrEditedRecordIsNotTrusted) {
  TempDir dir;
  onnx::ModelProto m = onnx_prepack::testing::make_mlp(8, 16, 4, 7);
  add_entry(m, {});
  const std::string path = dir.file("m.onnx");
  ASSERT_TRUE(format::write_model_inline(m, path).ok());
  const std::string memo = dir.file("memo");
  ASSERT_FALSE(run(path, memo, 0).memo_used);
  ASSERT_TRUE(run(path, memo, 0).memo_used);
  std::vector<std::string> records;
  for (const auto& e : std::filesystem::directory_iterator(memo)) records.push_back(e.path());
  ASSERT_FALSE(records.empty());
  const std::string original = onnx_prepack::testing::read_bytes(records[0]);
  // Each record checked alone: the other records still vouch for their ranges.
  auto used_with = [&](const std::string& text) {
    for (const std::string& r : records) {
      if (r != records[0]) std::filesystem::remove(r);
    }
    onnx_prepack::testing::write_bytes(records[0], text);
    return run(path, memo, 0);
  };
  // Truncated inside the digest, cut before its check line, a digest digit changed.
  const size_t digest_at = original.find("digest ") + 7;
  MemoRun cut = used_with(original.substr(0, digest_at + 10));
  EXPECT_TRUE(cut.hit);
  EXPECT_GT(cut.bytes_hashed, 0u);
  MemoRun no_check = used_with(original.substr(0, original.find("check ")));
  EXPECT_GT(no_check.bytes_hashed, 0u);
  std::string edited = original;
  edited[digest_at] = edited[digest_at] == '0' ? '1' : '0';
  MemoRun changed = used_with(edited);
  EXPECT_TRUE(changed.hit);  // the range is hashed, never the edited digest trusted
  EXPECT_GT(changed.bytes_hashed, 0u);
}

INSTANTIATE_TEST_SUITE_P(Storage, MemoTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "external" : "inline"; });

TEST(MemoStore, DefaultDirFollowsXdg) {
  unsetenv("ONNX_PREPACK_MEMO_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(MemoStore::default_dir(), "/tmp/xdg-test/onnx-prepack/memo");
  setenv("ONNX_PREPACK_MEMO_DIR", "/tmp/elsewhere", 1);
  EXPECT_EQ(MemoStore::default_dir(), "/tmp/elsewhere");
  unsetenv("ONNX_PREPACK_MEMO_DIR");
  unsetenv("XDG_CACHE_HOME");
}

TEST(MemoStore, MemoRecordForCompileIsUsedByTheResolver) {
  TempDir dir;
  onnx::ModelProto m = onnx_prepack::testing::make_mlp(8, 16, 4, 7);
  add_entry(m, {});
  const std::string path = dir.file("m.onnx");
  ASSERT_TRUE(format::write_model_inline(m, path).ok());
  auto model = format::Model::load(path).value();
  const int idx = model->initializer_index("W1");
  auto d = digest::digest_tensor(*model, *model->find_initializer("W1"), "W1").value();
  MemoStore store(dir.file("memo"), 0);
  ASSERT_TRUE(memo_record(store, *model, idx, digest::Algorithm::kBlake3, d.digest).ok());
  MemoRun r = run(path, dir.file("memo"), 0);
  EXPECT_TRUE(r.hit);
  EXPECT_TRUE(r.memo_used);
  EXPECT_EQ(r.bytes_hashed, 512u);  // the inline payload: only the source was recorded
}

TEST(MemoStore, CorruptRecordIsIgnored) {
  TempDir dir;
  onnx::ModelProto m = onnx_prepack::testing::make_mlp(8, 16, 4, 7);
  add_entry(m, {});
  const std::string path = dir.file("m.onnx");
  ASSERT_TRUE(format::write_model_inline(m, path).ok());
  run(path, dir.file("memo"), 0);
  for (const auto& e : std::filesystem::directory_iterator(dir.file("memo"))) {
    std::string text = onnx_prepack::testing::read_bytes(e.path().string());
    text.resize(text.size() - 10);
    onnx_prepack::testing::write_bytes(e.path().string(), text);
  }
  MemoRun r = run(path, dir.file("memo"), 0);
  EXPECT_TRUE(r.hit);
  EXPECT_FALSE(r.memo_used);
}

}  // namespace
}  // namespace onnx_prepack::resolve

namespace onnx_prepack::resolve {
namespace {

TEST(MemoStore, CleanupBoundsTheFolderAndRemovesDeadWritersTemporaries) {
  onnx_prepack::testing::TempDir dir;
  const std::string memo = dir.file("memo");
  std::filesystem::create_directories(memo);
  for (int i = 0; i < 20; ++i) {
    const std::string p = memo + "/" + std::to_string(100 + i) + ".memo";
    onnx_prepack::testing::write_bytes(p, "x");
    timespec ts[2];
    ts[0].tv_sec = ts[1].tv_sec = 1'000'000 + i;  // record i is the i-th oldest
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), ts, 0), 0);
  }
  onnx_prepack::testing::write_bytes(memo + "/ab.memo.tmp.4194303.0badf00d", "partial");
  MemoStore store(memo);
  auto removed = store.cleanup(8);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 14u + 1u);  // down to 6 (3/4 of 8), and the temporary
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(std::filesystem::exists(memo + "/" + std::to_string(100 + i) + ".memo"), i >= 14)
        << i;
  }
  EXPECT_FALSE(std::filesystem::exists(memo + "/ab.memo.tmp.4194303.0badf00d"));
}

}  // namespace
}  // namespace onnx_prepack::resolve
