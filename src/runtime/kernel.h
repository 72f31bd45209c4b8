// The interface between the planner and the operators. At plan time an op's
// builder sees its inputs' types, shapes and (when known) values, sets its
// outputs' types and shapes, and returns a Kernel bound to those shapes. At run
// time the kernel only gets the data pointers.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"
#include "runtime/checked_math.h"  // every builder computes sizes with it
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

class RunLimits;  // runtime/run_limits.h

// Scratch memory owned by a session and reused across kernels and runs: one
// growable 64-byte aligned buffer per pool worker (worker 0 is the thread that
// runs the session). A kernel may use slot `w` only from the pool task running
// as worker `w`, or slot 0 outside a parallel_for. Not for concurrent runs.
class Workspace {
 public:
  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace();
  // Makes slots [0, workers) exist; call before handing slots to pool tasks.
  void reserve_workers(size_t workers);
  size_t workers() const { return slots_.size(); }
  // At least `bytes` for `worker` (< workers()); contents are not kept when it grows.
  // nullptr only when the allocation fails.
  void* get(size_t worker, size_t bytes);
  size_t bytes_held() const;

 private:
  struct Slot {
    void* data = nullptr;
    size_t size = 0;
  };
  std::vector<Slot> slots_;
};

struct KernelIO {
  std::span<void* const> in;  // nullptr for an absent optional input
  std::span<void* const> out;
  base::ThreadPool* pool = nullptr;
  Workspace* workspace = nullptr;  // may be null: kernels then allocate their own scratch
  // Where a kernel reports a failure that planning could not rule out (a
  // subgraph that fails, an If branch that could not be planned for these
  // shapes); the session stops the run and returns it. Null: not reported.
  Status* status = nullptr;
  // The run's deadline and terminate flag (run_limits.h); null: none. Kernels
  // that run a subgraph pass it on; the long ones poll it (work_budget.h).
  const RunLimits* limits = nullptr;
};

// Records `s` as the run's failure (the first one wins).
inline void report_failure(const KernelIO& io, Status s) {
  if (!s.ok() && io.status != nullptr && io.status->ok()) *io.status = std::move(s);
}

// What a float elementwise kernel computes, declared by its builder so the
// session can run a chain of such kernels tile by tile in one pass
// (runtime/pointwise_fusion.h). The fused form calls the same vector functions
// on the same operands in the same order, so it is bitwise equal to the chain.
struct PointwiseDesc {
  enum Kind : uint8_t { kBinary, kActivation };
  Kind kind = kBinary;
  int op = 0;            // kernels::vec::BinaryOp (kBinary) or kernels::vec::ActOp (kActivation)
  float p0 = 0, p1 = 0;  // the activation's parameters
  // Clip since opset 11: p0 / p1 are inputs 1 / 2 (absent: -inf / +inf); the
  // fusion needs them known at plan time.
  bool bounds_from_inputs = false;
};

// The float epilogue an integer matmul kernel may take over: the session
// fuses MatMulInteger -> Cast(float) -> Mul(scale) [-> Add(bias)] [-> Relu]
// (session_fusion.cc) when the intermediate values have no other reader. The
// fused kernel reads the MatMulInteger's four inputs (absent: null), then the
// scale (io.in[4], scale_n floats) and the bias (io.in[5], bias_n floats), and
// writes the float result to io.out[0]: float(c) * scale, + bias (in the Add's
// operand order), Relu, one IEEE operation each, so bitwise the chain's.
struct IntegerMatMulEpilogue {
  int64_t scale_n = 1;      // 1 or N (one per output column)
  int64_t bias_n = 0;       // 0 (no Add), 1 or N
  bool bias_first = false;  // Add(bias, y)
  bool relu = false;
};

struct FusedPointwise;  // runtime/pointwise_fusion.h
struct OutputEpilogue;

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(const KernelIO& io) const = 0;
  // Non-null for a float elementwise kernel that may join a fused chain.
  virtual const PointwiseDesc* pointwise() const { return nullptr; }
  // This kernel's int32 product followed by `e` as one kernel, or null when it
  // cannot take the epilogue (IntegerMatMulEpilogue).
  virtual std::unique_ptr<Kernel> with_float_epilogue(const IntegerMatMulEpilogue& e) const {
    (void)e;
    return nullptr;
  }
  // This float product (MatMul) with a bias added to each output element as it is
  // stored: io.in[2] holds bias_n floats, 1 (one value) or the output's columns. One
  // IEEE addition per element, so bitwise the product followed by Add. Null when the
  // kernel cannot take it (session_fusion.cc, fuse_matmul_epilogues).
  virtual std::unique_ptr<Kernel> with_column_bias(int64_t bias_n) const {
    (void)bias_n;
    return nullptr;
  }
  // The program of a fused elementwise chain (FusedPointwise kernels), else null.
  virtual const FusedPointwise* fused_pointwise() const { return nullptr; }
  // This kernel with `e` run on each finished run of its output while it is
  // in cache (a Conv's residual Add / activation chain), or null when it
  // cannot take one (pointwise_fusion.h, OutputEpilogue).
  virtual std::unique_ptr<Kernel> with_output_epilogue(const OutputEpilogue& e) const {
    (void)e;
    return nullptr;
  }
  // Bytes of workspace slot 0 the kernel takes at run time when they depend on
  // the model's shapes (a padded input copy): the session reserves the largest
  // with the arena, so the memory budget covers them (docs/runtime.md).
  virtual uint64_t scratch_bytes() const { return 0; }
  // The kernel checks input values (indices) and fails the run on a bad one.
  // Such a kernel runs even when every output is empty: an index into an
  // empty dimension is out of range whatever the output's shape (ONNX).
  virtual bool checks_input_values() const { return false; }
};

