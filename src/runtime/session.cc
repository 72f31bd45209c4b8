#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "runtime/activity.h"
#include "runtime/constants.h"
#include "runtime/half_adapter.h"
#include "runtime/legacy_opset.h"
#include "runtime/op_signature.h"
#include "runtime/prepared_weights.h"
#include "runtime/session_state.h"
#include "runtime/subgraph.h"

namespace onnx_prepack::runtime {

namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// No single value may exceed this (a malformed shape must not become an
// unbounded allocation).
constexpr uint64_t kMaxValueBytes = uint64_t(64) << 30;

}  // namespace

Session::~Session() {
  std::free(arena_);
  if (profile_ && !profile_->empty()) {
    std::vector<std::pair<std::string, OpProfile>> rows(profile_->begin(), profile_->end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    double total = 0;
    for (const auto& r : rows) total += r.second.ms;
    std::fprintf(stderr, "profile: %.3f ms in kernels\n", total);
    for (const auto& [op, p] : rows) {
      std::fprintf(stderr, "profile: %-24s %10.3f ms %5.1f%% %8lld calls\n", op.c_str(), p.ms,
                   total > 0 ? 100.0 * p.ms / total : 0.0, static_cast<long long>(p.calls));
    }
  }
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const format::Model> model,
                                                 SessionOptions options) {
  std::unique_ptr<Session> s(new Session());
  s->model_ = std::move(model);
  s->options_ = options;
  if (s->options_.pool == nullptr) s->options_.pool = &base::ThreadPool::shared();
  s->workspace_.reserve_workers(s->options_.pool->size());
  if (const char* p = std::getenv("ONNX_PREPACK_PROFILE");
      p != nullptr && std::strcmp(p, "1") == 0) {
    s->profile_ = std::make_unique<std::map<std::string, OpProfile>>();
  }
  const auto& proto = s->model_->proto();
  const auto& g = proto.graph();

  int opset = -1;
  for (const auto& o : proto.opset_import()) {
    if (is_default_domain(o.domain())) opset = int(o.version());
  }
  if (opset < 0) return invalid_argument("model: no opset_import for the default domain");
  // 22 to 24 widened the types of existing operators (bfloat16, 4-bit floats, float8e8m0),
  // added Attention, RotaryEmbedding and RMSNormalization (23), Swish and TensorScatter (24)
  // and Attention-24's nonpad_kv_seqlen: an operator runs as at 21 unless it is one of
  // those (docs/runtime.md).
  if (opset < kMinDefaultOpset || opset > kMaxDefaultOpset) {
    return unimplemented("model: default-domain opset " + std::to_string(opset) +
                         " is not supported (1 to " + std::to_string(kMaxDefaultOpset) + ")");
  }
  s->opset_ = opset;
  s->graph_ = &g;

  // Every unsupported operator (subgraphs included), named once, before anything runs.
  std::set<std::string> unsupported;
  collect_unsupported(g, &unsupported);
  if (!unsupported.empty()) {
    std::string list;
    for (const auto& u : unsupported) list += (list.empty() ? "" : ", ") + u;
    return unimplemented("model: unsupported operator" +
                         std::string(unsupported.size() > 1 ? "s: " : ": ") + list);
  }

  std::set<std::string> init_names;
  for (const auto& t : g.initializer()) init_names.insert(t.name());
  OP_RETURN_IF_ERROR(s->read_signature(init_names));
  OP_RETURN_IF_ERROR(s->order_nodes(init_names));
  return s;
}

Result<std::unique_ptr<Session>> Session::create_subgraph(
    std::shared_ptr<const format::Model> model, const onnx::GraphProto& graph, int opset,
    std::vector<GraphInput> inputs, SessionOptions options) {
  std::unique_ptr<Session> s(new Session());
  s->model_ = std::move(model);
  s->options_ = options;
  if (s->options_.pool == nullptr) s->options_.pool = &base::ThreadPool::shared();
  s->workspace_.reserve_workers(s->options_.pool->size());
  s->opset_ = opset;
  s->graph_ = &graph;
  s->inputs_ = std::move(inputs);
  std::set<std::string> unsupported;
  collect_unsupported(graph, &unsupported);
  if (!unsupported.empty()) {
    return unimplemented("subgraph '" + graph.name() + "': unsupported operator " +
                         *unsupported.begin());
  }
  std::set<std::string> init_names;
  for (const auto& t : graph.initializer()) init_names.insert(t.name());
  OP_RETURN_IF_ERROR(s->read_signature(init_names));
  OP_RETURN_IF_ERROR(s->order_nodes(init_names));
  return s;
}

std::vector<std::string> Session::node_inputs(int node) const {
  const auto& n = graph_->node(node);
  std::vector<std::string> names(n.input().begin(), n.input().end());
  const auto& extra = implicit_inputs_[size_t(node)];
  names.insert(names.end(), extra.begin(), extra.end());
  return names;
}

// Graph inputs and outputs: tensors only.
Status Session::read_signature(const std::set<std::string>& init_names) {
  const auto& g = *graph_;
  env_ = std::make_unique<SubgraphEnv>(SubgraphEnv{
      model_, opset_, options_.pool, options_.fold_limit_bytes, options_.weights != nullptr});
  for (const auto& n : g.node()) implicit_inputs_.push_back(node_outer_scope_names(n));
  std::set<std::string> seen;
  for (const auto& t : g.initializer()) {
    if (!seen.insert(t.name()).second)
      return invalid_argument("graph '" + g.name() + "': initializer '" + t.name() +
                              "' is given more than once");
  }
  seen.clear();
  for (const auto& v : g.input()) {
    if (!seen.insert(v.name()).second)
      return invalid_argument("graph '" + g.name() + "': input '" + v.name() +
                              "' is given more than once");
  }
  // A subgraph's inputs (formal, then outer-scope) come from create_subgraph.
  for (const auto& v : g.input()) {
    if (graph_ != &model_->proto().graph()) break;
    if (!v.type().has_tensor_type()) {
      return unimplemented("graph input '" + v.name() + "': only tensor inputs are supported");
    }
    GraphInput in;
    in.name = v.name();
    in.dtype = v.type().tensor_type().elem_type();
    if (dtype_size(in.dtype) == 0) {
      return unimplemented("graph input '" + v.name() + "': element type " + dtype_name(in.dtype) +
                           " is not supported");
    }
    in.has_shape = v.type().tensor_type().has_shape();
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      in.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      in.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
    in.has_initializer = init_names.count(v.name()) > 0;
    inputs_.push_back(std::move(in));
  }
  for (const auto& v : g.output()) {
    if (v.type().has_sequence_type() || v.type().has_optional_type() || v.type().has_map_type()) {
      return unimplemented("graph output '" + v.name() + "': only tensor outputs are supported");
    }
    output_names_.push_back(v.name());
  }
  return ok_status();
}

// Topological order (Kahn, lowest index first among ready nodes), checking
// that every input is defined.
Status Session::order_nodes(const std::set<std::string>& init_names) {
  const auto& g = *graph_;
  std::set<std::string> defined(init_names.begin(), init_names.end());
  for (const auto& in : inputs_) defined.insert(in.name);
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      if (producer.count(o) || defined.count(o)) {
        return invalid_argument("node '" + g.node(i).name() + "': output '" + o +
                                "' is defined more than once");
      }
      producer[o] = i;
    }
  }
  std::vector<int> pending(size_t(g.node_size()), 0);
  std::map<std::string, std::vector<int>> consumers;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& in : node_inputs(i)) {
      if (in.empty() || defined.count(in)) continue;
      if (!producer.count(in)) {
        return invalid_argument("node '" + g.node(i).name() + "' (" + g.node(i).op_type() +
                                "): input '" + in + "' is not defined in the graph");
      }
      ++pending[size_t(i)];
      consumers[in].push_back(i);
    }
  }
  std::vector<int> ready;
  for (int i = g.node_size() - 1; i >= 0; --i) {
    if (pending[size_t(i)] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    int i = ready.back();
    ready.pop_back();
    order_.push_back(i);
    std::vector<int> next;
    for (const auto& o : g.node(i).output()) {
      auto it = consumers.find(o);
      if (it == consumers.end()) continue;
      for (int c : it->second) {
        if (--pending[size_t(c)] == 0) next.push_back(c);
      }
    }
    std::sort(next.rbegin(), next.rend());
    ready.insert(ready.end(), next.begin(), next.end());
  }
  if (int(order_.size()) != g.node_size()) {
    return invalid_argument("graph: nodes form a cycle (" +
                            std::to_string(g.node_size() - int(order_.size())) +
                            " nodes never become ready)");
  }
  for (const auto& o : output_names_) {
    if (!defined.count(o) && !producer.count(o)) {
      return invalid_argument("graph output '" + o + "' is not produced by any node");
    }
  }
  return ok_status();
}

