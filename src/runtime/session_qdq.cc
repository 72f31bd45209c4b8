// The session's side of QDQ units (qdq_fusion.h): after the initializers are
// bound, the units the graph holds; then each unit's nodes are built the way
// SessionOptions::qdq asks.
//
//   exact    every node builds as itself; the weight's DequantizeLinear folds
//            as any constant node (up to the fold limit), and the MatMul /
//            Gemm's B, that folded constant, is offered to a plan-time packer
//            (a ResolvedWeights without a resolver: every request packs,
//            nothing is persisted), so the float GEMM reads panels packed
//            once instead of packing B at every run.
//   integer  the unit's nodes are not built but its last, which builds the
//            unit's integer node (W prepared by the session's own preparer:
//            a compiled i8_gemm_b entry, or packed now); a weight-only unit's
//            DynamicQuantizeMatMul quantizes A per row. A unit its integer
//            kernel refuses (an A that is not float, say) is built node by
//            node there, as the exact path builds it.
#include <algorithm>

#include "runtime/ops/quant/quant_ops.h"
#include "runtime/prepared_weights.h"
#include "runtime/qdq_fusion.h"
#include "runtime/session.h"
#include "runtime/session_state.h"

namespace onnx_prepack::runtime {

struct Session::QdqUnitPlan {
  QdqUnit unit;
};

void Session::find_qdq_units() {
  qdq_nodes_.clear();
  auto constant = [&](const std::string& name) -> std::optional<ConstantInfo> {
    auto it = value_index_.find(name);
    if (it == value_index_.end()) return std::nullopt;
    const Value& v = values_[size_t(it->second)];
    // Constant initializers only; a widened 4-bit one is not an int8 weight.
    if (!v.constant || !v.desc.is_initializer || v.desc.model_dtype != kUndefined)
      return std::nullopt;
    return ConstantInfo{v.desc.dtype,
                        std::vector<int64_t>(v.desc.shape.begin(), v.desc.shape.end())};
  };
  for (QdqUnit& u : runtime::find_qdq_units(*graph_, constant)) {
    auto plan = std::make_shared<QdqUnitPlan>();
    plan->unit = std::move(u);
    for (int ni : plan->unit.nodes) qdq_nodes_[ni] = plan;
  }
}

namespace {

// A full Conv unit's bias scale is x_scale * w_scale, value for value (float
// products, as the graph's DequantizeLinear of the bias and QLinearConv's
// requantize use them); true when the unit has no bias.
bool bias_scale_holds(const QdqUnit& u, const std::vector<Session::Value>& values,
                      const std::map<std::string, int, std::less<>>& index) {
  if (u.bias_scale_check.empty()) return true;
  const Session::Value* v[3];
  for (size_t i = 0; i < 3; ++i) {
    auto it = index.find(u.bias_scale_check[i]);
    if (it == index.end() || !values[size_t(it->second)].constant) return false;
    v[i] = &values[size_t(it->second)];
  }
  const int64_t nb = v[0]->constant->numel(), nx = v[1]->constant->numel(),
                nw = v[2]->constant->numel();
  if (nx != 1) return false;
  const int64_t n = std::max(nb, nw);
  if ((nb != 1 && nb != n) || (nw != 1 && nw != n)) return false;
  const float* b = v[0]->constant->as<float>();
  const float x = v[1]->constant->as<float>()[0];
  const float* w = v[2]->constant->as<float>();
  for (int64_t i = 0; i < n; ++i) {
    if (b[nb == 1 ? 0 : i] != x * w[nw == 1 ? 0 : i]) return false;
  }
  return true;
}

}  // namespace

Status Session::build_qdq_node(int ni, const QdqUnitPlan& p, bool& needs_value) {
  const QdqUnit& u = p.unit;
  const onnx::NodeProto& node = graph_->node(ni);
  const std::string where = "node '" + node.name() + "' (" + node.op_type() + ")";
  // The float GEMM of the exact path: its folded B packed once, when the
  // session keeps resident packs (`--weights plain` keeps none).
  auto build_consumer = [&](bool& needs) -> Status {
    const onnx::NodeProto& c = graph_->node(u.consumer);
    NodeBuild how;
    const bool gemm = c.op_type() == "MatMul" || c.op_type() == "Gemm";
    if (gemm && options_.weights != nullptr) {
      if (!qdq_packer_) {
        base::ThreadPool* pool = options_.pool ? options_.pool : &base::ThreadPool::shared();
        qdq_packer_ = std::make_unique<ResolvedWeights>(nullptr, device::host_isa_level(), pool);
      }
      how.weights = qdq_packer_.get();
      how.packed_input = 1;
    }
    const size_t before = steps_.size();
    OP_RETURN_IF_ERROR(build_node_as(u.consumer, c, node_inputs(u.consumer), how, needs));
    auto b = value_index_.find(c.input(1));
    if (how.weights != nullptr && steps_.size() > before && b != value_index_.end() &&
        values_[size_t(b->second)].constant)
      ++stats_.qdq_exact;
    return ok_status();
  };
  if (options_.qdq == QdqMode::kExact) {
    if (ni == u.consumer) return build_consumer(needs_value);
    return build_node_as(ni, node, node_inputs(ni), NodeBuild{}, needs_value);
  }
  if (ni != u.at) return ok_status();  // built by `at`, or as the fallback there
  if (u.transposed && !value_index_.count(u.transposed_name)) {
    // Gemm transB 1: W [N, K] as B [K, N], a constant of this plan.
    const Value& w = values_[size_t(value_index_.at(graph_->node(u.weight_dq).input(0)))];
    const int64_t n = w.desc.shape[0], k = w.desc.shape[1];
    OP_ASSIGN_OR_RETURN(HostTensor t, HostTensor::try_allocate(w.desc.dtype, Shape{k, n},
                                                               where + ": transposed weight '" +
                                                                   u.transposed_name + "'"));
    const auto* src = static_cast<const uint8_t*>(w.constant->data());
    auto* dst = static_cast<uint8_t*>(t.mutable_data());
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < k; ++c) dst[c * n + r] = src[r * k + c];
    }
    const int32_t dtype = w.desc.dtype;  // add_value may move values_, and `w` with it
    const int id = add_value(u.transposed_name);
    values_[size_t(id)].desc.dtype = dtype;
    values_[size_t(id)].desc.shape = Shape{k, n};
    values_[size_t(id)].constant = std::move(t);
  }
  const std::vector<std::string> inputs(u.integer_node.input().begin(),
                                        u.integer_node.input().end());
  NodeBuild how;
  how.label = u.kind == QdqUnit::Kind::kWeightOnly   ? "QdqDynamicQuantizeMatMul"
              : u.kind == QdqUnit::Kind::kFullMatMul ? "QdqQLinearMatMul"
                                                     : "QdqQLinearConv";
  // A weight-only unit's A is quantized per row (its error follows each row's
  // range, within ONNX Runtime's own: docs/decisions.md); the model's own
  // DynamicQuantizeMatMul nodes keep the operator's per-tensor semantics.
  if (u.kind == QdqUnit::Kind::kWeightOnly) how.builder = build_qdq_dynamic_quantize_matmul;
  if (!bias_scale_holds(u, values_, value_index_)) {
    // QLinearConv would read the int32 bias at another scale than the graph.
  } else if (Status st = build_node_as(ni, u.integer_node, inputs, how, needs_value); st.ok()) {
    ++stats_.qdq_integer;
    return st;
  } else if (needs_value) {
    return st;
  }
  // Not for the integer kernel: the unit's own nodes, as the exact path.
  for (int n : u.nodes) {
    bool needs = false;
    Status st = n == u.consumer
                    ? build_consumer(needs)
                    : build_node_as(n, graph_->node(n), node_inputs(n), NodeBuild{}, needs);
    if (!st.ok()) {
      needs_value = needs;
      return st;
    }
  }
  return ok_status();
}

}  // namespace onnx_prepack::runtime
