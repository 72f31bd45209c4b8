// BLAKE3: the official test vectors on every kernel this CPU runs, lengths around block and
// chunk boundaries against the portable kernel and b3sum, streaming splits, thread counts.
#include "digest/blake3/blake3.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/json.h"
#include "testing/test_models.h"

namespace onnx_prepack::digest::blake3 {
namespace {

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i % 251);
  return v;
}

std::string hex(std::span<const uint8_t> b) { return base::hex_lower(b.data(), b.size()); }

std::string hash_hex(const Hasher& h, size_t len = 32) {
  std::vector<uint8_t> out(len);
  h.finalize(out);
  return hex(out);
}

std::string hash_of(std::span<const uint8_t> data, const Kernel* k = nullptr,
                    base::ThreadPool* pool = nullptr, size_t len = 32) {
  Hasher h(k, pool);
  h.update(data);
  return hash_hex(h, len);
}

struct VectorCase {
  size_t input_len = 0;
  std::string hash, keyed_hash, derive_key;
};

struct Vectors {
  std::string key, context;
  std::vector<VectorCase> cases;
};

// The value of `"name": "..."` or `"name": 123` after position `from`.
std::string field(const std::string& text, const std::string& name, size_t& from) {
  const std::string tag = "\"" + name + "\":";
  size_t p = text.find(tag, from);
  if (p == std::string::npos) return {};
  p += tag.size();
  while (text[p] == ' ') ++p;
  size_t end;
  if (text[p] == '"') {
    ++p;
    end = text.find('"', p);
  } else {
    end = text.find_first_of(",\n}", p);
  }
  from = end;
  return text.substr(p, end - p);
}

