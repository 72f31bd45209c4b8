// digest_bench [FILE] [--rounds N] [--size BYTES]
//
// Hashes one file (created with pseudo-random bytes when absent, 1 GiB by default) with our
// BLAKE3 and with `b3sum --num-threads T` for T = 1 and 2, interleaved over several rounds,
// each run a fresh process that maps the file (as b3sum does), and prints the medians and
// the ratio b3sum time / our time (above 1: ours is faster). Then SHA-256 throughput.
// `digest_bench --hash-file FILE --threads N [--algorithm A]` is the child mode it times.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "digest/blake3/blake3.h"
#include "digest/digest.h"

extern char** environ;

namespace {

using namespace onnx_prepack;
using Clock = std::chrono::steady_clock;

// Runs argv, stdout to `out_path` (or /dev/null); returns wall seconds, or -1 on failure.
double run_timed(const std::vector<std::string>& args, const char* out_path = "/dev/null") {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  const auto t0 = Clock::now();
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? s : -1;
}

std::string first_word(const std::string& path) {
  std::ifstream f(path);
  std::string w;
  f >> w;
  return w;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

bool ensure_file(const std::string& path, uint64_t size) {
  if (std::ifstream(path).good()) {
    auto f = base::MappedFile::open(path);
    if (f.ok() && (*f)->bytes().size() == size) return true;
  }
  std::fprintf(stderr, "creating %s (%llu bytes)\n", path.c_str(), (unsigned long long)size);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::vector<uint64_t> buf(1 << 17);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (uint64_t done = 0; done < size;) {
    for (auto& w : buf) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      w = s;
    }
    const uint64_t n = std::min<uint64_t>(size - done, buf.size() * 8);
    out.write(reinterpret_cast<const char*>(buf.data()), std::streamsize(n));
    done += n;
  }
  return bool(out);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "/tmp/onnx-prepack-digest-bench.bin";
  int rounds = 7;
  uint64_t size = uint64_t(1) << 30;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "digest_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--rounds")
      rounds = std::stoi(next());
    else if (a == "--size")
      size = std::stoull(next());
    else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "usage: digest_bench [FILE] [--rounds N] [--size BYTES]\n");
      return a == "--help" ? 0 : 2;
    } else
      path = a;
  }

  if (!ensure_file(path, size)) return 2;
  const std::string hasher = OP_B3_HASH_PATH;  // bench/b3_hash.cc
  const std::string ours_out = path + ".ours.txt", b3_out = path + ".b3sum.txt";
  // Warm the page cache and check both tools agree.
  if (run_timed({hasher, path, "--threads", "1"}, ours_out.c_str()) < 0 ||
      run_timed({"b3sum", "--num-threads", "1", path}, b3_out.c_str()) < 0) {
    std::fprintf(stderr, "digest_bench: a hasher failed (is b3sum installed?)\n");
    return 2;
  }
  if (first_word(ours_out) != first_word(b3_out)) {
    std::fprintf(stderr, "digest_bench: MISMATCH ours %s b3sum %s\n", first_word(ours_out).c_str(),
                 first_word(b3_out).c_str());
    return 1;
  }
  std::remove(ours_out.c_str());
  std::remove(b3_out.c_str());

  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  const double gib = double(size) / double(uint64_t(1) << 30);
  std::printf("digest_bench %s, %s, %.3f GiB, %d rounds, kernel %s, %u hardware threads\n", date,
              path.c_str(), gib, rounds, std::string(digest::blake3::best_kernel().name).c_str(),
              std::thread::hardware_concurrency());
  std::printf("%-8s %12s %12s %12s %12s %8s\n", "threads", "ours s", "ours GiB/s", "b3sum s",
              "b3sum GiB/s", "ratio");
  std::vector<double> ours[3], theirs[3];
  for (int r = 0; r < rounds; ++r) {
    for (size_t t = 1; t <= 2; ++t) {
      const std::string ts = std::to_string(t);
      // Alternate who goes first so neither always follows the other.
      if (r % 2 == 0) {
        ours[t].push_back(run_timed({hasher, path, "--threads", ts}));
        theirs[t].push_back(run_timed({"b3sum", "--num-threads", ts, path}));
      } else {
        theirs[t].push_back(run_timed({"b3sum", "--num-threads", ts, path}));
        ours[t].push_back(run_timed({hasher, path, "--threads", ts}));
      }
    }
  }
  for (size_t t = 1; t <= 2; ++t) {
    const double o = median(ours[t]), b = median(theirs[t]);
    std::printf("%-8zu %12.4f %12.2f %12.4f %12.2f %8.3f\n", t, o, gib / o, b, gib / b, b / o);
  }

  // SHA-256 in process (OpenSSL EVP), one thread.
  auto file = base::MappedFile::open(path);
  if (!file.ok()) return 2;
  std::span<const uint8_t> parts[] = {(*file)->bytes()};
  std::vector<double> sha;
  for (int r = 0; r < std::max(1, rounds / 2); ++r) {
    const auto t0 = Clock::now();
    digest::Digest d = digest::hash_bytes(digest::Algorithm::kSha256, parts);
    sha.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (d[0] == 0 && d[1] == 0 && d[2] == 0 && d[3] == 0) std::printf(" ");  // keep the result
  }
  const double s = median(sha);
  std::printf("sha256   %12.4f %12.2f   (OpenSSL EVP, in process, 1 thread)\n", s, gib / s);
  return 0;
}
