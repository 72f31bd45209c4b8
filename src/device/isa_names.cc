// Feature names, psABI levels and the architecture grammar of format.md §6.
// Device layer.
#include "device/isa_names.h"

#include <array>

namespace onnx_prepack::device {
namespace {

struct FeatureInfo {
  Feature feature;
  std::string_view name;
  Machine machine;
};

constexpr Machine kX = Machine::kX86_64;
constexpr Machine kA = Machine::kAarch64;

// Canonical names: lower-case as GCC's -m options and the psABI spell them.
constexpr std::array<FeatureInfo, static_cast<size_t>(Feature::kCount)> kFeatures = {{
    {Feature::kSse3, "sse3", kX},
    {Feature::kSsse3, "ssse3", kX},
    {Feature::kSse41, "sse4.1", kX},
    {Feature::kSse42, "sse4.2", kX},
    {Feature::kPopcnt, "popcnt", kX},
    {Feature::kCx16, "cx16", kX},
    {Feature::kSahf, "sahf", kX},
    {Feature::kAvx, "avx", kX},
    {Feature::kAvx2, "avx2", kX},
    {Feature::kFma, "fma", kX},
    {Feature::kF16c, "f16c", kX},
    {Feature::kBmi1, "bmi1", kX},
    {Feature::kBmi2, "bmi2", kX},
    {Feature::kLzcnt, "lzcnt", kX},
    {Feature::kMovbe, "movbe", kX},
    {Feature::kXsave, "xsave", kX},
    {Feature::kAvx512f, "avx512f", kX},
    {Feature::kAvx512bw, "avx512bw", kX},
    {Feature::kAvx512cd, "avx512cd", kX},
    {Feature::kAvx512dq, "avx512dq", kX},
    {Feature::kAvx512vl, "avx512vl", kX},
    {Feature::kAvx512vnni, "avx512vnni", kX},
    {Feature::kAvx512bf16, "avx512bf16", kX},
    {Feature::kAvx512fp16, "avx512fp16", kX},
    {Feature::kAvx512vbmi, "avx512vbmi", kX},
    {Feature::kAvx512ifma, "avx512ifma", kX},
    {Feature::kAvxvnni, "avxvnni", kX},
    {Feature::kAmxTile, "amx-tile", kX},
    {Feature::kAmxInt8, "amx-int8", kX},
    {Feature::kAmxBf16, "amx-bf16", kX},
    {Feature::kNeon, "neon", kA},
    {Feature::kFp16, "fp16", kA},
    {Feature::kDotprod, "dotprod", kA},
    {Feature::kI8mm, "i8mm", kA},
    {Feature::kBf16, "bf16", kA},
    {Feature::kSve, "sve", kA},
    {Feature::kSve2, "sve2", kA},
}};

struct Alias {
  std::string_view alias;
  Feature feature;
};
constexpr Alias kAliases[] = {
    {"sse4_1", Feature::kSse41}, {"sse4_2", Feature::kSse42},    {"bmi", Feature::kBmi1},
    {"abm", Feature::kLzcnt},    {"cmpxchg16b", Feature::kCx16}, {"lahf_lm", Feature::kSahf},
    {"asimd", Feature::kNeon},   {"asimdhp", Feature::kFp16},    {"asimddp", Feature::kDotprod},
};

bool valid_token(std::string_view t) {
  if (t.empty()) return false;
  for (char c : t) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string_view machine_name(Machine m) { return m == Machine::kX86_64 ? "x86_64" : "aarch64"; }

std::optional<Machine> machine_from_name(std::string_view name) {
  if (name == "x86_64") return Machine::kX86_64;
  if (name == "aarch64") return Machine::kAarch64;
  return std::nullopt;
}

Machine host_machine() {
#if defined(__aarch64__)
  return Machine::kAarch64;
#else
  return Machine::kX86_64;
#endif
}

FeatureSet FeatureSet::of(std::initializer_list<Feature> features) {
  FeatureSet s;
  for (Feature f : features) s.add(f);
  return s;
}

std::vector<Feature> FeatureSet::list() const {
  std::vector<Feature> out;
  for (int i = 0; i < static_cast<int>(Feature::kCount); ++i) {
    if (has(static_cast<Feature>(i))) out.push_back(static_cast<Feature>(i));
  }
  return out;
}

std::string_view feature_name(Feature f) { return kFeatures[static_cast<size_t>(f)].name; }

Machine feature_machine(Feature f) { return kFeatures[static_cast<size_t>(f)].machine; }

std::optional<Feature> feature_from_name(std::string_view name) {
  for (const FeatureInfo& info : kFeatures) {
    if (info.name == name) return info.feature;
  }
  for (const Alias& a : kAliases) {
    if (a.alias == name) return a.feature;
  }
  return std::nullopt;
}

FeatureSet aarch64_implied(Feature f) {
  switch (f) {
    case Feature::kFp16:
    case Feature::kDotprod:
    case Feature::kI8mm:
    case Feature::kBf16:
      return FeatureSet::of({Feature::kNeon});
    case Feature::kSve:
      return FeatureSet::of({Feature::kNeon, Feature::kFp16});
    case Feature::kSve2:
      return FeatureSet::of({Feature::kNeon, Feature::kFp16, Feature::kSve});
    default:
      return {};
  }
}

FeatureSet psabi_level(int level) {
  FeatureSet s;
  if (level < 2 || level > 4) return s;
  s.add(FeatureSet::of({Feature::kSse3, Feature::kSsse3, Feature::kSse41, Feature::kSse42,
                        Feature::kPopcnt, Feature::kCx16, Feature::kSahf}));
  if (level >= 3) {
    s.add(FeatureSet::of({Feature::kAvx, Feature::kAvx2, Feature::kBmi1, Feature::kBmi2,
                          Feature::kF16c, Feature::kFma, Feature::kLzcnt, Feature::kMovbe,
                          Feature::kXsave}));
  }
  if (level >= 4) {
    s.add(FeatureSet::of({Feature::kAvx512f, Feature::kAvx512bw, Feature::kAvx512cd,
                          Feature::kAvx512dq, Feature::kAvx512vl}));
  }
  return s;
}

std::string Architecture::to_string() const {
  std::string out(machine_name(machine));
  for (Feature f : features.list()) {
    out += '-';
    out += feature_name(f);
  }
  for (const std::string& u : unknown) {
    out += '-';
    out += u;
  }
  return out;
}

Result<Architecture> parse_architecture(std::string_view text) {
  const std::string quoted = "architecture '" + std::string(text) + "'";
  if (text.empty())
    return invalid_argument("architecture '': empty, expected <machine>(-<feature>)*");
  std::vector<std::string_view> tokens;
  size_t start = 0;
  while (true) {
    const size_t dash = text.find('-', start);
    tokens.push_back(text.substr(start, dash == std::string_view::npos ? dash : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!valid_token(tokens[i])) {
      return invalid_argument(quoted + ": token " + std::to_string(i) + " '" +
                              std::string(tokens[i]) + "' is empty or not lower-case [a-z0-9_.]");
    }
  }
  const std::optional<Machine> machine = machine_from_name(tokens[0]);
  if (!machine) {
    return invalid_argument(quoted + ": unknown machine '" + std::string(tokens[0]) +
                            "', expected x86_64 or aarch64");
  }
  Architecture arch;
  arch.machine = *machine;
  size_t i = 1;
  while (i < tokens.size()) {
    // Longest known name over up to three dash-joined tokens ("amx-int8").
    std::optional<Feature> found;
    size_t used = 1;
    for (size_t span = std::min<size_t>(3, tokens.size() - i); span >= 1 && !found; --span) {
      const size_t begin = static_cast<size_t>(tokens[i].data() - text.data());
      const size_t end = static_cast<size_t>(tokens[i + span - 1].data() - text.data()) +
                         tokens[i + span - 1].size();
      found = feature_from_name(text.substr(begin, end - begin));
      if (found) used = span;
    }
    const std::string_view tok = tokens[i];
    if (found) {
      if (feature_machine(*found) != arch.machine) {
        return invalid_argument(quoted + ": feature '" + std::string(feature_name(*found)) +
                                "' belongs to " +
                                std::string(machine_name(feature_machine(*found))) + ", not " +
                                std::string(machine_name(arch.machine)));
      }
      arch.features.add(*found);
      arch.features.add(aarch64_implied(*found));
    } else if (arch.machine == Machine::kX86_64 && (tok == "v2" || tok == "v3" || tok == "v4")) {
      arch.features.add(psabi_level(tok[1] - '0'));
    } else {
      arch.unknown.emplace_back(tok);
    }
    i += used;
  }
  return arch;
}

FeatureSet feature_set(const CpuFeatures& c) {
  FeatureSet s;
  const std::pair<bool, Feature> flags[] = {
      {c.sse3, Feature::kSse3},
      {c.ssse3, Feature::kSsse3},
      {c.sse41, Feature::kSse41},
      {c.sse42, Feature::kSse42},
      {c.popcnt, Feature::kPopcnt},
      {c.cx16, Feature::kCx16},
      {c.sahf, Feature::kSahf},
      {c.avx, Feature::kAvx},
      {c.avx2, Feature::kAvx2},
      {c.fma, Feature::kFma},
      {c.f16c, Feature::kF16c},
      {c.bmi1, Feature::kBmi1},
      {c.bmi2, Feature::kBmi2},
      {c.lzcnt, Feature::kLzcnt},
      {c.movbe, Feature::kMovbe},
      {c.xsave, Feature::kXsave},
      {c.avx512f, Feature::kAvx512f},
      {c.avx512bw, Feature::kAvx512bw},
      {c.avx512cd, Feature::kAvx512cd},
      {c.avx512dq, Feature::kAvx512dq},
      {c.avx512vl, Feature::kAvx512vl},
      {c.avx512vnni, Feature::kAvx512vnni},
      {c.avx512bf16, Feature::kAvx512bf16},
      {c.avx512fp16, Feature::kAvx512fp16},
      {c.avx512vbmi, Feature::kAvx512vbmi},
      {c.avx512ifma, Feature::kAvx512ifma},
      {c.avxvnni, Feature::kAvxvnni},
      {c.amx_tile, Feature::kAmxTile},
      {c.amx_int8, Feature::kAmxInt8},
      {c.amx_bf16, Feature::kAmxBf16},
      {c.neon, Feature::kNeon},
      {c.fp16, Feature::kFp16},
      {c.dotprod, Feature::kDotprod},
      {c.i8mm, Feature::kI8mm},
      {c.bf16, Feature::kBf16},
      {c.sve, Feature::kSve},
      {c.sve2, Feature::kSve2},
  };
  for (const auto& [on, f] : flags) {
    if (on) s.add(f);
  }
  return s;
}

}  // namespace onnx_prepack::device
