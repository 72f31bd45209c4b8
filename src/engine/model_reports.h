// The JSON documents of `check --json`, `digest --json` (one entry) and
// `inspect --json` (docs/cli.md), built here once for the CLI and the Python
// module (their keys are a contract).
#pragma once

#include "base/json.h"
#include "check/check.h"
#include "digest/digest.h"
#include "format/model.h"

namespace onnx_prepack::engine {

base::Json check_json(const check::CheckReport& report);
base::Json digest_json(const onnx::TensorProto& t, const digest::TensorDigest& d,
                       digest::Algorithm algorithm);
// `inspect` lists this many of the largest initializers.
inline constexpr size_t kLargestShown = 10;
base::Json inspect_json(const format::Model& model);

}  // namespace onnx_prepack::engine
