#include "engine/engine_options.h"

#include "resolve/resolver.h"

namespace onnx_prepack::engine {

Status validate(const EngineOptions& o) {
  if (!resolve::verify_policy_from_name(o.verify)) {
    return invalid_argument("verify must be full, memo or off, got '" + o.verify + "'");
  }
  if (o.weights != "packed" && o.weights != "plain") {
    return invalid_argument("weights must be packed or plain, got '" + o.weights + "'");
  }
  if (o.threads > kMaxThreads) {
    return invalid_argument("threads " + std::to_string(o.threads) + " is above the limit of " +
                            std::to_string(kMaxThreads));
  }
  return ok_status();
}

base::ThreadPool* pool_for(uint32_t threads, std::unique_ptr<base::ThreadPool>& own) {
  if (threads == 0) return &base::ThreadPool::shared();
  own = std::make_unique<base::ThreadPool>(threads);
  return own.get();
}

Result<std::unique_ptr<resolve::CacheStore>> open_cache_store(const EngineOptions& o) {
  if (o.cache_dir.empty() || o.cache_dir == "off") {
    return std::unique_ptr<resolve::CacheStore>();
  }
  return resolve::CacheStore::open(
      o.cache_dir,
      o.cache_read_only ? resolve::CacheMode::kReadOnly : resolve::CacheMode::kReadWrite,
      o.cache_max_bytes);
}

}  // namespace onnx_prepack::engine