Vectors load_vectors() {
  std::ifstream f(std::string(OP_TEST_DATA_DIR) + "/blake3/test_vectors.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  Vectors v;
  size_t pos = 0;
  v.key = field(text, "key", pos);
  v.context = field(text, "context_string", pos);
  for (;;) {
    std::string len = field(text, "input_len", pos);
    if (len.empty()) break;
    VectorCase c;
    c.input_len = std::stoul(len);
    c.hash = field(text, "hash", pos);
    c.keyed_hash = field(text, "keyed_hash", pos);
    c.derive_key = field(text, "derive_key", pos);
    v.cases.push_back(c);
  }
  return v;
}

std::vector<const Kernel*> supported_kernels() {
  std::vector<const Kernel*> out;
  for (const Kernel& k : kernels()) {
    if (kernel_supported(k)) out.push_back(&k);
  }
  return out;
}

TEST(Blake3Dispatch, PortableAlwaysAndBestIsWidestSupported) {
  ASSERT_EQ(kernels().front().name, "portable");
  EXPECT_TRUE(kernel_supported(kernels().front()));
  const Kernel& best = best_kernel();
  EXPECT_TRUE(kernel_supported(best));
  for (const Kernel& k : kernels()) {
    if (kernel_supported(k)) {
      EXPECT_LE(k.degree, best.degree);
    }
  }
#if defined(__x86_64__)
  ASSERT_NE(find_kernel("avx2"), nullptr);
  ASSERT_NE(find_kernel("avx512"), nullptr);
  EXPECT_EQ(find_kernel("avx2")->degree, 8u);
  EXPECT_EQ(find_kernel("avx512")->degree, 16u);
#else
  // The _avx* units are x86-64 only (cmake/isa.cmake): the portable kernel alone.
  EXPECT_EQ(kernels().size(), 1u);
  EXPECT_EQ(find_kernel("avx2"), nullptr);
#endif
  EXPECT_EQ(find_kernel("neon"), nullptr);
}

TEST(Blake3Vectors, OfficialVectorsEveryKernelEveryMode) {
  const Vectors v = load_vectors();
  ASSERT_EQ(v.cases.size(), 35u) << "tests/data/blake3/test_vectors.json not found or changed";
  ASSERT_EQ(v.key.size(), kKeyLen);
  for (const Kernel* k : supported_kernels()) {
    SCOPED_TRACE(std::string(k->name));
    for (const VectorCase& c : v.cases) {
      SCOPED_TRACE("input_len " + std::to_string(c.input_len));
      const std::vector<uint8_t> input = pattern(c.input_len);
      const size_t xof = c.hash.size() / 2;
      ASSERT_EQ(xof, 131u);

      Hasher h(k);
      h.update(input);
      EXPECT_EQ(hash_hex(h, xof), c.hash);
      EXPECT_EQ(hash_hex(h, 32), c.hash.substr(0, 64));

      std::span<const uint8_t, kKeyLen> key(reinterpret_cast<const uint8_t*>(v.key.data()),
                                            kKeyLen);
      Hasher kh = Hasher::keyed(key, k);
      kh.update(input);
      EXPECT_EQ(hash_hex(kh, xof), c.keyed_hash);

      Hasher dh = Hasher::derive_key(v.context, k);
      dh.update(input);
      EXPECT_EQ(hash_hex(dh, xof), c.derive_key);
    }
  }
}

TEST(Blake3Vectors, ByteAtATimeAndOddSplits) {
  const Vectors v = load_vectors();
  for (const Kernel* k : supported_kernels()) {
    for (const VectorCase& c : v.cases) {
      const std::vector<uint8_t> input = pattern(c.input_len);
      Hasher h(k);
      // Cut sizes 1, 2, 3, ... so boundaries fall everywhere relative to blocks and chunks.
      size_t pos = 0;
      for (size_t step = 1; pos < input.size(); ++step) {
        size_t n = std::min(step * 37 % 1500 + 1, input.size() - pos);
        h.update({input.data() + pos, n});
        pos += n;
      }
      EXPECT_EQ(hash_hex(h, 131), c.hash) << k->name << " input_len " << c.input_len;
    }
  }
}

std::vector<size_t> boundary_lengths() {
  std::vector<size_t> lens = {0, 1, 63, 64, 65, 1023, 1024, 1025};
  for (int k = 1; k <= 24; ++k) {
    const size_t p = size_t(1) << k;
    lens.push_back(p - 1);
    lens.push_back(p);
    lens.push_back(p + 1);
  }
  std::sort(lens.begin(), lens.end());
  lens.erase(std::unique(lens.begin(), lens.end()), lens.end());
  return lens;
}

TEST(Blake3Lengths, EveryKernelMatchesPortableAroundBoundaries) {
  const std::vector<uint8_t> input = pattern((size_t(1) << 24) + 1);
  const Kernel* portable = find_kernel("portable");
  for (size_t len : boundary_lengths()) {
    std::span<const uint8_t> data(input.data(), len);
    const std::string want = hash_of(data, portable);
    for (const Kernel* k : supported_kernels()) {
      EXPECT_EQ(hash_of(data, k), want) << k->name << " length " << len;
    }
  }
}

TEST(Blake3Lengths, MatchesB3sumAroundBoundaries) {
  std::string out;
  ASSERT_EQ(testing::run_command("b3sum --version", &out), 0)
      << "b3sum is a required peer: run tools/setup.sh";
  testing::TempDir dir;
  const std::vector<uint8_t> input = pattern((size_t(1) << 24) + 1);
  std::string cmd = "cd " + dir.path() + " && b3sum --num-threads 1";
  std::map<std::string, std::string> want;
  for (size_t len : boundary_lengths()) {
    const std::string name = "len" + std::to_string(len);
    testing::write_bytes(dir.file(name),
                         std::string(reinterpret_cast<const char*>(input.data()), len));
    cmd += " " + name;
    want[name] = hash_of({input.data(), len});
  }
  ASSERT_EQ(testing::run_command(cmd, &out), 0) << out;
  std::istringstream lines(out);
  std::string hash, name;
  size_t seen = 0;
  while (lines >> hash >> name) {
    EXPECT_EQ(want.at(name), hash) << name;
    ++seen;
  }
  EXPECT_EQ(seen, want.size());
}

TEST(Blake3Threads, SameHashForEveryPoolSizeAndSplit) {
  const size_t n = (size_t(8) << 20) + 12345;
  const std::vector<uint8_t> input = pattern(n);
  const std::string want = hash_of(input, find_kernel("portable"));
  for (size_t threads : {1, 2, 3, 4, 7}) {
    base::ThreadPool pool(threads);
    for (uint64_t min_bytes : {uint64_t(1024), uint64_t(64 * 1024), uint64_t(1) << 20}) {
      Hasher h(nullptr, &pool);
      h.set_parallel_min_bytes(min_bytes);
      // A small header span, then the body cut at an odd place: the shape of a tensor digest.
      h.update({input.data(), 38});
      h.update({input.data() + 38, 3 * 1024 * 1024 + 5});
      h.update({input.data() + 38 + 3 * 1024 * 1024 + 5, n - 38 - 3 * 1024 * 1024 - 5});
      EXPECT_EQ(hash_hex(h), want) << threads << " threads, min " << min_bytes;
      Hasher one(nullptr, &pool);
      one.set_parallel_min_bytes(min_bytes);
      one.update(input);
      EXPECT_EQ(hash_hex(one), want) << threads << " threads, one span";
    }
  }
}

TEST(Blake3Threads, PowerOfTwoInputsEndingOnASubtree) {
  base::ThreadPool pool(3);
  for (size_t n : {size_t(2048), size_t(1) << 16, size_t(1) << 22}) {
    const std::vector<uint8_t> input = pattern(n);
    Hasher h(nullptr, &pool);
    h.set_parallel_min_bytes(2048);
    h.update(input);
    EXPECT_EQ(hash_hex(h), hash_of(input, find_kernel("portable"))) << n;
  }
}

TEST(Blake3Finalize, DoesNotChangeTheState) {
  const std::vector<uint8_t> input = pattern(5000);
  Hasher h;
  h.update({input.data(), 2000});
  const std::string mid = hash_hex(h);
  EXPECT_EQ(mid, hash_of({input.data(), 2000}));
  h.update({input.data() + 2000, 3000});
  EXPECT_EQ(hash_hex(h), hash_of(input));
}

}  // namespace
}  // namespace onnx_prepack::digest::blake3

namespace onnx_prepack::digest::blake3 {
namespace {

// ONNX_PREPACK_MAX_ISA (here set_max_isa) caps BLAKE3 like every other kernel:
// the one detector decides, and the digest does not depend on the kernel.
TEST(Blake3, DispatchFollowsTheIsaCap) {
  std::vector<uint8_t> data(100000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 31 + 7);
  auto hash_now = [&] {
    Hasher h(nullptr, nullptr);
    h.update(data);
    std::vector<uint8_t> out(32);
    h.finalize(out);
    return out;
  };
  const auto uncapped = hash_now();
  base::set_max_isa(base::IsaLevel::kRef);
  EXPECT_EQ(std::string(best_kernel().name), "portable");
  EXPECT_EQ(hash_now(), uncapped);
  base::set_max_isa(base::IsaLevel::kAvx2);
  EXPECT_NE(std::string(best_kernel().name), "avx512");
  EXPECT_EQ(hash_now(), uncapped);
  base::set_max_isa(std::nullopt);
}

}  // namespace
}  // namespace onnx_prepack::digest::blake3
