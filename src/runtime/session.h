// A loaded model ready to run: the graph checked against the operator
// registry, then, for given input shapes, a plan: static shapes for every
// value, values computable from shapes and constants folded, one kernel per
// remaining node, and one arena whose slots are reused across value lifetimes.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "format/model.h"
#include "runtime/kernel.h"
#include "runtime/tensor.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {

struct SessionOptions {
  base::ThreadPool* pool = nullptr;     // null: base::ThreadPool::shared()
  WeightPreparer* weights = nullptr;    // null: constant B used in place
  int64_t fold_limit_bytes = 16 << 20;  // largest value folded at plan time
};

struct GraphInput {
  std::string name;
  int32_t dtype = kUndefined;
  Shape dims;              // -1 for a symbolic or unknown dimension
  bool has_shape = false;  // false: rank unknown, any shape is accepted
  std::vector<std::string> dim_params;
  bool has_initializer = false;  // an initializer provides a default
};

struct PlanStats {
  size_t nodes = 0;          // nodes in the graph
  size_t kernels = 0;        // kernels run per inference
  size_t folded = 0;         // nodes computed at plan time
  size_t aliases = 0;        // outputs that share their input's storage
  uint64_t arena_bytes = 0;  // one buffer for all intermediate values
  uint64_t value_bytes = 0;  // what the values would need without reuse
  double init_ms = 0;        // mapping initializers (borrowed bytes, typed fields converted)
};

inline constexpr const char* kNeedsValue = "must be known before running";

class Session {
 public:
  // Checks the graph: opset, every operator supported (all unsupported ones are
  // named in one error), node order. `model` must outlive nothing: it is shared.
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const format::Model> model,
                                                 SessionOptions options);
  ~Session();

  const std::vector<GraphInput>& inputs() const { return inputs_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  int opset() const { return opset_; }

  // Builds the plan for the fed inputs (name -> dtype, shape). Inputs not fed
  // must have an initializer. A plan error whose message contains
  // kNeedsValue means a fed input's value is needed to plan (pin it via
  // Feed::value and plan again).
  struct Feed {
    int32_t dtype = kUndefined;
    Shape shape;
    // When set, the plan treats this input's value as known (it may fold
    // shape arithmetic over it); run() then requires these exact bytes.
    const Tensor* value = nullptr;
    // With `value`: a weight of the enclosing graph (a subgraph's outer-scope
    // initializer), offered to the weight preparer like an initializer.
    bool is_initializer = false;
  };
  Status plan(const std::map<std::string, Feed>& feeds);
  const PlanStats& stats() const { return stats_; }

  // Runs the plan. `inputs` holds one tensor per fed name, with the planned
  // type and shape. Outputs follow output_names().
  Result<std::vector<HostTensor>> run(const std::map<std::string, Tensor>& inputs);

  // A subgraph (If/Loop/Scan body) of `model` as a session of its own
  // (options.weights, when set, prepares its constant B weights). `inputs` are the subgraph's
  // formal inputs, then the outer-scope names it reads (runtime/subgraph.cc plans and runs it).
  static Result<std::unique_ptr<Session>> create_subgraph(
      std::shared_ptr<const format::Model> model, const onnx::GraphProto& graph, int opset,
      std::vector<GraphInput> inputs, SessionOptions options);
  // After plan(): each output's type and shape, and its value when known at plan time.
  struct PlannedOutput {
    int32_t dtype = kUndefined;
    Shape shape;
    std::optional<HostTensor> value;
  };
  std::vector<PlannedOutput> planned_outputs() const;
  // Runs the plan with one pointer per inputs() entry (pinned and unused ones
  // are not read) and copies output i to outputs[i] (skipped when null).
  // Buffers must hold the planned types and shapes; outputs may alias inputs.
  Status run_bound(std::span<const void* const> inputs, std::span<void* const> outputs);

  struct Value;
  struct Step;

 private:
  Session() = default;
  // Outputs, outer-scope reads of subgraphs (implicit inputs), node order.
  Status index_graph();
  // A node's declared inputs, then the outer-scope names its subgraphs read.
  std::vector<std::string> node_inputs(int node) const;

  std::shared_ptr<const format::Model> model_;
  const onnx::GraphProto* graph_ = nullptr;                // the model's graph or a subgraph of it
  std::vector<std::vector<std::string>> implicit_inputs_;  // per node
  std::unique_ptr<SubgraphEnv> env_;                       // what subgraph builders need
  SessionOptions options_;
  int opset_ = 0;
  std::vector<int> order_;  // node indices in topological order
  std::vector<GraphInput> inputs_;
  std::vector<std::string> output_names_;
  std::vector<Value> values_;
  std::map<std::string, int, std::less<>> value_index_;
  std::vector<Step> steps_;
  std::vector<int> output_values_;
  std::map<std::string, int> fed_values_;
  std::map<std::string, Feed> planned_feeds_;
  void* arena_ = nullptr;
  Workspace workspace_;  // kernels' scratch (on-the-fly packed B), reused across runs
  PlanStats stats_;
};

}  // namespace onnx_prepack::runtime
