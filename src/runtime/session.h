// A loaded model ready to run: the graph checked against the operator
// registry, then, for given input shapes, a plan: static shapes for every
// value, values computable from shapes and constants folded, one kernel per
// remaining node, and one arena whose slots are reused across value lifetimes.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "format/model.h"
#include "onnx_prepack/options.hpp"
#include "runtime/kernel.h"
#include "runtime/memory_account.h"
#include "runtime/run_limits.h"
#include "runtime/tensor.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {

class ResolvedWeights;

struct SessionOptions {
  base::ThreadPool* pool = nullptr;     // null: base::ThreadPool::shared()
  WeightPreparer* weights = nullptr;    // null: constant B used in place
  int64_t fold_limit_bytes = 16 << 20;  // largest value folded at plan time
  // Run chains of float elementwise kernels as one pass (pointwise_fusion.h),
  // and MatMulInteger's Cast / Mul / Add / Relu in its epilogue (kernel.h);
  // bitwise equal either way. ONNX_PREPACK_FUSION=0 turns both off.
  bool fuse_pointwise = true;
  // Run the fused elementwise chain that reads a Conv's output (a residual
  // Add, the activation) on the Conv's output tiles while they are in cache
  // (session_fusion.cc, fuse_conv_epilogue); bitwise equal either way. Needs
  // fuse_pointwise; ONNX_PREPACK_CONV_EPILOGUE=0 turns it off.
  bool fuse_conv_epilogue = true;
  // Weight-only QDQ units (qdq_fusion.h): the graph's float product, the
  // dequantized weight packed once (exact), or DynamicQuantizeMatMul on the
  // integer kernels (integer).
  QdqMode qdq = kDefaultQdqMode;
  // Cancel the Transpose pairs of NHWC exports at plan time (transpose_folding.h);
  // bitwise equal either way. ONNX_PREPACK_TRANSPOSE_FOLDING=0 turns it off.
  bool fold_transposes = true;
  // Run the decomposed LayerNorm / RMSNorm / Gelu / FastGelu subgraphs of
  // standard-op exports with the fused kernels (norm_gelu_fusion.h); equal to
  // the unfused plan within rounding (docs/runtime.md, "Pattern fusion").
  // ONNX_PREPACK_PATTERN_FUSION=0 turns it off.
  bool fuse_patterns = true;
  // Hold FLOAT16 values in float between nodes that compute in float (the
  // half adapter's, and native ones that compute values, like Resize),
  // rounding only where a data mover, a LayerNormalization (float16 kernels
  // in ONNX Runtime) or a graph output takes them, as ONNX
  // Runtime's CPU provider does (session_float16_chains.cc); off: every
  // FLOAT16 output is rounded, as ONNX defines (docs/decisions.md).
  bool float16_float_chains = false;
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
  size_t fused = 0;          // nodes run inside fused kernels (elementwise, integer matmul)
  size_t qdq_exact = 0;      // weight-only QDQ units whose dequantized weight was packed once
  size_t qdq_integer = 0;    // weight-only QDQ units run as DynamicQuantizeMatMul
  uint64_t arena_bytes = 0;  // one buffer for all intermediate values
  uint64_t value_bytes = 0;  // what the values would need without reuse
  double init_ms = 0;        // mapping initializers (borrowed bytes, typed fields converted)

  // Transpose kernels run per inference, and the Transposes the plan removed
  // (transpose_folding.h).
  size_t transposes = 0;
  size_t transposes_folded = 0;
  // Decomposed LayerNorm / RMSNorm / Gelu / FastGelu subgraphs run as one
  // fused kernel each (norm_gelu_fusion.h).
  size_t patterns_fused = 0;
  // Standard-op attention subgraphs (MatMul, scale, mask, Softmax, MatMul) run
  // as one fused attention kernel each (attention_fusion.h).
  size_t attention_fused = 0;
  // Convs that run a fused elementwise chain (residual Add, activation) as
  // their epilogue (session_fusion.cc, fuse_conv_epilogue).
  size_t conv_epilogues = 0;
  // Fed inputs and outputs read or written in the caller's buffers
  // (set_bound_values): no arena slot, no copy.
  size_t bound_values = 0;
};

