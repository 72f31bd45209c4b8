#include "engine/engine_options.h"

#include "resolve/resolver.h"

namespace onnx_prepack::engine {

Status validate(const EngineOptions& o) {
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
  if (!o.cache.enabled()) return std::unique_ptr<resolve::CacheStore>();
  return resolve::CacheStore::open(
      o.cache.dir,
      o.cache.read_only ? resolve::CacheMode::kReadOnly : resolve::CacheMode::kReadWrite,
      o.cache.max_bytes);
}

}  // namespace onnx_prepack::engine