// A kernel from a lambda, for the many ops whose run is a few lines.
class FnKernel final : public Kernel {
 public:
  explicit FnKernel(std::function<void(const KernelIO&)> fn) : fn_(std::move(fn)) {}
  FnKernel(std::function<void(const KernelIO&)> fn, PointwiseDesc desc)
      : fn_(std::move(fn)), desc_(desc) {}
  // A kernel that checks its input values (Kernel::checks_input_values).
  struct ChecksInputValues {};
  FnKernel(std::function<void(const KernelIO&)> fn, ChecksInputValues)
      : fn_(std::move(fn)), checks_inputs_(true) {}
  void run(const KernelIO& io) const override { fn_(io); }
  const PointwiseDesc* pointwise() const override { return desc_ ? &*desc_ : nullptr; }
  bool checks_input_values() const override { return checks_inputs_; }

 private:
  std::function<void(const KernelIO&)> fn_;
  std::optional<PointwiseDesc> desc_;
  bool checks_inputs_ = false;
};

// What a MatMul/Gemm kernel asks of the session for a constant B operand:
// a prepared (packed) form, from the cache or packed now. Implemented by the
// executor; null when weight preparation is disabled.
class WeightPreparer;
struct PreparedPack;

// What an If/Loop/Scan builder needs to plan its subgraphs (runtime/subgraph.h).
struct SubgraphEnv;

// Input/output description seen by a builder.
struct ValueDesc {
  int32_t dtype = kUndefined;
  Shape shape;
  const Tensor* value = nullptr;  // known at plan time (initializer, constant, folded)
  std::string name;
  bool is_initializer = false;  // an initializer not overridden by a graph input
  // The model's element type when the runtime holds the value widened (INT4 /
  // UINT4 as INT8 / UINT8, constants.h); kUndefined otherwise.
  int32_t model_dtype = kUndefined;
};

class BuildContext {
 public:
  BuildContext(const onnx::NodeProto& node, int opset, std::vector<const ValueDesc*> inputs,
               WeightPreparer* weights)
      : node_(node), opset_(opset), inputs_(std::move(inputs)), weights_(weights) {
    outputs_.resize(size_t(node.output_size()));
    check_repeated_attrs();
  }

