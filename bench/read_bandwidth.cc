// The machine's memory read bandwidth, the ceiling of a decode step that reads
// every weight once (bench/llm_bench.py quotes decode GB/s against it): sums
// a buffer larger than the caches with T threads, each its own slice, and
// prints one JSON line {"threads", "bytes", "gb_per_s" (median), "runs"}.
//   read_bandwidth [--mib N] [--threads T] [--runs R]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// Eight independent accumulators so the loop is bound by loads, not adds (the
// compiler vectorises it; portable C++, so it builds on every architecture).
uint64_t sum_slice(const uint64_t* p, size_t n) {
  uint64_t acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += p[i + size_t(k)];
  uint64_t s = 0;
  for (uint64_t a : acc) s += a;
  for (; i < n; ++i) s += p[i];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 2048;
  int threads = 1, runs = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mib") mib = size_t(std::stoull(argv[i + 1]));
    else if (a == "--threads") threads = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: read_bandwidth [--mib N] [--threads T] [--runs R]\n");
      return 2;
    }
  }
  const size_t n = mib * (size_t(1) << 20) / sizeof(uint64_t);
  std::vector<uint64_t> buf(n);
  for (size_t i = 0; i < n; ++i) buf[i] = i;  // touched: resident, not the zero page
  std::vector<double> gbs;
  uint64_t keep = 0;
  for (int r = 0; r < runs; ++r) {
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const size_t lo = n * size_t(t) / size_t(threads), hi = n * size_t(t + 1) / size_t(threads);
        sums[size_t(t)] = sum_slice(buf.data() + lo, hi - lo);
      });
    }
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint64_t v : sums) keep += v;
    gbs.push_back(double(n * sizeof(uint64_t)) / s / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  std::printf("{\"threads\": %d, \"bytes\": %zu, \"gb_per_s\": %.2f, \"runs\": %d, \"check\": %llu}\n",
              threads, n * sizeof(uint64_t), gbs[gbs.size() / 2], runs,
              static_cast<unsigned long long>(keep & 0xff));
  return 0;
}
