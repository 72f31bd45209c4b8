// explain_model: the resolver's decision for every eligible weight of a model
// on a host (detected or pretended), without running it (`onnx-prepack
// explain`, the Python module's explain()). format.md §4.3, 7.3.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "device/device_match.h"
#include "resolve/cache_store.h"
#include "resolve/resolver.h"

namespace onnx_prepack::engine {

struct ExplainOptions {
  VerifyPolicy verify = kDefaultVerifyPolicy;
  std::string arch;                     // "" = the detected host; else pretend this one
  CacheLocation cache;                  // opened read-only whatever it says (explain only reads)
  std::string memo_dir;                 // "" = MemoStore::default_dir()
  std::vector<std::string> fed_inputs;  // graph inputs that would be fed
};

struct ExplainedWeight {
  std::string name;      // source initializer
  std::string consumer;  // first node that reads it
  std::string layout;    // "kn"/"nk" (GEMM B), "conv group G", "conv_transpose group G",
                         // "n_kblocks_blob" (MatMulNBits)
  std::vector<resolve::AcceptableFormat> formats;  // what the kernel at `level` accepts
  resolve::Resolution resolution;
};

struct ExplainReport {
  // Held so the resolutions' pointers into the model and the store stay valid.
  std::shared_ptr<const format::Model> model;
  std::unique_ptr<resolve::CacheStore> store;
  device::HostDescription host;
  device::IsaLevel level = device::IsaLevel::kRef;  // kernel level the formats are chosen for
  resolve::VerifyPolicy verify = resolve::VerifyPolicy::kFull;
  std::string runtime_name, runtime_version;
  std::vector<ExplainedWeight> weights;
  std::vector<check::Diagnostic> diagnostics;  // entries the checker made the resolver ignore
  resolve::ResolverTotals totals;
  double seconds = 0;
};

Result<ExplainReport> explain_model(const std::string& path, const ExplainOptions& options);

// The `explain --json` document (docs/cli.md, "explain").
base::Json explain_json(const ExplainReport& report);

}  // namespace onnx_prepack::engine
