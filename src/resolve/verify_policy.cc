// Names of the verification policies (SPEC 7.2). Resolve layer.
#include "resolve/resolver.h"

namespace onnx_prepack::resolve {

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

}  // namespace onnx_prepack::resolve
