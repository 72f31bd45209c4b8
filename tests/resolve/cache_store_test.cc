// Cache store (format.md §7.1): publish/lookup, LRU eviction under a bound, several
// concurrent writer processes, and a writer killed mid-publish.
#include "resolve/cache_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "resolve/resolve_fixture.h"

namespace onnx_prepack::resolve {
namespace {

using namespace testing_fixture;
using onnx_prepack::testing::TempDir;

CacheKey key_n(int n) {
  CacheKey k;
  k.source_digest.fill(0);
  k.source_digest[0] = uint8_t(n);
  k.source_digest[1] = uint8_t(n >> 8);
  k.source_digest[2] = uint8_t(n >> 16);
  k.format = kFormat;
  k.format_version = kFormatVersion;
  k.runtime = "onnx-prepack";
  k.runtime_version = "1";
  return k;
}

onnx::DeviceProto cpu_device() {
  onnx::DeviceProto d;
  d.set_type("cpu");
  d.set_architecture("x86_64");
  d.set_runtime("onnx-prepack");
  d.set_runtime_version("1");
  return d;
}

// n floats all equal to `n`: lookups check the content matches the key.
std::vector<float> payload_n(int n, size_t count) { return std::vector<float>(count, float(n)); }

Status publish_n(CacheStore& s, int n, size_t count) {
  const std::vector<float> p = payload_n(n, count);
  const uint64_t dims[] = {count};
  return s.publish(key_n(n), "W", cpu_device(), identity_type(kFormat, kFormatVersion), dims,
                   {reinterpret_cast<const uint8_t*>(p.data()), p.size() * 4});
}

// Absent, or complete with the right content; never partial.
void expect_absent_or_whole(const CacheStore& s, int n, size_t count, bool* present = nullptr) {
  auto r = s.lookup(key_n(n));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  if (present) *present = r->has_value();
  if (!r->has_value()) return;
  ASSERT_EQ((*r)->payload.size(), count * 4);
  const float* f = reinterpret_cast<const float*>((*r)->payload.data());
  for (size_t i = 0; i < count; i += 97) ASSERT_EQ(f[i], float(n));
}

TEST(CacheStore, PublishThenLookup) {
  TempDir dir;
  auto s = CacheStore::open(dir.file("c"), CacheMode::kReadWrite, 0).value();
  EXPECT_FALSE(s->lookup(key_n(1))->has_value());
  ASSERT_TRUE(publish_n(*s, 1, 1000).ok());
  bool present = false;
  expect_absent_or_whole(*s, 1, 1000, &present);
  EXPECT_TRUE(present);
  // Publishing the same key again keeps the existing entry.
  ASSERT_TRUE(publish_n(*s, 1, 1000).ok());
  EXPECT_EQ(s->entry_ids()->size(), 1u);
  // A wrong payload size is refused before anything is written.
  const uint64_t dims[] = {10};
  std::vector<uint8_t> bytes(12);
  EXPECT_FALSE(
      s->publish(key_n(2), "W", cpu_device(), identity_type(kFormat, kFormatVersion), dims, bytes)
          .ok());
  EXPECT_EQ(s->entry_ids()->size(), 1u);
}

TEST(CacheStore, ReadOnlyAndOffModes) {
  TempDir dir;
  auto rw = CacheStore::open(dir.file("c"), CacheMode::kReadWrite, 0).value();
  ASSERT_TRUE(publish_n(*rw, 1, 100).ok());
  auto ro = CacheStore::open(dir.file("c"), CacheMode::kReadOnly, 0).value();
  EXPECT_TRUE(ro->lookup(key_n(1))->has_value());
  EXPECT_FALSE(publish_n(*ro, 2, 100).ok());
  auto off = CacheStore::open(dir.file("c"), CacheMode::kOff, 0).value();
  EXPECT_FALSE(off->lookup(key_n(1))->has_value());
  EXPECT_EQ(cache_mode_from_name("read-only"), CacheMode::kReadOnly);
  EXPECT_EQ(cache_mode_name(CacheMode::kReadWrite), "read-write");
}

TEST(CacheStore, CorruptEntryIsDataLoss) {
  TempDir dir;
  auto s = CacheStore::open(dir.file("c"), CacheMode::kReadWrite, 0).value();
  ASSERT_TRUE(publish_n(*s, 1, 100).ok());
  const std::string data = dir.file("c") + "/entries/" + key_n(1).id() + "/entry.data";
  ASSERT_EQ(truncate(data.c_str(), 40), 0);
  auto r = s->lookup(key_n(1));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

TEST(CacheStore, EvictsLeastRecentlyUsed) {
  TempDir dir;
  // Each entry: 4096 payload bytes + a small message; bound fits three.
  auto s = CacheStore::open(dir.file("c"), CacheMode::kReadWrite, 3 * 4096 + 3 * 400).value();
  for (int n = 0; n < 3; ++n) {
    ASSERT_TRUE(publish_n(*s, n, 1024).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s->entry_ids()->size(), 3u);
  // Use entry 0, so entry 1 is now the least recently used.
  expect_absent_or_whole(*s, 0, 1024);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(publish_n(*s, 3, 1024).ok());
  bool present[4];
  for (int n = 0; n < 4; ++n) expect_absent_or_whole(*s, n, 1024, &present[n]);
  EXPECT_TRUE(present[0]);
  EXPECT_FALSE(present[1]);
  EXPECT_TRUE(present[2]);
  EXPECT_TRUE(present[3]);
  EXPECT_LE(*s->total_bytes(), s->max_bytes());
}

TEST(CacheStore, ConcurrentWriterProcesses) {
  TempDir dir;
  const std::string path = dir.file("c");
  constexpr uint64_t kBound = 40 * 4096;
  constexpr int kWriters = 4, kKeys = 24;
  ASSERT_TRUE(CacheStore::open(path, CacheMode::kReadWrite, kBound).ok());
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto s = CacheStore::open(path, CacheMode::kReadWrite, kBound);
      int failures = 0;
      // Overlapping keys in different orders, plus some of this writer only.
      for (int i = 0; i < kKeys; ++i) {
        const int n = (i * (w + 1)) % kKeys;
        if (!s.ok() || !publish_n(**s, n, 2048).ok()) ++failures;
        if (!publish_n(**s, 100 + w * kKeys + i, 2048).ok()) ++failures;
      }
      _exit(failures == 0 ? 0 : 1);
    }
    pids.push_back(pid);
  }
  // Read while they write: every entry is absent or whole.
  auto reader = CacheStore::open(path, CacheMode::kReadOnly, kBound).value();
  for (int round = 0; round < 20; ++round) {
    for (int n = 0; n < kKeys; ++n) expect_absent_or_whole(*reader, n, 2048);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int n = 0; n < kKeys; ++n) expect_absent_or_whole(*reader, n, 2048);
  for (int n = 100; n < 100 + kWriters * kKeys; ++n) expect_absent_or_whole(*reader, n, 2048);
  EXPECT_LE(*reader->total_bytes(), kBound);
  EXPECT_TRUE(std::filesystem::is_empty(path + "/tmp"));
}

TEST(CacheStore, WriterKilledMidPublish) {
  TempDir dir;
  const std::string path = dir.file("c");
  constexpr size_t kFloats = size_t(2) << 20;  // 8 MiB payloads: publishing takes a while
  ASSERT_TRUE(CacheStore::open(path, CacheMode::kReadWrite, 0).ok());
  for (int attempt = 0; attempt < 3; ++attempt) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto s = CacheStore::open(path, CacheMode::kReadWrite, 0);
      for (int n = attempt * 1000;; ++n) (void)publish_n(**s, n, kFloats);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 70 * attempt));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status));
    auto reader = CacheStore::open(path, CacheMode::kReadOnly, 0).value();
    for (int n = attempt * 1000; n < attempt * 1000 + 400; ++n) {
      expect_absent_or_whole(*reader, n, kFloats);
    }
  }
  // Every folder under entries/ is a whole entry of one of the keys written.
  auto reader = CacheStore::open(path, CacheMode::kReadOnly, 0).value();
  size_t present_count = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    for (int n = attempt * 1000; n < attempt * 1000 + 400; ++n) {
      bool present = false;
      expect_absent_or_whole(*reader, n, kFloats, &present);
      present_count += present;
    }
  }
  EXPECT_EQ(present_count, reader->entry_ids()->size());
  // The lock is free again and the crashed writer's temporaries get cleaned.
  auto s = CacheStore::open(path, CacheMode::kReadWrite, 0).value();
  ASSERT_TRUE(publish_n(*s, 99999, 16).ok());
  EXPECT_TRUE(std::filesystem::is_empty(path + "/tmp"));
  EXPECT_TRUE(s->lookup(key_n(99999))->has_value());
}

}  // namespace
}  // namespace onnx_prepack::resolve
