#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <thread>

#include "base/atomic_file.h"
#include "base/json.h"
#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "onnx_prepack/status.h"
#include "testing/test_models.h"

namespace onnx_prepack::base {
namespace {

Result<int> half(int v) {
  if (v % 2) return invalid_argument("value " + std::to_string(v) + " is odd");
  return v / 2;
}

Result<int> quarter(int v) {
  OP_ASSIGN_OR_RETURN(int h, half(v));
  OP_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

TEST(Status, PropagatesWithContext) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().with_context("layer[1]").message(), "layer[1]: value 3 is odd");
  EXPECT_EQ(r.status().to_string(), "invalid_argument: value 3 is odd");
}

TEST(ThreadPool, RunsEveryTaskOnceForEverySize) {
  for (size_t threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (size_t tasks : {0, 1, 3, 100, 1000}) {
      std::vector<std::atomic<int>> hits(tasks);
      pool.parallel_for(tasks, [&](size_t t, size_t w) {
        EXPECT_LT(w, pool.size());
        hits[t]++;
      });
      for (size_t t = 0; t < tasks; ++t) EXPECT_EQ(hits[t].load(), 1) << threads << "/" << tasks;
    }
  }
}

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int> n{0};
  pool.parallel_for(4, [&](size_t, size_t) { pool.parallel_for(3, [&](size_t, size_t) { n++; }); });
  EXPECT_EQ(n.load(), 12);
}

// Workers spin briefly, then sleep (thread_pool.cc): jobs that follow each other
// at once, after a pause past the spin window, and from two calling threads at
// the same time (one of them runs inline) each run every task exactly once.
TEST(ThreadPool, BackToBackSleepingAndConcurrentCallersLoseNoTask) {
  ThreadPool pool(3);
  auto job = [&](size_t tasks) {
    std::vector<std::atomic<int>> hits(tasks);
    pool.parallel_for(tasks, [&](size_t t, size_t) { hits[t]++; });
    int bad = 0;
    for (size_t t = 0; t < tasks; ++t) bad += hits[t].load() != 1;
    return bad;
  };
  int bad = 0;
  for (int i = 0; i < 2000; ++i) bad += job(size_t(2 + i % 7));
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the spin: workers sleep
    bad += job(64);
  }
  std::atomic<int> bad_other{0};
  std::thread other([&] {
    for (int i = 0; i < 500; ++i) bad_other += job(16);
  });
  for (int i = 0; i < 500; ++i) bad += job(16);
  other.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(bad_other.load(), 0);
}

TEST(Json, DumpsOrderedAndEscaped) {
  Json j = Json::object();
  j["b"] = 1;
  j["a"] = "x\"y\n";
  Json arr = Json::array();
  arr.push_back(true);
  arr.push_back(nullptr);
  arr.push_back(uint64_t(18446744073709551615ull));
  j["list"] = std::move(arr);
  EXPECT_EQ(j.dump(-1), "{\"b\":1,\"a\":\"x\\\"y\\n\",\"list\":[true,null,18446744073709551615]}");
  const uint8_t bytes[] = {0x00, 0xab, 0xff};
  EXPECT_EQ(hex_lower(bytes, 3), "00abff");
}

TEST(Json, ParsesWhatItDumpsAndReadsMembers) {
  auto j = parse_json(
      " {\"eos_token_id\": [2, 32000], \"pad\": -1, \"big\": 18446744073709551615,"
      " \"t\": 0.5e1, \"s\": \"a\\u00e9\\ud83d\\ude00\\n\", \"b\": true, \"n\": null,"
      " \"o\": {}, \"a\": [], \"pad\": 7} ",
      "t.json");
  ASSERT_TRUE(j.ok()) << j.status().message();
  ASSERT_TRUE(j->is_object());
  const Json* eos = j->find("eos_token_id");
  ASSERT_NE(eos, nullptr);
  ASSERT_TRUE(eos->is_array());
  EXPECT_EQ(eos->as_array()[1].as_int64(), 32000);
  EXPECT_EQ(j->find("pad")->as_int64(), -1);  // a repeated name: the first value
  EXPECT_EQ(j->find("big")->as_int64(), std::nullopt);
  EXPECT_EQ(j->find("big")->as_double(), 18446744073709551615.0);
  EXPECT_EQ(j->find("t")->as_int64(), 5);
  EXPECT_EQ(j->find("s")->as_string(), "a\xc3\xa9\xf0\x9f\x98\x80\n");
  EXPECT_TRUE(j->find("b")->as_bool());
  EXPECT_TRUE(j->find("n")->is_null());
  EXPECT_EQ(j->find("missing"), nullptr);
  EXPECT_EQ(j->find("s")->find("x"), nullptr);  // not an object
  // What dump writes reads back the same.
  auto again = parse_json(j->dump(), "dumped");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->dump(-1), j->dump(-1));
}

TEST(Json, RefusesMalformedAndTooDeepDocumentsNamingTheByte) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "\"abc", "\"\\x\"", "tru",
                          "[1] 2", "{\"a\":1,}", "\"\\ud800\\u0041\""}) {
    auto j = parse_json(bad, "bad.json");
    ASSERT_FALSE(j.ok()) << bad;
    EXPECT_NE(j.status().message().find("bad.json: not JSON: at byte "), std::string::npos)
        << j.status().message();
  }
  std::string deep(100000, '[');
  auto j = parse_json(deep, "deep.json");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("nesting of at most 64 levels"), std::string::npos)
      << j.status().message();
  EXPECT_TRUE(parse_json(std::string(63, '[') + std::string(63, ']'), "ok.json").ok());
}

TEST(AtomicFile, PublishesWholeFileOrNothing) {
  testing::TempDir dir;
  const std::string path = dir.file("f.bin");
  std::vector<uint8_t> a(10000, 1);
  ASSERT_TRUE(write_file_atomically(path, a).ok());
  {
    auto w = AtomicFileWriter::create(path);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->write(std::vector<uint8_t>(50, 2)).ok());
    // Destroyed without commit: the old content stays, no temporary remains.
  }
  auto back = read_file(path, 1 << 20);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, a);
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  auto too_big = read_file(path, 100);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);
}

TEST(MappedFile, MapsAndReportsIdentity) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("x"), "hello");
  auto f = MappedFile::open(dir.file("x"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(std::string((*f)->bytes().begin(), (*f)->bytes().end()), "hello");
  EXPECT_EQ((*f)->identity().size, 5u);
  testing::write_bytes(dir.file("empty"), "");
  auto e = MappedFile::open(dir.file("empty"));
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE((*e)->bytes().empty());
  auto d = MappedFile::open(dir.path());
  EXPECT_FALSE(d.ok());
}

}  // namespace
}  // namespace onnx_prepack::base
