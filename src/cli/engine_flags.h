// The engine's flags (--cache, --verify, --threads, --weights, --qdq,
// --memo-dir, --cache-max-mib, --float16-intermediates) as the commands that
// open an Engine (run, complete) take them: one parser, so they cannot drift.
#pragma once

#include "cli/args.h"
#include "onnx_prepack/engine.hpp"

namespace onnx_prepack::cli {

Result<EngineOptions> engine_options(const Args& args);

}  // namespace onnx_prepack::cli
