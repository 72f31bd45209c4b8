#include "cli/engine_flags.h"

#include <optional>
#include <string>

#include "onnx_prepack/defaults.hpp"
#include "onnx_prepack/options.hpp"

namespace onnx_prepack::cli {

Result<EngineOptions> engine_options(const Args& args) {
  auto threads = args.get_int("threads", kDefaultThreads, 0, kMaxThreads);
  auto cache_max =
      args.get_int("cache-max-mib", int64_t(kDefaultCacheMaxBytes >> 20), 0, 1ll << 30);
  for (const auto* r : {&threads, &cache_max}) {
    if (!r->ok()) return r->status();
  }
  EngineOptions o;
  const std::string verify(args.get("verify").value_or(std::string(verify_policy_name(o.verify))));
  const std::string weights(args.get("weights").value_or(std::string(weight_mode_name(o.weights))));
  std::optional<VerifyPolicy> policy = verify_policy_from_name(verify);
  if (!policy) return invalid_argument("--verify must be full, memo or off, got '" + verify + "'");
  std::optional<WeightMode> mode = weight_mode_from_name(weights);
  if (!mode) return invalid_argument("--weights must be packed or plain, got '" + weights + "'");
  const std::string qdq(args.get("qdq").value_or(std::string(qdq_mode_name(o.qdq))));
  std::optional<QdqMode> qdq_mode = qdq_mode_from_name(qdq);
  if (!qdq_mode) return invalid_argument("--qdq must be exact or integer, got '" + qdq + "'");
  o.verify = *policy;
  o.weights = *mode;
  o.qdq = *qdq_mode;
  o.cache = cache_location_from_arg(args.get("cache").value_or(std::string(kCacheOffName)));
  o.cache.max_bytes = uint64_t(*cache_max) << 20;
  o.memo_dir = args.get("memo-dir").value_or("");
  o.threads = uint32_t(*threads);
  const std::string f16(args.get("float16-intermediates").value_or("float16"));
  if (f16 != "float16" && f16 != "float")
    return invalid_argument("--float16-intermediates must be float16 or float, got '" + f16 + "'");
  o.float16_float_chains = f16 == "float";
  return o;
}

}  // namespace onnx_prepack::cli