  const onnx::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }
  WeightPreparer* weights() const { return weights_; }

  // Inputs; an empty name counts as absent.
  int input_count() const { return int(inputs_.size()); }
  bool has_input(int i) const { return i < input_count() && inputs_[size_t(i)] != nullptr; }
  const ValueDesc& input(int i) const { return *inputs_[size_t(i)]; }
  const Tensor* input_value(int i) const {
    return has_input(i) ? inputs_[size_t(i)]->value : nullptr;
  }
  int output_count() const { return int(outputs_.size()); }

  // Outer-scope values a node's subgraphs read (If/Loop/Scan): the kernel gets
  // their pointers in KernelIO::in after the declared inputs.
  void set_implicit_inputs(std::vector<const ValueDesc*> v) { implicit_ = std::move(v); }
  int implicit_input_count() const { return int(implicit_.size()); }
  const ValueDesc& implicit_input(int i) const { return *implicit_[size_t(i)]; }
  void set_subgraph_env(const SubgraphEnv* env) { env_ = env; }
  const SubgraphEnv* subgraph_env() const { return env_; }
  // The limits of the run that is planning (null: none): work a builder does
  // now (a Loop run at plan time) checks them as a kernel would.
  void set_limits(const RunLimits* limits) { limits_ = limits; }
  const RunLimits* limits() const { return limits_; }

  // Required input, with a clear error when missing.
  Result<const ValueDesc*> require_input(int i) const;
  // An input whose value must be known at plan time (shape, axes, ...), as int64.
  Result<std::vector<int64_t>> const_ints(int i, std::string_view what) const;
  // True after const_ints() met an input whose value is unknown: the session
  // may plan again with fed values pinned.
  bool needed_unknown_value() const { return needed_unknown_value_; }
  // An error for a builder that needs the value of an input unknown at plan
  // time (its output shape depends on it): sets needed_unknown_value().
  Status needs_value(const std::string& what) const {
    needed_unknown_value_ = true;
    return error(what);
  }

  void set_output(int i, int32_t dtype, Shape shape);
  // The output is the input's bytes reinterpreted with a new shape (no kernel).
  void set_alias(int out, int in) { alias_.push_back({out, in}); }
  // The output's value is known now (e.g. Shape); no kernel needed.
  void set_output_value(int i, HostTensor value);
  // The output holds a widened 4-bit constant of model type `dtype`.
  void set_output_model_dtype(int i, int32_t dtype) {
    if (i < output_count()) outputs_[size_t(i)].model_dtype = dtype;
  }

  // Attributes. The typed getters return `fallback` for an absent attribute;
  // one present with another type (an INT alpha) is not read: it records an
  // error naming the attribute and both types in attr_status(), which the
  // planner returns for the node. A node that repeats an attribute name fails
  // the same way. attr() is the untyped access.
  const onnx::AttributeProto* attr(std::string_view name) const;
  // `name` when present with type `want` (or an untyped legacy attribute);
  // otherwise nullptr, and a present one of another type records the error.
  const onnx::AttributeProto* typed_attr(std::string_view name,
                                         onnx::AttributeProto::AttributeType want) const;
  const Status& attr_status() const { return attr_status_; }
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
  std::string attr_string(std::string_view name, std::string fallback) const;

  // The session's preparation of input `index` (a constant initializer) as a
  // packed weight: the one request every consumer makes (runtime/weights.h).
  // `pack`, when set, fills a miss from the consumer's own constants. Empty
  // bytes: not prepared (no preparer, or the family does not pack it).
  Result<PreparedPack> prepare_weight(int index,
                                      std::function<Status(std::span<uint8_t>)> pack = {}) const;

  // "node 'name' (Op)": prefix for errors.
  std::string where() const;
  Status error(const std::string& what) const { return invalid_argument(where() + ": " + what); }

  struct Output {
    int32_t dtype = kUndefined;
    Shape shape;
    bool set = false;
    std::optional<HostTensor> value;
    int32_t model_dtype = kUndefined;
  };
  const std::vector<Output>& outputs() const { return outputs_; }
  const std::vector<std::pair<int, int>>& aliases() const { return alias_; }

 private:
  const onnx::NodeProto& node_;
  int opset_;
  std::vector<const ValueDesc*> inputs_;
  WeightPreparer* weights_;
  std::vector<const ValueDesc*> implicit_;
  const SubgraphEnv* env_ = nullptr;
  const RunLimits* limits_ = nullptr;
  std::vector<Output> outputs_;
  std::vector<std::pair<int, int>> alias_;
  mutable bool needed_unknown_value_ = false;
  mutable Status attr_status_;  // the first attribute error (repeated name, wrong type)
  void check_repeated_attrs();
};

// Builder: checks the node, sets outputs, returns a kernel (or nullptr when
// every output is an alias or a known value).
using OpBuilder = Result<std::unique_ptr<Kernel>> (*)(BuildContext& ctx);

struct OpEntry {
  const char* op_type;
  OpBuilder build;
  const char* domain = "";  // "" is the default ONNX domain; e.g. "com.microsoft"
  // The builder decides its 16-bit float support itself: the half adapter
  // (half_adapter.h) never retries it through float. For operators without an
  // ONNX signature to check (com.microsoft), whose type parameters the adapter
  // could not see: a float A with float16 scales must stay an error.
  bool own_half_types = false;
};

// The registry: every supported operator. `domain` "" and "ai.onnx" are the
// default domain.
const OpEntry* find_op(std::string_view domain, std::string_view op_type);
inline const OpEntry* find_op(std::string_view op_type) { return find_op("", op_type); }
// Sorted names; operators of other domains as "domain::Op".
std::vector<std::string> supported_ops();

// The operator families, one folder each with a registry.cc that defines its
// list (ops/README.md); find_op joins them.
std::span<const OpEntry> attention_ops();  // transformer attention, rotary embeddings
std::span<const OpEntry> control_ops();    // If, Loop, Scan, RNN, GRU, LSTM
std::span<const OpEntry> conv_ops();       // convolution and pooling
std::span<const OpEntry> linalg_ops();     // MatMul, Gemm
std::span<const OpEntry> math_ops();       // elementwise, activations, softmax, casts, reductions
std::span<const OpEntry> norm_ops();       // layer, batch, instance, group normalization, LRN
std::span<const OpEntry> quant_ops();      // quantized operators (default and com.microsoft)
std::span<const OpEntry> tensor_ops();     // data movement, shapes, indexing, resizing, padding

// Numpy-style broadcast of two shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// Normalises an axis in [-rank, rank) to [0, rank).
Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const BuildContext& ctx);

}  // namespace onnx_prepack::runtime
