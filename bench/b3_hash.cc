// b3_hash FILE [--threads N]: our BLAKE3 of one mapped file, printed like b3sum.
// A separate, minimal program so that digest_bench compares hashing with
// hashing: linked --as-needed, it loads no protobuf or OpenSSL at start-up,
// just as b3sum loads nothing beyond libc.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "base/json.h"
#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "digest/blake3/blake3.h"

int main(int argc, char** argv) {
  using namespace onnx_prepack;
  std::string path;
  size_t threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::strtoul(argv[++i], nullptr, 10);
    } else if (!a.empty() && a[0] != '-' && path.empty()) {
      path = a;
    } else {
      std::fprintf(stderr, "usage: b3_hash FILE [--threads N]\n");
      return 2;
    }
  }
  if (path.empty() || threads == 0) {
    std::fprintf(stderr, "usage: b3_hash FILE [--threads N]\n");
    return 2;
  }
  auto file = base::MappedFile::open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "b3_hash: %s\n", file.status().message().c_str());
    return 2;
  }
  std::unique_ptr<base::ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<base::ThreadPool>(threads);
  digest::blake3::Hasher hasher(nullptr, pool.get());
  hasher.update((*file)->bytes());
  uint8_t out[32];
  hasher.finalize(out);
  std::printf("%s  %s\n", base::hex_lower(out, sizeof out).c_str(), path.c_str());
  return 0;
}
