// CPU architecture strings of format.md §6: `<machine>(-<feature>)*`, with x86-64
// psABI levels v2/v3/v4 as shorthands for their feature sets. Device layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/cpu_features.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::device {

enum class Machine { kX86_64, kAarch64 };
std::string_view machine_name(Machine m);  // "x86_64" / "aarch64"
std::optional<Machine> machine_from_name(std::string_view name);
Machine host_machine();

// Every extension name the project knows. Order = printing order.
enum class Feature : uint8_t {
  // x86_64
  kSse3,
  kSsse3,
  kSse41,
  kSse42,
  kPopcnt,
  kCx16,
  kSahf,
  kAvx,
  kAvx2,
  kFma,
  kF16c,
  kBmi1,
  kBmi2,
  kLzcnt,
  kMovbe,
  kXsave,
  kAvx512f,
  kAvx512bw,
  kAvx512cd,
  kAvx512dq,
  kAvx512vl,
  kAvx512vnni,
  kAvx512bf16,
  kAvx512fp16,
  kAvx512vbmi,
  kAvx512ifma,
  kAvxvnni,
  kAmxTile,
  kAmxInt8,
  kAmxBf16,
  // aarch64
  kNeon,
  kFp16,
  kDotprod,
  kI8mm,
  kBf16,
  kSve,
  kSve2,
  kCount
};

// A set of known features as a bit mask.
class FeatureSet {
 public:
  FeatureSet() = default;
  static FeatureSet of(std::initializer_list<Feature> features);
  bool has(Feature f) const { return (bits_ >> static_cast<int>(f)) & 1; }
  void add(Feature f) { bits_ |= uint64_t(1) << static_cast<int>(f); }
  void add(const FeatureSet& o) { bits_ |= o.bits_; }
  bool contains(const FeatureSet& o) const { return (o.bits_ & ~bits_) == 0; }
  FeatureSet minus(const FeatureSet& o) const { return FeatureSet(bits_ & ~o.bits_); }
  bool empty() const { return bits_ == 0; }
  uint64_t bits() const { return bits_; }
  bool operator==(const FeatureSet&) const = default;
  std::vector<Feature> list() const;

 private:
  explicit FeatureSet(uint64_t bits) : bits_(bits) {}
  uint64_t bits_ = 0;
};

// Canonical lower-case name ("avx512f", "sse4.1", "amx-int8").
std::string_view feature_name(Feature f);
// Canonical names and a few aliases ("sse4_1", "bmi", "asimd", "asimddp").
std::optional<Feature> feature_from_name(std::string_view name);
// The machine a feature belongs to.
Machine feature_machine(Feature f);

// x86-64 psABI levels: v2 (SSE3..SSE4.2, POPCNT, CX16, LAHF/SAHF), v3 (v2 + AVX,
// AVX2, BMI1/2, F16C, FMA, LZCNT, MOVBE, XSAVE), v4 (v3 + AVX512F/BW/CD/DQ/VL).
// ref: https://gitlab.com/x86-psABIs/x86-64-ABI, "Micro-architecture levels"
FeatureSet psabi_level(int level);  // 2, 3 or 4; empty otherwise

// aarch64: the features an extension requires, as GCC's -march=armv8-a+EXT
// enables them (dotprod, i8mm, fp16, bf16 -> neon; sve -> neon, fp16; sve2 ->
// sve and its). parse_architecture adds them, so `aarch64-dotprod` is
// `aarch64-neon-dotprod`. Empty for every other feature (x86_64 names imply
// nothing: `x86_64-avx2` does not list avx).
FeatureSet aarch64_implied(Feature f);

// A parsed architecture string. `features` holds the known features, levels
// expanded; `unknown` keeps names this build does not know (a host never has
// them, so an entry listing one is incompatible but still parses).
struct Architecture {
  Machine machine = Machine::kX86_64;
  FeatureSet features;
  std::vector<std::string> unknown;
  // Canonical form: machine, then known features in enum order, then unknown
  // names in input order ("x86_64-avx2-fma"). Levels print expanded.
  std::string to_string() const;
};

// Parses `<machine>(-<feature>)*`. Errors (invalid_argument) for an empty
// string, an unknown machine, an empty or non-lower-case token, or a feature of
// the other machine. Feature names that themselves contain '-' ("amx-int8")
// are matched longest first.
Result<Architecture> parse_architecture(std::string_view text);

// Features of a CpuFeatures struct as a set.
FeatureSet feature_set(const CpuFeatures& cpu);

}  // namespace onnx_prepack::device