void Session::reset_plan() {
  values_.clear();
  value_index_.clear();
  steps_.clear();
  qdq_nodes_.clear();
  output_values_.clear();
  fed_values_.clear();
  planned_feeds_.clear();
  std::free(arena_);
  arena_ = nullptr;
  arena_reserved_ = MemoryReservation();
  bound_uses_.clear();
  has_bound_ = false;
  stats_ = PlanStats();
  stats_.nodes = size_t(graph_->node_size());
}

int Session::add_value(const std::string& name) {
  int id = int(values_.size());
  values_.emplace_back();
  values_.back().name = name;
  values_.back().desc.name = name;
  value_index_[name] = id;
  return id;
}

Result<PlanOutcome> Session::plan(const std::map<std::string, Feed>& feeds,
                                  const RunLimits* limits) {
  // Cleared on every return: the pointer is the caller's, for this call only.
  struct ClearLimits {
    const RunLimits*& p;
    ~ClearLimits() { p = nullptr; }
  } clear{plan_limits_};
  plan_limits_ = limits;
  float16_chain_.clear();
  OP_ASSIGN_OR_RETURN(PlanOutcome outcome, build_nodes(feeds, limits));
  if (outcome != PlanOutcome::kPlanned) return outcome;
  if (options_.float16_float_chains) {
    // Plan again with the FLOAT16 chains in float; should that fail, the
    // rounding plan stands (the option never makes a model fail).
    float16_chain_ = float16_chain_values();
    if (!float16_chain_.empty()) {
      auto again = build_nodes(feeds, limits);
      if (!again.ok() || *again != PlanOutcome::kPlanned) {
        float16_chain_.clear();
        OP_ASSIGN_OR_RETURN(outcome, build_nodes(feeds, limits));
        if (outcome != PlanOutcome::kPlanned) return outcome;
      }
    }
  }
  // A builder may have met the deadline and taken its error for a branch
  // that cannot be planned (If): a plan made past the deadline is not kept.
  if (Status st = check_limits(limits, "planning graph '" + graph_->name() + "'"); !st.ok()) {
    reset_plan();
    return st;
  }
  fold_transposes();
  fuse_patterns();
  fuse_attention();
  fuse_matmul_epilogues();
  fuse_pointwise();
  fuse_conv_epilogue();
  for (Step& st : steps_) {
    st.empty = !st.out.empty() && !(st.kernel && st.kernel->checks_input_values()) &&
               std::all_of(st.out.begin(), st.out.end(), [&](int id) {
                 return id < 0 || shape_numel(values_[size_t(id)].desc.shape) == 0;
               });
  }
  compute_lifetimes();
  OP_RETURN_IF_ERROR(place_arena());
  stats_.kernels = steps_.size();
  planned_feeds_ = feeds;
  return PlanOutcome::kPlanned;
}

