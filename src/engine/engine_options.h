// Validation and application of EngineOptions, shared by Engine::open and the
// frontends that check flags before loading a model.
#pragma once

#include <memory>

#include "base/thread_pool.h"
#include "onnx_prepack/engine.hpp"
#include "resolve/cache_store.h"

namespace onnx_prepack::engine {

// invalid_argument naming the option and what it accepts.
Status validate(const EngineOptions& options);

// The pool for `threads` (0 = all cores): the process-wide pool when that is
// what is asked for, else one owned by `own`.
base::ThreadPool* pool_for(uint32_t threads, std::unique_ptr<base::ThreadPool>& own);

// The cache store the options name (null when none).
Result<std::unique_ptr<resolve::CacheStore>> open_cache_store(const EngineOptions& options);

}  // namespace onnx_prepack::engine
