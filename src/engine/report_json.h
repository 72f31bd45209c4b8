// The JSON documents of the CLI's reports that other frontends (the Python
// module) hand out too: built once here so their keys cannot drift
// (docs/cli.md lists the keys; they are a contract).
#pragma once

#include "base/json.h"
#include "onnx_prepack/engine.hpp"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"

namespace onnx_prepack::engine {

// `compile --json`: entries, payload_bytes, seconds, targets.
base::Json compile_json(const CompileSummary& summary);
// One entry of `run --json`'s "weights".
base::Json weight_json(const runtime::WeightDecision& d);
// `run --json`'s "totals" (bytes_populated: the hits' pages populated).
base::Json totals_json(const runtime::PreparedTotals& t, uint64_t bytes_populated);
// `run --json`'s "plan".
base::Json plan_json(const runtime::PlanStats& ps);

}  // namespace onnx_prepack::engine