Result<PlanOutcome> Session::build_nodes(const std::map<std::string, Feed>& feeds,
                                         const RunLimits* limits) {
  reset_plan();
  through_float_.assign(size_t(graph_->node_size()), false);
  OP_RETURN_IF_ERROR(bind_feeds(feeds));
  OP_RETURN_IF_ERROR(bind_initializers());
  find_qdq_units();
  const std::vector<bool> live = live_nodes();
  for (int ni : order_) {
    if (!live[size_t(ni)]) continue;
    bool needs_value = false;
    const ActivityNote note("planning", graph_->node(ni));
    Status st;
    if (limits != nullptr && limits->active() && limits->stop_now()) {
      st = limits->stop_status("planning node '" + graph_->node(ni).name() + "' (" +
                               graph_->node(ni).op_type() + ")");
    } else {
      st = build_node(ni, needs_value);
    }
    if (st.ok()) continue;
    bool unpinned = false;
    for (const auto& [name, feed] : feeds) unpinned = unpinned || feed.value == nullptr;
    reset_plan();
    if (needs_value && unpinned) return PlanOutcome::kNeedsInputValues;
    return st;
  }
  return PlanOutcome::kPlanned;
}

Status Session::bind_feeds(const std::map<std::string, Feed>& feeds) {
  for (const auto& entry : feeds) {
    const std::string& name = entry.first;
    const Feed& feed = entry.second;
    auto it = std::find_if(inputs_.begin(), inputs_.end(),
                           [&](const GraphInput& in) { return in.name == name; });
    if (it == inputs_.end()) return invalid_argument("input '" + name + "' is not a graph input");
    if (checked_numel(feed.shape) < 0) {
      return invalid_argument("input '" + name + "': shape " + shape_string(feed.shape) +
                              " has a negative or overflowing size");
    }
    if (feed.dtype != it->dtype) {
      return invalid_argument("input '" + name + "': type " + dtype_name(feed.dtype) +
                              ", the graph declares " + dtype_name(it->dtype));
    }
    if (it->has_shape) {
      bool ok = it->dims.size() == feed.shape.size();
      for (size_t i = 0; ok && i < feed.shape.size(); ++i) {
        if (feed.shape[i] < 0 || (it->dims[i] >= 0 && it->dims[i] != feed.shape[i])) ok = false;
      }
      if (!ok) {
        return invalid_argument("input '" + name + "': shape " + shape_string(feed.shape) +
                                " does not match the declared " + shape_string(it->dims));
      }
    }
    int id = add_value(name);
    Value& v = values_[size_t(id)];
    v.desc.dtype = feed.dtype;
    v.desc.shape = feed.shape;
    v.is_input = true;
    fed_values_[name] = id;
    if (feed.value != nullptr) {
      if (feed.value->dtype != feed.dtype || feed.value->shape != feed.shape) {
        return invalid_argument("input '" + name + "': pinned value does not match its feed");
      }
      v.desc.is_initializer = feed.is_initializer;
      OP_ASSIGN_OR_RETURN(v.constant,
                          HostTensor::try_allocate(feed.dtype, feed.shape, "input '" + name + "'"));
      if (v.constant->nbytes())
        std::memcpy(v.constant->mutable_data(), feed.value->data, v.constant->nbytes());
      if (feed.dtype == kBool) canonicalize_bools(v.constant->mutable_data(), v.constant->nbytes());
    } else {
      v.runtime = true;
    }
  }
  for (const auto& in : inputs_) {
    if (!feeds.count(in.name) && !in.has_initializer) {
      return invalid_argument("input '" + in.name + "' is not fed and has no initializer");
    }
  }
  return ok_status();
}

// Initializers not overridden by a fed input: constants, bytes borrowed.
Status Session::bind_initializers() {
  const auto& g = *graph_;
  auto t_init = std::chrono::steady_clock::now();
  for (int i = 0; i < g.initializer_size(); ++i) {
    const auto& t = g.initializer(i);
    if (value_index_.count(t.name())) continue;
    auto r = host_tensor_from_proto(t, model_.get(), format::tensor_context(i, t.name()),
                                    std::shared_ptr<const void>(model_, nullptr));
    if (!r.ok()) return r.status();
    int id = add_value(t.name());
    Value& v = values_[size_t(id)];
    v.constant = std::move(*r);
    v.desc.dtype = v.constant->dtype();
    v.desc.shape = v.constant->shape();
    v.desc.is_initializer = true;
    if (t.data_type() != v.desc.dtype) v.desc.model_dtype = t.data_type();
  }
  stats_.init_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_init).count();
  return ok_status();
}

// Only nodes that lead to a graph output run.
std::vector<bool> Session::live_nodes() const {
  const auto& g = *graph_;
  std::set<std::string> needed(output_names_.begin(), output_names_.end());
  std::vector<bool> live(size_t(g.node_size()), false);
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    const auto& n = g.node(*it);
    bool any = false;
    for (const auto& o : n.output()) any = any || needed.count(o);
    if (!any) continue;
    live[size_t(*it)] = true;
    for (const auto& in : node_inputs(*it)) needed.insert(in);
  }
  return live;
}

Status Session::build_node(int ni, bool& needs_value) {
  if (auto it = qdq_nodes_.find(ni); it != qdq_nodes_.end()) {
    return build_qdq_node(ni, *it->second, needs_value);
  }
  return build_node_as(ni, graph_->node(ni), node_inputs(ni), NodeBuild{}, needs_value);
}

