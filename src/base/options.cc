// Names of the typed engine options (include/onnx_prepack/options.hpp). Base layer.
#include "onnx_prepack/options.hpp"

namespace onnx_prepack {

std::string_view verify_policy_name(VerifyPolicy p) {
  switch (p) {
    case VerifyPolicy::kFull:
      return "full";
    case VerifyPolicy::kMemo:
      return "memo";
    case VerifyPolicy::kOff:
      return "off";
  }
  return "full";
}

std::optional<VerifyPolicy> verify_policy_from_name(std::string_view name) {
  if (name == "full") return VerifyPolicy::kFull;
  if (name == "memo") return VerifyPolicy::kMemo;
  if (name == "off") return VerifyPolicy::kOff;
  return std::nullopt;
}

std::string_view weight_mode_name(WeightMode m) {
  return m == WeightMode::kPlain ? "plain" : "packed";
}

std::optional<WeightMode> weight_mode_from_name(std::string_view name) {
  if (name == "packed") return WeightMode::kPacked;
  if (name == "plain") return WeightMode::kPlain;
  return std::nullopt;
}

std::string_view qdq_mode_name(QdqMode m) { return m == QdqMode::kInteger ? "integer" : "exact"; }

std::optional<QdqMode> qdq_mode_from_name(std::string_view name) {
  if (name == "exact") return QdqMode::kExact;
  if (name == "integer") return QdqMode::kInteger;
  return std::nullopt;
}

CacheLocation cache_location_from_arg(std::string_view arg) {
  CacheLocation c;
  if (arg != kCacheOffName) c.dir = std::string(arg);
  return c;
}

std::string_view cache_location_name(const CacheLocation& c) {
  return c.enabled() ? std::string_view(c.dir) : kCacheOffName;
}

}  // namespace onnx_prepack
