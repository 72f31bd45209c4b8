// Helpers shared by the load-path fuzz targets: a private scratch folder per
// process, and the fixed model the resolver target attaches fuzzed entries to.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include "onnx_prepack.pb.h"
#include "testing/test_models.h"

namespace onnx_prepack::fuzz {

// A folder of this process, created once; fuzz inputs are written below it.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/onnx-prepack-fuzz-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (d == nullptr) std::abort();
    static std::string path(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    });
    return path;
  }();
  return dir;
}

inline void write_file(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// Inputs made of two parts: u32le length of the first, the first, the rest.
struct TwoParts {
  std::span<const uint8_t> first, rest;
};
inline TwoParts split(const uint8_t* data, size_t size) {
  TwoParts p;
  if (size < 4) return p;
  uint32_t n = 0;
  std::memcpy(&n, data, 4);
  const size_t len = std::min<size_t>(n, size - 4);
  p.first = {data + 4, len};
  p.rest = {data + 4 + len, size - 4 - len};
  return p;
}

// The fixed model of the resolver target: a small MLP (W1 [16, 32], W2 [32, 8]).
inline onnx::ModelProto fixed_model() { return testing::make_mlp(16, 32, 8, 1); }

}  // namespace onnx_prepack::fuzz