Status Session::build_node_as(int ni, const onnx::NodeProto& node,
                              const std::vector<std::string>& inputs, const NodeBuild& how,
                              bool& needs_value) {
  std::vector<int> in_ids;
  bool all_known = true;
  for (const auto& in : inputs) {
    int id = in.empty() ? -1 : value_index_.at(in);
    in_ids.push_back(id);
    if (id >= 0) all_known = all_known && values_[size_t(id)].constant.has_value();
  }
  // Descriptions with views of the known values, alive for the build.
  std::vector<Tensor> views;
  std::vector<ValueDesc> local;
  views.reserve(in_ids.size());
  local.reserve(in_ids.size());
  std::vector<const ValueDesc*> descs;
  for (int id : in_ids) {
    if (id < 0) {
      descs.push_back(nullptr);
      continue;
    }
    Value& v = values_[size_t(id)];
    local.push_back(v.desc);
    local.back().value = nullptr;
    if (v.constant) {
      views.push_back(v.constant->view());
      local.back().value = &views.back();
      // A folded weight offered to `how.weights` as one (session_qdq.cc).
      if (int(descs.size()) == how.packed_input) local.back().is_initializer = true;
    }
    descs.push_back(&local.back());
  }
  const OpEntry* op = find_op(node.domain(), node.op_type());
  OpEntry chosen{};  // the registry's entry with how.builder in its place
  if (how.builder != nullptr && op != nullptr) {
    chosen = *op;
    chosen.build = how.builder;
    op = &chosen;
  }
  std::vector<const ValueDesc*> implicit(descs.begin() + node.input_size(), descs.end());
  descs.resize(size_t(node.input_size()));
  OP_RETURN_IF_ERROR(check_legacy_form(node, opset_));
  std::vector<int32_t> input_types;
  for (const ValueDesc* d : descs) {
    // A FLOAT16 value held as float (float16_chain_) has the model's type FLOAT16.
    const bool carried = d != nullptr && d->dtype == kFloat && float16_chain_.count(d->name) != 0;
    input_types.push_back(d == nullptr                   ? 0
                          : carried                      ? kFloat16
                          : d->model_dtype != kUndefined ? d->model_dtype
                                                         : d->dtype);
  }
  // Counts, attributes and input types per the operator's schema.
  OP_RETURN_IF_ERROR(check_signature(node, opset_, input_types));
  BuildContext ctx(node, opset_, descs, how.weights != nullptr ? how.weights : options_.weights);
  ctx.set_implicit_inputs(std::move(implicit));
  ctx.set_subgraph_env(env_.get());
  ctx.set_limits(plan_limits_);
  OP_RETURN_IF_ERROR(ctx.attr_status());  // an attribute name given twice
  HalfCarry carry;                        // FLOAT16 values held as float (float16_chain_)
  if (!float16_chain_.empty()) {
    for (const auto& in : node.input()) carry.float_inputs.push_back(float16_chain_.count(in) != 0);
    for (const auto& o : node.output()) carry.float_outputs.push_back(float16_chain_.count(o) != 0);
  }
  // half_adapter.h: 16-bit floats through float
  auto built = build_with_half_adapter(*op, ctx, &carry);
  through_float_[size_t(ni)] = carry.through_float;
  // An attribute of the wrong type was not read (its default stood in): that
  // error, not what the builder made of the default.
  OP_RETURN_IF_ERROR(ctx.attr_status());
  if (!built.ok()) {
    needs_value = ctx.needed_unknown_value();
    return built.status();
  }
  std::unique_ptr<Kernel> kernel = std::move(*built);

  std::vector<int> out_ids;
  const auto& outs = ctx.outputs();
  for (int o = 0; o < node.output_size(); ++o) {
    const std::string& name = node.output(o);
    if (name.empty()) {
      out_ids.push_back(-1);
      continue;
    }
    if (!outs[size_t(o)].set) {
      return internal_error(ctx.where() + ": output " + std::to_string(o) + " was not described");
    }
    int id = add_value(name);
    Value& v = values_[size_t(id)];
    v.desc.dtype = outs[size_t(o)].dtype;
    v.desc.shape = outs[size_t(o)].shape;
    v.desc.model_dtype = outs[size_t(o)].model_dtype;
    int64_t count = checked_numel(v.desc.shape);
    if (count < 0) {
      return invalid_argument(ctx.where() + ": output " + shape_string(v.desc.shape) +
                              " has a negative or overflowing size");
    }
    OP_RETURN_IF_ERROR(
        checked_tensor_bytes(v.desc.dtype, v.desc.shape, ctx.where() + " output " + name).status());
    if (uint64_t(count) * std::max<size_t>(1, dtype_size(v.desc.dtype)) > kMaxValueBytes) {
      return resource_exhausted(ctx.where() + ": output " + shape_string(v.desc.shape) +
                                " needs more than " + std::to_string(kMaxValueBytes >> 30) +
                                " GiB");
    }
    if (outs[size_t(o)].value) v.constant = *outs[size_t(o)].value;
    out_ids.push_back(id);
  }
  for (auto [o, i] : ctx.aliases()) {
    int oid = out_ids[size_t(o)], iid = in_ids[size_t(i)];
    if (oid < 0 || iid < 0) continue;
    Value& src = values_[size_t(iid)];
    Value& dst = values_[size_t(oid)];
    if (src.constant) {
      dst.constant = HostTensor::borrow(dst.desc.dtype, dst.desc.shape, src.constant->data(),
                                        src.constant->keep_alive());
    } else {
      dst.runtime = true;
      dst.alias_of = src.alias_of >= 0 ? src.alias_of : iid;
      ++stats_.aliases;
    }
  }
  if (kernel == nullptr) {
    for (int id : out_ids) {
      if (id >= 0 && !values_[size_t(id)].constant && !values_[size_t(id)].runtime)
        return internal_error(ctx.where() + ": no kernel and outputs not produced");
    }
    if (!out_ids.empty() && out_ids[0] >= 0 && values_[size_t(out_ids[0])].constant)
      ++stats_.folded;
    return ok_status();
  }
  // Fold when every input is known and the outputs are small.
  uint64_t out_bytes = 0;
  for (int id : out_ids) {
    if (id >= 0)
      out_bytes += uint64_t(shape_numel(values_[size_t(id)].desc.shape)) *
                   dtype_size(values_[size_t(id)].desc.dtype);
  }
  if (all_known && int64_t(out_bytes) <= options_.fold_limit_bytes) {
    return fold(*kernel, in_ids, out_ids, ctx.where());
  }
  Step step;
  step.node = ni;
  step.label = how.label;
  step.kernel = std::move(kernel);
  step.in = in_ids;
  step.out = out_ids;
  int si = int(steps_.size());
  for (int id : out_ids) {
    if (id < 0) continue;
    values_[size_t(id)].runtime = true;
    values_[size_t(id)].def = si;
    values_[size_t(id)].last = si;
  }
  steps_.push_back(std::move(step));
  return ok_status();
}

