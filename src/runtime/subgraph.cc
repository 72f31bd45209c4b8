#include "runtime/subgraph.h"

#include <algorithm>
#include <set>

#include "runtime/prepared_weights.h"

namespace onnx_prepack::runtime {
namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// A body's weight preparer: the outer-scope initializers it reads go to the
// enclosing session's preparer (at the top, the one with the resolver, so a
// main-graph initializer read inside a body is a compiled entry's hit like
// any other); the body's own initializers are packed here, without the
// resolver (entries address main-graph initializers: docs/decisions.md).
class ScopedWeights final : public WeightPreparer {
 public:
  ScopedWeights(WeightPreparer* outer, std::set<std::string> outer_initializers,
                base::ThreadPool* pool)
      : outer_(outer),
        outer_initializers_(std::move(outer_initializers)),
        local_(nullptr, device::host_isa_level(), pool) {}
  Result<PreparedPack> prepare_pack(const WeightRequest& r) override {
    if (outer_ != nullptr && outer_initializers_.count(r.source)) return outer_->prepare_pack(r);
    return local_.prepare_pack(r);
  }

 private:
  WeightPreparer* outer_;
  std::set<std::string> outer_initializers_;
  ResolvedWeights local_;
};

template <typename Fn>
void for_each_subgraph(const onnx::NodeProto& node, Fn&& fn) {
  for (const auto& a : node.attribute()) {
    if (a.has_g()) fn(a.g());
    for (const auto& g : a.graphs()) fn(g);
  }
}

}  // namespace

std::vector<std::string> outer_scope_names(const onnx::GraphProto& g) {
  std::set<std::string> defined, used;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) defined.insert(o);
  }
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) used.insert(in);
    for (const auto& name : node_outer_scope_names(n)) used.insert(name);
  }
  for (const auto& v : g.output()) used.insert(v.name());
  std::vector<std::string> names;
  for (const auto& u : used) {
    if (!u.empty() && !defined.count(u)) names.push_back(u);
  }
  return names;
}

std::vector<std::string> node_outer_scope_names(const onnx::NodeProto& node) {
  std::set<std::string> names;
  for_each_subgraph(node, [&](const onnx::GraphProto& g) {
    for (auto& n : outer_scope_names(g)) names.insert(std::move(n));
  });
  return std::vector<std::string>(names.begin(), names.end());
}

void collect_unsupported(const onnx::GraphProto& g, std::set<std::string>* out) {
  for (const auto& n : g.node()) {
    if (find_op(n.domain(), n.op_type()) == nullptr) {
      out->insert(is_default_domain(n.domain()) ? n.op_type() : n.domain() + "::" + n.op_type());
    }
    for_each_subgraph(n, [&](const onnx::GraphProto& sub) { collect_unsupported(sub, out); });
  }
}

Result<std::unique_ptr<Subgraph>> Subgraph::plan(const BuildContext& ctx,
                                                 const onnx::GraphProto& graph,
                                                 const std::vector<ValueDesc>& formal) {
  const SubgraphEnv* env = ctx.subgraph_env();
  std::string where = ctx.where() + " subgraph '" + graph.name() + "'";
  if (env == nullptr) return internal_error(where + ": no subgraph environment");
  if (graph.input_size() != int(formal.size())) {
    return invalid_argument(where + ": has " + std::to_string(graph.input_size()) +
                            " inputs, the operator passes " + std::to_string(formal.size()));
  }
  auto sub = std::make_unique<Subgraph>();
  sub->where_ = where;
  sub->formal_count_ = formal.size();
  std::vector<GraphInput> inputs;
  std::map<std::string, Session::Feed> feeds;
  for (size_t i = 0; i < formal.size(); ++i) {
    const auto& decl = graph.input(int(i));
    int32_t declared = decl.type().tensor_type().elem_type();
    if (!decl.type().has_tensor_type() && decl.has_type()) {
      return unimplemented(where + ": input '" + decl.name() + "' is not a tensor");
    }
    if (declared != kUndefined && declared != formal[i].dtype) {
      return invalid_argument(where + ": input '" + decl.name() + "' is declared " +
                              dtype_name(declared) + ", the operator passes " +
                              dtype_name(formal[i].dtype));
    }
    GraphInput in;
    in.name = decl.name();
    in.dtype = formal[i].dtype;
    inputs.push_back(in);
    feeds[in.name] = {formal[i].dtype, formal[i].shape, formal[i].value};
  }
  std::set<std::string> outer_initializers;
  for (const auto& name : outer_scope_names(graph)) {
    int slot = -1;
    for (int j = 0; j < ctx.implicit_input_count(); ++j) {
      if (ctx.implicit_input(j).name == name) slot = j;
    }
    if (slot < 0) return internal_error(where + ": outer-scope value '" + name + "' not passed");
    const ValueDesc& d = ctx.implicit_input(slot);
    GraphInput in;
    in.name = name;
    in.dtype = d.dtype;
    inputs.push_back(in);
    feeds[name] = {d.dtype, d.shape, d.value, d.value != nullptr && d.is_initializer};
    if (d.value != nullptr && d.is_initializer) outer_initializers.insert(name);
    sub->outer_slot_.push_back(slot);
  }
  SessionOptions options;
  options.pool = env->pool;
  options.fold_limit_bytes = env->fold_limit_bytes;
  if (env->prepare_weights) {
    sub->weights_ =
        std::make_unique<ScopedWeights>(ctx.weights(), std::move(outer_initializers), env->pool);
    options.weights = sub->weights_.get();
  }
  auto session = Session::create_subgraph(env->model, graph, env->opset, inputs, options);
  if (!session.ok()) return session.status().with_context(where);
  auto outcome = (*session)->plan(feeds, ctx.limits());
  if (!outcome.ok()) return outcome.status().with_context(where);
  if (*outcome == PlanOutcome::kNeedsInputValues) {
    return ctx.needs_value(where +
                           ": planning it needs the value of an input that must be known "
                           "before running");
  }
  sub->session_ = std::move(*session);
  sub->outputs_ = sub->session_->planned_outputs();
  sub->bound_.resize(inputs.size());
  return sub;
}

Status Subgraph::run(std::span<const void* const> formal, std::span<const void* const> outer,
                     std::span<void* const> outputs, const RunLimits* limits) const {
  for (size_t i = 0; i < formal_count_; ++i) bound_[i] = formal[i];
  for (size_t j = 0; j < outer_slot_.size(); ++j)
    bound_[formal_count_ + j] = outer[size_t(outer_slot_[j])];
  return session_->run_bound(bound_, outputs, limits);
}

}  // namespace onnx_prepack::runtime
