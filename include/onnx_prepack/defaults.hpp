// Defaults shared by every frontend (CLI flags, C API, Python keywords, the
// engine) and the layers that apply them: each is written here once.
#pragma once

#include <cstdint>

namespace onnx_prepack {

// Size bound of a cache store (format.md §7.1 eviction): 4 GiB.
inline constexpr uint64_t kDefaultCacheMaxBytes = uint64_t(4) << 30;
// Threads of a pool; 0 everywhere means all cores (hardware threads).
inline constexpr uint32_t kDefaultThreads = 0;
// Thread counts above this are refused (a typo must not start a billion threads).
inline constexpr uint32_t kMaxThreads = 1024;

}  // namespace onnx_prepack