// What plan() found: a plan, or that a kernel needs the value of a fed input
// (a shape or axes tensor fed as an input) that the feeds left unknown.
enum class PlanOutcome {
  kPlanned,
  kNeedsInputValues,  // pin every fed input (Feed::value) and plan again
};

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
  // must have an initializer. kNeedsInputValues: a kernel needs a value that
  // depends on an unpinned fed input; there is no plan until plan() succeeds.
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
  // `limits` (may be null) bound the work planning does on the run's behalf
  // (folding, Loops run at plan time).
  Result<PlanOutcome> plan(const std::map<std::string, Feed>& feeds,
                           const RunLimits* limits = nullptr);
  const PlanStats& stats() const { return stats_; }

  // Runs the plan. `inputs` holds one tensor per fed name, with the planned
  // type and shape. Outputs follow output_names(). With `limits`, a run past
  // its deadline or terminated stops before its next node (or sooner, inside
  // a body or a long kernel) with kDeadlineExceeded / kCancelled; nothing of
  // a stopped run is kept, so the next run starts afresh.
  Result<std::vector<HostTensor>> run(const std::map<std::string, Tensor>& inputs,
                                      const RunLimits* limits = nullptr);

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
  Status run_bound(std::span<const void* const> inputs, std::span<void* const> outputs,
                   const RunLimits* limits = nullptr);
  // Fed inputs and graph outputs whose storage the caller provides at each
  // run_bound: they get no arena slot and are neither copied in nor out, so a
  // generation loop that binds one buffer as both a past and its present KV
  // cache has it updated in place. Takes effect at the next plan(). BOOL
  // inputs (canonicalised on the way in) and outputs the plan does not write
  // itself (an alias of another value, a fed input, a constant) stay copied.
  // Bound buffers must be aligned to their element size; run() refuses a plan
  // with bound values.
  void set_bound_values(std::set<std::string> names);
  // After plan(): whether `name` is read or written in the caller's buffer.
  bool is_bound_in_place(std::string_view name) const;

  struct Value;
  struct Step;
  struct QdqUnitPlan;

 private:
  Session() = default;
  // Phases of create(): graph inputs and outputs, outer-scope reads of
  // subgraphs (implicit inputs), then node order.
  Status read_signature(const std::set<std::string>& init_names);
  Status order_nodes(const std::set<std::string>& init_names);
  // A node's declared inputs, then the outer-scope names its subgraphs read.
  std::vector<std::string> node_inputs(int node) const;
  // Phases of plan(), in order.
  void reset_plan();
  int add_value(const std::string& name);
  Status bind_feeds(const std::map<std::string, Feed>& feeds);
  Status bind_initializers();
  std::vector<bool> live_nodes() const;
  // bind_feeds, bind_initializers and build_node over the live nodes.
  Result<PlanOutcome> build_nodes(const std::map<std::string, Feed>& feeds,
                                  const RunLimits* limits);
  // After a plan: the FLOAT16 values options_.float16_float_chains holds as float.
  std::set<std::string> float16_chain_values() const;
  // One node: a step, a folded constant, or values described without a kernel.
  // Sets `needs_value` when its kernel needs an unknown value.
  Status build_node(int node_index, bool& needs_value);
  // build_node's body for `node` standing at `node_index` (its own node, or
  // the node a QDQ unit becomes) with input names `inputs`. `weights`
  // (null: options_.weights) prepares the constant B operands; input
  // `packed_input`, when constant, is offered to it as a weight. `builder`
  // (null: the registry's for the node's operator) builds the kernel instead:
  // the node a QDQ unit becomes runs semantics of the session's own choosing
  // (A quantized per row) under the operator's checked signature.
  struct NodeBuild {
    WeightPreparer* weights = nullptr;
    int packed_input = -1;
    const char* label = nullptr;  // the step's profile name
    OpBuilder builder = nullptr;
  };
  Status build_node_as(int node_index, const onnx::NodeProto& node,
                       const std::vector<std::string>& inputs, const NodeBuild& how,
                       bool& needs_value);
  // Weight-only QDQ units (session_qdq.cc): which nodes they take, found once
  // the initializers are bound; then a unit's nodes are built its way.
  void find_qdq_units();
  Status build_qdq_node(int node_index, const QdqUnitPlan& unit, bool& needs_value);
  // `where` names the node ("node 'n' (Op)") in its allocation errors.
  Status fold(Kernel& kernel, const std::vector<int>& in_ids, const std::vector<int>& out_ids,
              const std::string& where);
  // Replaces MatMulInteger -> Cast -> Mul [-> Add] [-> Relu] with one kernel
  // (IntegerMatMulEpilogue) and MatMul -> Add(bias) on a prepared B with one that
  // adds the bias as it stores (Kernel::with_column_bias); session_fusion.cc.
  void fuse_matmul_epilogues();
  // Sets each value's def and last to the step that writes it, after a pass
  // rebuilt steps_ (session_fusion.cc).
  void renumber_step_outputs();
  // The end of every fusion pass: `placed` (position, fused step) replaces the
  // steps marked in `drop` (session_fusion.cc).
  void splice_fused_steps(const std::vector<bool>& drop, std::vector<std::pair<int, Step>>& placed);
  // Replaces runs of elementwise steps with fused kernels (session_fusion.cc).
  void fuse_pointwise();
  // Runs the FusedPointwise step reading a Conv's output as that Conv's
  // epilogue (session_fusion.cc).
  void fuse_conv_epilogue();
  bool conv_epilogue_enabled() const;
  // Cancels Transpose pairs, pushing Transposes through elementwise steps
  // (transpose_folding.cc); counts the Transposes left in stats_.
  void fold_transposes();
  // Replaces decomposed LayerNorm / RMSNorm / Gelu / FastGelu subgraphs with
  // their fused kernels (norm_gelu_fusion.cc).
  void fuse_patterns();
  // Replaces the standard-op attention subgraph (MatMul Q K^T, scale, mask,
  // Softmax, MatMul V) with one fused attention step (attention_fusion.cc).
  void fuse_attention();
  void compute_lifetimes();
  Status place_arena();
  // Runs every step in order, checking `limits` before each.
  Status run_steps(const RunLimits* limits);
  // run_bound's pointers of the bound values into the steps that use them.
  Status point_bound_values(std::span<const void* const> inputs, std::span<void* const> outputs);
  std::string step_where(const Step& step) const;

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
  std::set<std::string> bound_names_;  // set_bound_values
  // Where this plan's bound values are used: a step's input or output slot,
  // or a value aliasing one (place_arena), repointed by every run_bound.
  struct BoundUse {
    int root = -1;  // the bound value
    int step = -1;  // -1: `slot` is a value id whose ptr follows root's
    bool out = false;
    int slot = -1;
  };
  std::vector<BoundUse> bound_uses_;
  bool has_bound_ = false;                  // this plan has bound values
  const RunLimits* plan_limits_ = nullptr;  // during plan() only
  std::vector<bool> through_float_;         // per node: built through the half adapter
  std::set<std::string> float16_chain_;     // FLOAT16 values this plan holds as float
  void* arena_ = nullptr;
  MemoryReservation arena_reserved_;  // the arena's bytes against the memory budget
  // ONNX_PREPACK_PROFILE=1: wall ms and calls per op type, printed to stderr
  // when the session ends (a developer's view of where a run's time goes).
  struct OpProfile {
    double ms = 0;
    int64_t calls = 0;
  };
  std::unique_ptr<std::map<std::string, OpProfile>> profile_;
  std::map<int, std::shared_ptr<const QdqUnitPlan>> qdq_nodes_;  // by node index, this plan
  std::unique_ptr<ResolvedWeights> qdq_packer_;  // packs exact units' dequantized weights
  Workspace workspace_;  // kernels' scratch (on-the-fly packed B), reused across runs
  PlanStats stats_;
};

}  // namespace onnx_prepack::runtime
