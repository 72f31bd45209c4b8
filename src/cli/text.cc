#include "cli/text.h"

#include <cstdio>

namespace onnx_prepack::cli {

std::string human_bytes(uint64_t b) {
  char buf[64];
  if (b >= (uint64_t(1) << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(1 << 30));
  } else if (b >= (uint64_t(1) << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", double(b) / double(1 << 20));
  } else if (b >= 1024) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", double(b) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  }
  return buf;
}

}  // namespace onnx_prepack::cli