// Runs a kernel whose inputs are all known now; its outputs become constants.
Status Session::fold(Kernel& kernel, const std::vector<int>& in_ids,
                     const std::vector<int>& out_ids, const std::string& where) {
  std::vector<void*> ip, op_ptrs;
  for (int id : in_ids) {
    ip.push_back(id < 0 ? nullptr : const_cast<void*>(values_[size_t(id)].constant->data()));
  }
  for (int id : out_ids) {
    if (id < 0) {
      op_ptrs.push_back(nullptr);
      continue;
    }
    Value& v = values_[size_t(id)];
    OP_ASSIGN_OR_RETURN(v.constant,
                        HostTensor::try_allocate(v.desc.dtype, v.desc.shape,
                                                 where + ": folded output '" + v.name + "'"));
    op_ptrs.push_back(v.constant->mutable_data());
  }
  Status failure;
  // Empty outputs: nothing to compute (as Step::empty).
  const bool empty =
      !kernel.checks_input_values() && std::all_of(out_ids.begin(), out_ids.end(), [&](int id) {
        return id < 0 || shape_numel(values_[size_t(id)].desc.shape) == 0;
      });
  if (!empty) kernel.run(KernelIO{ip, op_ptrs, options_.pool, &workspace_, &failure, plan_limits_});
  OP_RETURN_IF_ERROR(failure);
  ++stats_.folded;
  return ok_status();
}

// Lifetimes: a read extends the storage owner's life; outputs live to the end.
void Session::compute_lifetimes() {
  auto owner = [&](int id) {
    return values_[size_t(id)].alias_of >= 0 ? values_[size_t(id)].alias_of : id;
  };
  int end = int(steps_.size());
  for (int si = 0; si < int(steps_.size()); ++si) {
    for (int id : steps_[size_t(si)].in) {
      if (id < 0 || !values_[size_t(id)].runtime) continue;
      Value& o = values_[size_t(owner(id))];
      o.last = std::max(o.last, si);
    }
  }
  for (const auto& name : output_names_) {
    int id = value_index_.at(name);
    output_values_.push_back(id);
    if (values_[size_t(id)].runtime) values_[size_t(owner(id))].last = end;
  }
}

namespace {

struct ArenaBlock {
  int id;
  int first, last;  // steps the block is alive at (fed inputs from -1)
  uint64_t size;
  uint64_t offset = 0;
};

// Greedy by size: each block takes the lowest offset free during its life.
// Placed blocks are listed per step they are alive at, so a block only meets
// the blocks that share a step with it (linear for chains; a wide graph costs
// the sum over steps of the squared number of live blocks).
uint64_t place_greedy_by_size(std::vector<ArenaBlock>& blocks, size_t steps) {
  std::vector<size_t> by_size(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) by_size[i] = i;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return blocks[a].size > blocks[b].size; });
  std::vector<std::vector<size_t>> alive_at(steps + 2);  // step t at t + 1
  std::vector<size_t> seen_mark(blocks.size(), SIZE_MAX);
  uint64_t arena = 0;
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  for (size_t bi : by_size) {
    ArenaBlock& b = blocks[bi];
    busy.clear();
    for (int t = b.first; t <= b.last; ++t) {
      for (size_t pi : alive_at[size_t(t + 1)]) {
        if (seen_mark[pi] == bi) continue;
        seen_mark[pi] = bi;
        busy.push_back({blocks[pi].offset, blocks[pi].offset + blocks[pi].size});
      }
    }
    std::sort(busy.begin(), busy.end());
    uint64_t at = 0;
    for (auto [lo, hi] : busy) {
      if (lo >= at + b.size) break;
      at = std::max(at, hi);
    }
    b.offset = at;
    arena = std::max(arena, at + b.size);
    for (int t = b.first; t <= b.last; ++t) alive_at[size_t(t + 1)].push_back(bi);
  }
  return arena;
}

