// The engine: the one path from a model file to outputs that every frontend
// (the CLI's run/explain, the C API, the Python module, the tests) adapts.
// An Engine owns the model, the thread pool, the cache store, the resolver,
// the weight preparation and one runtime Session per load; it plans for the
// fed inputs (pinning fed values when planning needs them), runs, and reports
// per-weight decisions and phase timings. compile_model() is the compile
// pipeline of `onnx-prepack compile`.
//
//   auto engine = onnx_prepack::Engine::open("model.onnx", {.verify =
//   onnx_prepack::VerifyPolicy::kMemo}); auto outputs = (*engine)->run({{"x", x_tensor}});
//
// The runtime types named here (Tensor, HostTensor, GraphInput, ...) are
// declared in src/runtime/ (tensor.h, session.h, prepared_weights.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "onnx_prepack/defaults.hpp"
#include "onnx_prepack/options.hpp"
#include "onnx_prepack/status.h"

namespace onnx_prepack {

namespace format {
class Model;
}
namespace runtime {
struct Tensor;
class HostTensor;
struct GraphInput;
struct WeightDecision;
struct PreparedTotals;
struct PlanStats;
}  // namespace runtime

struct EngineOptions {
  VerifyPolicy verify = kDefaultVerifyPolicy;  // format.md §7.2
  CacheLocation cache;                         // write-back cache store; none by default
  std::string memo_dir;                     // memo records for kMemo; "" = MemoStore::default_dir()
  uint32_t threads = kDefaultThreads;       // one pool for hashing, packing, kernels; 0 = all cores
  WeightMode weights = kDefaultWeightMode;  // through the resolver, or initializers as they are
  QdqMode qdq = kDefaultQdqMode;  // weight-only QDQ units: float product, or integer kernels
  // FLOAT16 intermediates between nodes that compute in float stay float, as
  // in ONNX Runtime's CPU provider; false: each rounded to float16, as ONNX
  // defines (docs/decisions.md, "FLOAT16 intermediates").
  bool float16_float_chains = false;
};

// Milliseconds of the phases of the last plan (and of the runs after it).
struct EngineTimings {
  double parse = 0;      // read + protobuf parse (0 for a model handed over parsed)
  double resolve = 0;    // loading rules of the weight requests that hashed nothing
  double verify = 0;     // resolve time of the requests that hashed source bytes
  double map = 0;        // initializer views + populating the hits' page tables
  double pack = 0;       // packing the misses
  double store = 0;      // cache write-back
  double plan = 0;       // shapes, folding, kernel choice, arena
  double first_run = 0;  // the first run after the last plan
  double last_run = 0;
};

class Engine {
 public:
  // Reads the model at `path` (external data relative to its folder).
  static Result<std::unique_ptr<Engine>> open(const std::string& path, EngineOptions options = {});
  // Parses serialized ModelProto bytes; external data is resolved against `base_dir`.
  static Result<std::unique_ptr<Engine>> open_bytes(std::string_view bytes, std::string base_dir,
                                                    EngineOptions options = {});
  // Takes a model already parsed (shared with the caller).
  static Result<std::unique_ptr<Engine>> open_model(std::shared_ptr<const format::Model> model,
                                                    EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const format::Model& model() const;
  std::shared_ptr<const format::Model> shared_model() const;
  const EngineOptions& options() const;
  size_t threads() const;  // size of the pool (calling thread included)

  const std::vector<runtime::GraphInput>& inputs() const;
  const std::vector<std::string>& output_names() const;
  // The graph input named `name`, or null.
  const runtime::GraphInput* find_input(std::string_view name) const;

  // Plans for the fed inputs' types and shapes (their bytes are read only when
  // planning needs a fed value, e.g. a shape tensor fed as an input: the plan
  // then pins them and run() plans again for other values).
  Status plan(const std::map<std::string, runtime::Tensor>& inputs);
  // Runs, planning first when there is no plan for these inputs' types and
  // shapes. Safe to call from several threads: runs are serialized.
  // `run_options`: a deadline and a terminate flag (options.hpp); a run they
  // stop fails with kDeadlineExceeded / kCancelled and the engine stays usable.
  Result<std::vector<runtime::HostTensor>> run(const std::map<std::string, runtime::Tensor>& inputs,
                                               const RunOptions& run_options = {});

  // Runs with caller-owned buffers (docs/runtime.md, "Bound runs"): each fed
  // input is read where it lies and each output in `outputs` (planned type
  // and shape; the others are not produced for the caller) is written there,
  // without copies where the plan allows. An output given the buffer of an
  // input (a present KV cache bound to its past) is updated in place. Plans
  // first, as run() does, when the inputs' types and shapes or the set of
  // bound outputs changed since the last plan. Buffers must be aligned to
  // their element size and outlive the call.
  Status run_bound(const std::map<std::string, runtime::Tensor>& inputs,
                   const std::map<std::string, runtime::Tensor>& outputs,
                   const RunOptions& run_options = {});
  // The type and shape of each output (output_names() order) that a run of
  // these inputs produces, planning for them (with `bound_outputs` placed as
  // run_bound places them) when the current plan is another.
  struct OutputShape {
    int32_t dtype = 0;
    std::vector<int64_t> shape;
  };
  Result<std::vector<OutputShape>> plan_outputs(
      const std::map<std::string, runtime::Tensor>& inputs,
      const std::vector<std::string>& bound_outputs);

  // Per-weight decisions so far (a copy: safe while another thread runs).
  std::vector<runtime::WeightDecision> weights() const;
  runtime::PreparedTotals weight_totals() const;
  uint64_t bytes_populated() const;  // hits' pages populated by the plans
  runtime::PlanStats plan_stats() const;
  EngineTimings timings() const;
  // Why the cache store could not be opened ("" when it was, or none was asked
  // for); the engine then runs without it.
  const std::string& store_error() const;

 private:
  struct State;
  explicit Engine(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

// ---- compile ---------------------------------------------------------------

struct CompileOptions {
  std::vector<std::string> targets = {"host"};  // "host" or an architecture with a packed format
  std::string digest = "blake3";                // "blake3" or "sha256"
  bool lift_constants = true;          // Constant nodes with a tensor value become initializers
  uint32_t threads = kDefaultThreads;  // 0 = all cores
  bool memo = true;                    // record the output's digests for `verify memo`
  std::string memo_dir;                // "" = MemoStore::default_dir()
  // Initializers external in the source: false (the default) copies their
  // bytes into the output's data file, so the output stands alone; true keeps
  // referencing the source's data files when they lie in the output's folder.
  bool reference_source_data = false;
  // kInteger: weight-only QDQ units get the entry `run` with the same
  // option reads (one i8_gemm_b entry per W); kExact writes none for them.
  QdqMode qdq = kDefaultQdqMode;
  // Progress, phase by phase (docs/cli.md, "compile"): `what` is "hashing NAME"
  // before each eligible weight use (done/total over the uses), "packing NAME"
  // before each payload is packed (done/total over the payloads), then with
  // done == total "writing tensors", "syncing", "writing model" and "recording
  // memo", and once at the end what == "". May be empty.
  std::function<void(size_t done, size_t total, const std::string& what)> progress;
};

// A weight compile wrote no entry for, and why.
struct SkippedWeight {
  std::string name;    // the initializer
  std::string family;  // its pack family ("gemm_b", "conv_filter", ...)
  std::string layout;  // as explain prints it
  std::string reason;
};

struct CompileSummary {
  uint64_t entries = 0;  // compiled_tensors written
  uint64_t weights = 0;  // eligible weights
  uint64_t payload_bytes = 0;
  double seconds = 0;
  std::vector<std::string> targets;    // architectures, deduplicated, in order
  int lifted = 0;                      // constants lifted
  std::string output;                  // the model written
  std::string data_file;               // its external data file ("" if none)
  std::string memo_error;              // why the memo was not recorded ("" = recorded or off)
  std::vector<SkippedWeight> skipped;  // eligible weights without an entry
  int constant_nodes = 0;              // Constant nodes kept (--no-lift-constants)
};

// The compile pipeline of `onnx-prepack compile` (docs/cli.md): packs every
// eligible weight (docs/format.md §4.7) for each target and writes `dst` with devices,
// struct_types and compiled_tensors. Errors: invalid_argument for an unknown
// target or digest, the load's error for an unreadable `src`, io_error when
// writing fails.
Result<CompileSummary> compile_model(const std::string& src, const std::string& dst,
                                     const CompileOptions& options = {});

}  // namespace onnx_prepack
