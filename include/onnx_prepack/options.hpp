// The engine's typed options and their one spelling: each frontend (CLI flags,
// C API fields, Python keywords) parses its own form at its edge into these
// values, and prints them back with the names below.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "onnx_prepack/defaults.hpp"

namespace onnx_prepack {

// format.md §7.2: how a hit's source digest is trusted.
enum class VerifyPolicy : uint8_t {
  kFull,  // hash every source that has a candidate entry
  kMemo,  // trust a digest recorded for the same file identity, else hash and record
  kOff,   // trust source_digest without hashing; hits are reported unverified
};
inline constexpr VerifyPolicy kDefaultVerifyPolicy = VerifyPolicy::kFull;
std::string_view verify_policy_name(VerifyPolicy p);  // "full" / "memo" / "off"
std::optional<VerifyPolicy> verify_policy_from_name(std::string_view name);

// Whether weights go through the resolver (compiled entries, cache, packs) or
// every consumer reads its initializer as it is.
enum class WeightMode : uint8_t { kPacked, kPlain };
inline constexpr WeightMode kDefaultWeightMode = WeightMode::kPacked;
std::string_view weight_mode_name(WeightMode m);  // "packed" / "plain"
std::optional<WeightMode> weight_mode_from_name(std::string_view name);

// How a weight-only QDQ unit (DequantizeLinear of a constant int8 / uint8
// weight feeding MatMul or Gemm) and a full QDQ unit run (docs/runtime.md,
// "QDQ units"; docs/decisions.md): kExact computes what the graph says (the
// weight dequantized once at plan time, a float product); kInteger rewrites
// the unit onto the integer kernels (A quantized on the fly), as ONNX
// Runtime's CPU provider does, which changes the output by a quantization
// error. Exact by default: the engine never changes what a model computes
// unless asked.
enum class QdqMode : uint8_t { kExact, kInteger };
inline constexpr QdqMode kDefaultQdqMode = QdqMode::kExact;
std::string_view qdq_mode_name(QdqMode m);  // "exact" / "integer"
std::optional<QdqMode> qdq_mode_from_name(std::string_view name);

// Where misses are written back and looked up (format.md §7.1). No store when `dir`
// is empty: that is the one meaning of "no cache" inside the engine.
struct CacheLocation {
  std::string dir;
  bool read_only = false;
  uint64_t max_bytes = kDefaultCacheMaxBytes;  // 0 = unbounded
  bool enabled() const { return !dir.empty(); }
};
// The word the CLI (`--cache off`, its default) and Python (`cache="off"`)
// take for "no store", and what reports print for it.
inline constexpr std::string_view kCacheOffName = "off";
// A frontend's folder argument: "" or "off" -> no store, else the folder.
CacheLocation cache_location_from_arg(std::string_view arg);
// The folder, or "off".
std::string_view cache_location_name(const CacheLocation& c);

// One run's limits (docs/runtime.md, "Deadline and cancellation"): a run that
// passes its deadline stops with kDeadlineExceeded, one whose terminate flag
// is set stops with kCancelled; either way the session stays usable. Checked
// between nodes, at every If/Loop/Scan body run and every few thousand steps
// of the kernels with a work bound, so a run stops within one node's time.
struct RunOptions {
  // Milliseconds from the start of the run (after waiting for an earlier run
  // of the same engine; planning included) to its deadline; 0 = none.
  uint64_t deadline_ms = 0;
  // Set to true from any thread to stop the run; null = not cancellable. The
  // caller owns it; it must outlive the run.
  const std::atomic<bool>* terminate = nullptr;
};

}  // namespace onnx_prepack