// In step order over a free list: blocks whose life has ended are freed
// (coalescing with their neighbours, or lowering the top), each new block
// takes the smallest free run that holds it (lowest offset among equals) or
// grows the top. O(n log n) whatever the graph's width.
uint64_t place_in_step_order(std::vector<ArenaBlock>& blocks) {
  std::vector<size_t> by_first, by_last;
  for (size_t i = 0; i < blocks.size(); ++i) {
    blocks[i].offset = 0;
    if (blocks[i].size == 0) continue;  // holds nothing; offset 0
    by_first.push_back(i);
    by_last.push_back(i);
  }
  std::stable_sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) {
    if (blocks[a].first != blocks[b].first) return blocks[a].first < blocks[b].first;
    return blocks[a].size > blocks[b].size;
  });
  std::stable_sort(by_last.begin(), by_last.end(),
                   [&](size_t a, size_t b) { return blocks[a].last < blocks[b].last; });
  std::map<uint64_t, uint64_t> free_at;                  // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> free_by_size;  // (size, offset)
  uint64_t top = 0, arena = 0;
  auto release = [&](uint64_t off, uint64_t size) {
    auto next = free_at.lower_bound(off);
    if (next != free_at.end() && next->first == off + size) {
      size += next->second;
      free_by_size.erase({next->second, next->first});
      next = free_at.erase(next);
    }
    if (next != free_at.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        off = prev->first;
        size += prev->second;
        free_by_size.erase({prev->second, prev->first});
        free_at.erase(prev);
      }
    }
    if (off + size == top) {
      top = off;
      return;
    }
    free_at[off] = size;
    free_by_size.insert({size, off});
  };
  size_t freed = 0;
  for (size_t bi : by_first) {
    ArenaBlock& b = blocks[bi];
    for (; freed < by_last.size() && blocks[by_last[freed]].last < b.first; ++freed)
      release(blocks[by_last[freed]].offset, blocks[by_last[freed]].size);
    auto it = free_by_size.lower_bound({b.size, 0});
    if (it == free_by_size.end()) {
      b.offset = top;
      top += b.size;
      arena = std::max(arena, top);
      continue;
    }
    auto [size, off] = *it;
    free_by_size.erase(it);
    free_at.erase(off);
    b.offset = off;
    if (size > b.size) {
      free_at[off + b.size] = size - b.size;
      free_by_size.insert({size - b.size, off + b.size});
    }
  }
  return arena;
}

// Where the arena's values weigh most, for its allocation errors: the step at
// which the most bytes are live, its node, and the largest value live there.
std::string arena_peak(const std::vector<ArenaBlock>& blocks,
                       const std::vector<Session::Step>& steps,
                       const std::vector<Session::Value>& values, const onnx::GraphProto& graph) {
  if (blocks.empty() || steps.empty()) return "no intermediate values";
  std::vector<int64_t> delta(steps.size() + 1, 0);  // bytes that begin (end) living at a step
  for (const ArenaBlock& b : blocks) {
    delta[size_t(std::clamp(b.first, 0, int(steps.size())))] += int64_t(b.size);
    delta[size_t(std::clamp(b.last + 1, 0, int(steps.size())))] -= int64_t(b.size);
  }
  std::vector<uint64_t> live(steps.size(), 0);
  int64_t now = 0;
  for (size_t t = 0; t < steps.size(); ++t) live[t] = uint64_t(now += delta[t]);
  const size_t peak = size_t(std::max_element(live.begin(), live.end()) - live.begin());
  const ArenaBlock* largest = nullptr;
  size_t count = 0;
  for (const ArenaBlock& b : blocks) {
    if (std::max(b.first, 0) > int(peak) || b.last < int(peak)) continue;
    ++count;
    if (largest == nullptr || b.size > largest->size) largest = &b;
  }
  const onnx::NodeProto& n = graph.node(steps[peak].node);
  std::string s = "at node '" + n.name() + "' (" + n.op_type() + "), step " +
                  std::to_string(peak + 1) + " of " + std::to_string(steps.size()) + ", " +
                  std::to_string(count) + " values hold " + std::to_string(live[peak]) + " bytes";
  if (largest != nullptr) {
    s += ", the largest '" + values[size_t(largest->id)].name + "' " +
         std::to_string(largest->size) + " bytes";
  }
  return s;
}

}  // namespace

// Two placements: greedy by size where its cost (the sum over steps of the
// squared number of live blocks) is small, and always the near-linear one in
// step order; the smaller arena wins.
Status Session::place_arena() {
  // Bound values (set_bound_values) live in the caller's buffers: a fed input
  // the kernels only read, or an output a step writes.
  bound_uses_.clear();
  has_bound_ = false;
  if (!bound_names_.empty()) {
    std::vector<bool> is_output(values_.size(), false);
    for (int id : output_values_) is_output[size_t(id)] = true;
    for (int id = 0; id < int(values_.size()); ++id) {
      Value& v = values_[size_t(id)];
      if (!v.runtime || v.alias_of >= 0 || v.constant || !bound_names_.count(v.name)) continue;
      const bool fed = v.is_input && v.def < 0 && v.desc.dtype != kBool;
      const bool written = !v.is_input && v.def >= 0 && is_output[size_t(id)];
      v.bound = fed || written;
      has_bound_ = has_bound_ || v.bound;
      if (v.bound) ++stats_.bound_values;
    }
  }
  std::vector<ArenaBlock> blocks;
  for (int id = 0; id < int(values_.size()); ++id) {
    Value& v = values_[size_t(id)];
    if (!v.runtime || v.alias_of >= 0 || v.bound) continue;
    uint64_t bytes = uint64_t(shape_numel(v.desc.shape)) * dtype_size(v.desc.dtype);
    stats_.value_bytes += bytes;
    // Fed inputs (def -1) are alive from before the first step.
    blocks.push_back({id, v.def, std::max(v.last, v.def), (bytes + 63) / 64 * 64});
  }
  std::vector<int64_t> live_delta(steps_.size() + 3, 0);
  for (const ArenaBlock& b : blocks) {
    ++live_delta[size_t(b.first + 1)];
    --live_delta[size_t(b.last + 2)];
  }
  constexpr uint64_t kGreedyBudget = uint64_t(1) << 26;
  uint64_t cost = 0;
  int64_t live = 0;
  for (size_t t = 0; t + 1 < live_delta.size() && cost <= kGreedyBudget; ++t) {
    live += live_delta[t];
    cost += uint64_t(live) * uint64_t(live);
  }
  uint64_t arena = place_in_step_order(blocks);
  if (cost <= kGreedyBudget) {
    std::vector<ArenaBlock> greedy = blocks;
    uint64_t greedy_arena = place_greedy_by_size(greedy, steps_.size());
    if (greedy_arena <= arena) {
      blocks = std::move(greedy);
      arena = greedy_arena;
    }
  }
  stats_.arena_bytes = arena;
  // Kernel scratch that grows with the model's shapes (Kernel::scratch_bytes:
  // the workspace, or buffers a kernel allocates while it runs) is needed by
  // one kernel at a time: the largest is reserved with the arena.
  uint64_t scratch = 0;
  int scratch_node = -1;
  for (const Step& st : steps_) {
    const uint64_t b = st.kernel ? st.kernel->scratch_bytes() : 0;
    if (b > scratch) {
      scratch = b;
      scratch_node = st.node;
    }
  }
  std::string scratch_what;
  if (scratch_node >= 0) {
    const onnx::NodeProto& n = graph_->node(scratch_node);
    scratch_what = " and " + std::to_string(scratch) + " bytes of scratch for node '" + n.name() +
                   "' (" + n.op_type() + ")";
  }
  auto reserved =
      reserve_memory(saturating_add(arena, scratch),
                     "plan: the arena of the graph's intermediate values" + scratch_what);
  if (!reserved.ok()) {  // the peak is described only then: it walks every block
    return resource_exhausted(reserved.status().message() + " (" +
                              arena_peak(blocks, steps_, values_, *graph_) + ")");
  }
  arena_reserved_ = std::move(*reserved);
  arena_ = std::aligned_alloc(64, std::max<uint64_t>(64, arena));
  if (arena_ == nullptr) {
    return resource_exhausted("plan: cannot allocate the " + std::to_string(arena) +
                              "-byte arena of the graph's intermediate values (" +
                              arena_peak(blocks, steps_, values_, *graph_) + "; memory budget " +
                              std::to_string(memory_budget_bytes()) + " bytes)");
  }
  for (const ArenaBlock& b : blocks)
    values_[size_t(b.id)].ptr = static_cast<uint8_t*>(arena_) + b.offset;
  for (Value& v : values_) {
    if (v.runtime && v.alias_of >= 0) v.ptr = values_[size_t(v.alias_of)].ptr;
    if (v.constant) v.ptr = const_cast<void*>(v.constant->data());
  }
  for (Step& st : steps_) {
    for (int id : st.in) st.in_ptr.push_back(id < 0 ? nullptr : values_[size_t(id)].ptr);
    for (int id : st.out) st.out_ptr.push_back(id < 0 ? nullptr : values_[size_t(id)].ptr);
  }
  if (has_bound_) {
    auto root_of = [&](int id) {
      const int a = values_[size_t(id)].alias_of;
      return a >= 0 ? a : id;
    };
    for (int id = 0; id < int(values_.size()); ++id) {
      if (values_[size_t(id)].alias_of >= 0 && values_[size_t(root_of(id))].bound)
        bound_uses_.push_back({root_of(id), -1, false, id});
    }
    for (int s = 0; s < int(steps_.size()); ++s) {
      const Step& st = steps_[size_t(s)];
      for (int j = 0; j < int(st.in.size()); ++j) {
        if (st.in[size_t(j)] >= 0 && values_[size_t(root_of(st.in[size_t(j)]))].bound)
          bound_uses_.push_back({root_of(st.in[size_t(j)]), s, false, j});
      }
      for (int j = 0; j < int(st.out.size()); ++j) {
        if (st.out[size_t(j)] >= 0 && values_[size_t(root_of(st.out[size_t(j)]))].bound)
          bound_uses_.push_back({root_of(st.out[size_t(j)]), s, true, j});
      }
    }
  }
  return ok_status();
}

std::string Session::step_where(const Step& step) const {
  const auto& n = graph_->node(step.node);
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

// The message of a stopped run names the node that was about to run; a
// failure a kernel reports is returned as it is.
Status Session::run_steps(const RunLimits* limits) {
  Status failure;
  for (const Step& st : steps_) {
    if (st.empty) continue;  // every output has no element: nothing to compute
    if (limits != nullptr && limits->active() && limits->stop_now())
      return limits->stop_status(step_where(st));
    const KernelIO io{st.in_ptr, st.out_ptr, options_.pool, &workspace_, &failure, limits};
    const ActivityNote note("running", graph_->node(st.node));
    if (profile_ == nullptr) {
      st.kernel->run(io);
      OP_RETURN_IF_ERROR(failure);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    st.kernel->run(io);
    OP_RETURN_IF_ERROR(failure);
    OpProfile& p = (*profile_)[st.label ? st.label : graph_->node(st.node).op_type()];
    p.ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++p.calls;
  }
  return ok_status();
}

Result<std::vector<HostTensor>> Session::run(const std::map<std::string, Tensor>& inputs,
                                             const RunLimits* limits) {
  if (arena_ == nullptr) return invalid_argument("run: no plan (call plan() first)");
  if (has_bound_) {
    return invalid_argument(
        "run: this plan reads or writes values in caller buffers (set_bound_values); use "
        "run_bound");
  }
  for (const auto& [name, id] : fed_values_) {
    auto it = inputs.find(name);
    if (it == inputs.end()) return invalid_argument("run: input '" + name + "' is missing");
    const Value& v = values_[size_t(id)];
    if (it->second.dtype != v.desc.dtype || it->second.shape != v.desc.shape) {
      return invalid_argument("run: input '" + name + "' is " + dtype_name(it->second.dtype) +
                              shape_string(it->second.shape) + ", the plan expects " +
                              dtype_name(v.desc.dtype) + shape_string(v.desc.shape));
    }
    if (v.constant) {
      bool same = std::memcmp(v.constant->data(), it->second.data, it->second.nbytes()) == 0;
      if (!same && v.desc.dtype == kBool) {  // the pinned copy was canonicalised
        const auto* a = static_cast<const uint8_t*>(v.constant->data());
        const auto* b = static_cast<const uint8_t*>(it->second.data);
        same = true;
        for (size_t i = 0; same && i < it->second.nbytes(); ++i) same = (a[i] != 0) == (b[i] != 0);
      }
      if (!same) {
        return invalid_argument("run: input '" + name +
                                "' differs from the value the plan was built for; plan again");
      }
      continue;
    }
    if (it->second.nbytes()) std::memcpy(v.ptr, it->second.data, it->second.nbytes());
    if (v.desc.dtype == kBool) canonicalize_bools(v.ptr, it->second.nbytes());
  }
  OP_RETURN_IF_ERROR(run_steps(limits));
  std::vector<HostTensor> outs;
  for (int id : output_values_) {
    const Value& v = values_[size_t(id)];
    std::string what = "output '" + v.desc.name + "'";
    if (v.def >= 0 && size_t(v.def) < steps_.size()) {  // name the node that wrote it
      const onnx::NodeProto& n = graph_->node(steps_[size_t(v.def)].node);
      what = "node '" + n.name() + "' (" + n.op_type() + "): " + what;
    }
    OP_ASSIGN_OR_RETURN(auto t, HostTensor::try_allocate(v.desc.dtype, v.desc.shape, what));
    if (t.nbytes()) std::memcpy(t.mutable_data(), v.ptr, t.nbytes());
    outs.push_back(std::move(t));
  }
  return outs;
}

std::vector<Session::PlannedOutput> Session::planned_outputs() const {
  std::vector<PlannedOutput> outs;
  for (int id : output_values_) {
    const Value& v = values_[size_t(id)];
    outs.push_back({v.desc.dtype, v.desc.shape, v.constant});
  }
  return outs;
}

void Session::set_bound_values(std::set<std::string> names) { bound_names_ = std::move(names); }

bool Session::is_bound_in_place(std::string_view name) const {
  auto it = value_index_.find(name);
  return it != value_index_.end() && values_[size_t(it->second)].bound;
}

Status Session::point_bound_values(std::span<const void* const> inputs,
                                   std::span<void* const> outputs) {
  auto take = [&](Value& v, const void* p, const char* what) -> Status {
    if (p == nullptr) {
      return invalid_argument("run: " + std::string(what) + " '" + v.name +
                              "' is bound to the caller's buffer, and none was given");
    }
    if (reinterpret_cast<uintptr_t>(p) % std::max<size_t>(1, dtype_size(v.desc.dtype)) != 0) {
      return invalid_argument("run: the buffer of " + std::string(what) + " '" + v.name +
                              "' is not aligned to its " +
                              std::to_string(dtype_size(v.desc.dtype)) + "-byte elements");
    }
    v.ptr = const_cast<void*>(p);
    return ok_status();
  };
  for (size_t i = 0; i < inputs_.size(); ++i) {
    auto it = fed_values_.find(inputs_[i].name);
    if (it == fed_values_.end() || !values_[size_t(it->second)].bound) continue;
    OP_RETURN_IF_ERROR(
        take(values_[size_t(it->second)], i < inputs.size() ? inputs[i] : nullptr, "input"));
  }
  for (size_t i = 0; i < output_values_.size(); ++i) {
    Value& v = values_[size_t(output_values_[i])];
    if (!v.bound || v.is_input) continue;
    OP_RETURN_IF_ERROR(take(v, i < outputs.size() ? outputs[i] : nullptr, "output"));
  }
  for (const BoundUse& u : bound_uses_) {
    void* p = values_[size_t(u.root)].ptr;
    if (u.step < 0) {
      values_[size_t(u.slot)].ptr = p;
    } else {
      Step& st = steps_[size_t(u.step)];
      (u.out ? st.out_ptr : st.in_ptr)[size_t(u.slot)] = p;
    }
  }
  return ok_status();
}

Status Session::run_bound(std::span<const void* const> inputs, std::span<void* const> outputs,
                          const RunLimits* limits) {
  if (arena_ == nullptr) return invalid_argument("run: no plan (call plan() first)");
  if (has_bound_) OP_RETURN_IF_ERROR(point_bound_values(inputs, outputs));
  for (size_t i = 0; i < inputs_.size() && i < inputs.size(); ++i) {
    auto it = fed_values_.find(inputs_[i].name);
    if (it == fed_values_.end()) continue;
    const Value& v = values_[size_t(it->second)];
    size_t bytes = size_t(shape_numel(v.desc.shape)) * dtype_size(v.desc.dtype);
    if (v.constant || v.bound || bytes == 0) continue;
    if (v.ptr != inputs[i]) std::memcpy(v.ptr, inputs[i], bytes);
    if (v.desc.dtype == kBool) canonicalize_bools(v.ptr, bytes);  // arena memory, ours
  }
  OP_RETURN_IF_ERROR(run_steps(limits));
  for (size_t i = 0; i < output_values_.size() && i < outputs.size(); ++i) {
    const Value& v = values_[size_t(output_values_[i])];
    size_t bytes = size_t(shape_numel(v.desc.shape)) * dtype_size(v.desc.dtype);
    if (outputs[i] == nullptr || bytes == 0 || outputs[i] == v.ptr) continue;
    std::memmove(outputs[i], v.ptr, bytes);
  }
  return ok_status();
}

}  // namespace onnx_prepack::runtime
