// Session::fold_transposes: the plan's Transpose steps are cancelled against
// their inverses, merged with the Transpose they feed, and pushed down through
// steps that commute with them (elementwise operators, Concat) so that the
// pairs of NHWC exports meet. Runs on the built steps, before the fusion
// passes (so the elementwise chains it leaves in NCHW still fuse). A step it
// changes is rebuilt by its operator's builder for the new shapes, and the
// rewrite is dropped when the builder does not give exactly the expected
// output; a rewrite never adds a Transpose (docs/runtime.md).
#include "runtime/transpose_folding.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

#include "runtime/half_adapter.h"
#include "runtime/session.h"
#include "runtime/session_state.h"

namespace onnx_prepack::runtime {

Perm compose_perms(const Perm& first, const Perm& second) {
  // z = T_second(T_first(x)): z's axis i is y's axis second[i], x's axis first[second[i]].
  Perm c(second.size());
  for (size_t i = 0; i < second.size(); ++i) c[i] = first[size_t(second[i])];
  return c;
}

Perm inverse_perm(const Perm& p) {
  Perm q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[size_t(p[i])] = int64_t(i);
  return q;
}

bool is_identity_perm(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != int64_t(i)) return false;
  }
  return true;
}

std::vector<int64_t> permute_shape(const std::vector<int64_t>& shape, const Perm& p) {
  std::vector<int64_t> out(p.size());
  for (size_t i = 0; i < p.size(); ++i) out[i] = shape[size_t(p[i])];
  return out;
}

LayoutRole layout_role(std::string_view domain, std::string_view op_type) {
  if (!domain.empty() && domain != "ai.onnx") return LayoutRole::kNone;
  // Each output element is a function of the elements at the same index alone.
  static constexpr std::string_view kUnary[] = {"Relu",
                                                "LeakyRelu",
                                                "Elu",
                                                "Selu",
                                                "Celu",
                                                "Sigmoid",
                                                "HardSigmoid",
                                                "HardSwish",
                                                "Tanh",
                                                "Softplus",
                                                "Softsign",
                                                "Mish",
                                                "Gelu",
                                                "ThresholdedRelu",
                                                "Shrink",
                                                "Clip",
                                                "Abs",
                                                "Neg",
                                                "Sign",
                                                "Exp",
                                                "Log",
                                                "Sqrt",
                                                "Reciprocal",
                                                "Floor",
                                                "Ceil",
                                                "Round",
                                                "Sin",
                                                "Cos",
                                                "Tan",
                                                "Asin",
                                                "Acos",
                                                "Atan",
                                                "Sinh",
                                                "Cosh",
                                                "Asinh",
                                                "Acosh",
                                                "Atanh",
                                                "Erf",
                                                "IsNaN",
                                                "IsInf",
                                                "Not",
                                                "BitwiseNot",
                                                "Cast",
                                                "QuantizeLinear",
                                                "DequantizeLinear"};
  static constexpr std::string_view kBroadcast[] = {
      "Add",         "Sub",        "Mul",      "Div",  "Pow",
      "Mod",         "Max",        "Min",      "Sum",  "Mean",
      "PRelu",       "Equal",      "Greater",  "Less", "GreaterOrEqual",
      "LessOrEqual", "And",        "Or",       "Xor",  "BitwiseAnd",
      "BitwiseOr",   "BitwiseXor", "BitShift", "Where"};
  for (std::string_view u : kUnary) {
    if (u == op_type) return LayoutRole::kUnary;
  }
  for (std::string_view b : kBroadcast) {
    if (b == op_type) return LayoutRole::kBroadcast;
  }
  if (op_type == "Concat") return LayoutRole::kConcat;
  if (op_type == "Pad") return LayoutRole::kPad;
  return LayoutRole::kNone;
}

bool transpose_folding_disabled_by_env() {
  static const bool off = [] {
    const char* f = std::getenv("ONNX_PREPACK_TRANSPOSE_FOLDING");
    return f != nullptr && std::strcmp(f, "0") == 0;
  }();
  return off;
}

namespace {

using Value = Session::Value;
using Step = Session::Step;

// What the pass needs of the session: its plan records and three services.
struct FoldContext {
  std::vector<Value>& values;
  std::vector<Step>& steps;
  const onnx::GraphProto& graph;
  std::vector<bool> is_output;                       // by value id; values the pass adds are none
  int64_t fold_limit_bytes;                          // largest constant the pass transposes
  std::function<int(const std::string&)> add_value;  // a fresh, uniquely named value
  // The node's kernel for these inputs, or null unless it has one output of
  // exactly `dtype` and `shape`, no alias and no known value.
  std::function<std::unique_ptr<Kernel>(
      const onnx::NodeProto&, const std::vector<const ValueDesc*>&, int32_t, const Shape&)>
      build;
  std::function<Status(Kernel&, void*, void*)> run_now;  // one input, one output
};

bool is_transpose_node(const onnx::NodeProto& n) {
  return n.op_type() == "Transpose" && (n.domain().empty() || n.domain() == "ai.onnx");
}

// The perm a Transpose node applies to an input of rank `rank` (reversed axes
// without the attribute).
Perm node_perm(const onnx::NodeProto& n, size_t rank) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "perm") return Perm(a.ints().begin(), a.ints().end());
  }
  Perm p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = int64_t(rank - 1 - i);
  return p;
}

onnx::AttributeProto* find_or_add_attr(onnx::NodeProto& n, const std::string& name) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.name() == name) return &a;
  }
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  return a;
}

// A Transpose node by `perm` named `name` (for messages), one input, one output.
onnx::NodeProto transpose_node(const std::string& name, const Perm& perm) {
  onnx::NodeProto n;
  n.set_op_type("Transpose");
  n.set_name(name);
  n.add_input("x");
  n.add_output("y");
  onnx::AttributeProto* a = find_or_add_attr(n, "perm");
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : perm) a->add_ints(v);
  return n;
}

class Folder {
 public:
  explicit Folder(FoldContext& c) : c_(c) {
    perms_.resize(c_.steps.size());
    dead_.assign(c_.steps.size(), false);
    for (size_t si = 0; si < c_.steps.size(); ++si) {
      if (is_transpose(c_.steps[si])) {
        perms_[si] = node_perm(c_.graph.node(c_.steps[si].node),
                               c_.values[size_t(c_.steps[si].in[0])].desc.shape.size());
      }
    }
  }

  // Rewrites until none applies; a bound keeps a pathological graph finite.
  void run() {
    const size_t cap = 64 * c_.steps.size() + 64;
    for (size_t round = 0; round < cap; ++round) {
      index();
      bool changed = false;
      for (int si = 0; si < int(c_.steps.size()) && !changed; ++si) {
        if (!dead_[size_t(si)] && !perms_[size_t(si)].empty()) changed = cancel(si);
      }
      for (int si = 0; si < int(c_.steps.size()) && !changed; ++si) {
        if (!dead_[size_t(si)] && !perms_[size_t(si)].empty()) changed = push(si);
      }
      compact();
      if (!changed) break;
    }
  }

  bool is_transpose(const Step& st) const {
    return st.kernel != nullptr && st.label == nullptr && st.in.size() == 1 && st.out.size() == 1 &&
           st.in[0] >= 0 && st.out[0] >= 0 && is_transpose_node(c_.graph.node(st.node));
  }

 private:
  // Readers and writers of every value, from the live steps.
  void index() {
    const size_t n = c_.values.size();
    c_.is_output.resize(n, false);
    readers_.assign(n, {});
    aliased_.assign(n, false);
    for (const Value& v : c_.values) {
      if (v.alias_of >= 0) aliased_[size_t(v.alias_of)] = true;
    }
    for (int si = 0; si < int(c_.steps.size()); ++si) {
      if (dead_[size_t(si)]) continue;
      for (int id : c_.steps[size_t(si)].in) {
        if (id < 0) continue;
        auto& r = readers_[size_t(id)];
        if (r.empty() || r.back() != si) r.push_back(si);
      }
      for (int id : c_.steps[size_t(si)].out) {
        if (id >= 0) c_.values[size_t(id)].def = si;
      }
    }
  }

  // A graph output, or storage another value shares: its layout stays.
  bool pinned(int id) const {
    return c_.is_output[size_t(id)] || aliased_[size_t(id)] || c_.values[size_t(id)].alias_of >= 0;
  }

  // A step that reads outer-scope values for a subgraph (If, Loop, Scan).
  bool reads_implicit(int si) const {
    const Step& st = c_.steps[size_t(si)];
    return int(st.in.size()) > c_.graph.node(st.node).input_size();
  }

  void remove(int si) {
    dead_[size_t(si)] = true;
    for (int id : c_.steps[size_t(si)].out) {
      if (id < 0) continue;
      c_.values[size_t(id)].runtime = false;
      c_.values[size_t(id)].def = -1;
    }
  }

  void redirect(int from, int to) {
    for (int si : readers_[size_t(from)]) {
      for (int& id : c_.steps[size_t(si)].in) {
        if (id == from) id = to;
      }
    }
  }

  void compact() {
    size_t keep = 0;
    for (size_t si = 0; si < c_.steps.size(); ++si) {
      if (dead_[si]) continue;
      if (keep != si) {
        c_.steps[keep] = std::move(c_.steps[si]);
        perms_[keep] = std::move(perms_[si]);
      }
      ++keep;
    }
    c_.steps.resize(keep);
    perms_.resize(keep);
    dead_.assign(keep, false);
  }

  // Transpose t against what reads it: an identity perm goes; a reader that
  // undoes it reads t's input instead; a reader that permutes again, when it
  // is t's only use, becomes one Transpose of t's input.
  bool cancel(int t) {
    const int x = c_.steps[size_t(t)].in[0], y = c_.steps[size_t(t)].out[0];
    const Perm p = perms_[size_t(t)];
    if (!c_.values[size_t(x)].runtime) return false;
    auto no_implicit_readers = [&](int id) {
      return std::none_of(readers_[size_t(id)].begin(), readers_[size_t(id)].end(),
                          [&](int si) { return reads_implicit(si); });
    };
    if (is_identity_perm(p)) {
      if (pinned(y) || !no_implicit_readers(y)) return false;
      redirect(y, x);
      remove(t);
      return true;
    }
    const std::vector<int> readers = readers_[size_t(y)];
    for (int r : readers) {
      if (perms_[size_t(r)].empty() || dead_[size_t(r)]) continue;
      const int z = c_.steps[size_t(r)].out[0];
      const Perm c = compose_perms(p, perms_[size_t(r)]);
      if (is_identity_perm(c)) {
        if (pinned(z) || !no_implicit_readers(z)) continue;
        redirect(z, x);
        remove(r);
        if (readers.size() == 1 && !pinned(y)) remove(t);
        return true;
      }
      if (readers.size() != 1 || pinned(y)) continue;
      const Value& xv = c_.values[size_t(x)];
      ValueDesc xd = xv.desc;
      xd.value = nullptr;
      const Value& zv = c_.values[size_t(z)];
      auto k = c_.build(transpose_node(c_.graph.node(c_.steps[size_t(r)].node).name(), c), {&xd},
                        zv.desc.dtype, zv.desc.shape);
      if (k == nullptr) continue;
      c_.steps[size_t(r)].kernel = std::move(k);
      c_.steps[size_t(r)].in = {x};
      perms_[size_t(r)] = c;
      remove(t);
      return true;
    }
    return false;
  }

  // Constant `id` broadcast to rank `rank` (leading ones), transposed by `perm`
  // now; none when it is too large or cannot be allocated.
  std::optional<HostTensor> transposed_constant(int id, const Perm& perm, size_t rank) {
    const Value& v = c_.values[size_t(id)];
    const Shape& s = v.desc.shape;
    const uint64_t bytes = uint64_t(shape_numel(s)) * dtype_size(v.desc.dtype);
    if (bytes > uint64_t(std::max<int64_t>(0, c_.fold_limit_bytes))) return std::nullopt;
    Shape padded(rank - s.size(), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    const HostTensor src =
        HostTensor::borrow(v.desc.dtype, padded, v.constant->data(), v.constant->keep_alive());
    const Tensor view = src.view();
    ValueDesc d;
    d.dtype = v.desc.dtype;
    d.shape = padded;
    d.name = v.name;
    d.value = &view;
    const Shape out_shape = permute_shape(padded, perm);
    auto k = c_.build(transpose_node("transpose folding of '" + v.name + "'", perm), {&d},
                      v.desc.dtype, out_shape);
    if (k == nullptr) return std::nullopt;
    auto out = HostTensor::try_allocate(v.desc.dtype, out_shape,
                                        "transpose folding: constant '" + v.name + "'");
    if (!out.ok()) return std::nullopt;
    if (!c_.run_now(*k, const_cast<void*>(src.data()), out->mutable_data()).ok())
      return std::nullopt;
    return std::move(*out);
  }

  // Pad's constant pads `id` ([begins, ends] of t's output axes) for t's input
  // axes: output axis i is input axis perm[i].
  std::optional<HostTensor> remapped_pads(int id, const Perm& perm) {
    const Value& v = c_.values[size_t(id)];
    const size_t rank = perm.size();
    if (!v.constant || v.desc.dtype != kInt64 || v.desc.shape.size() != 1 ||
        v.desc.shape[0] != int64_t(2 * rank))
      return std::nullopt;
    auto out =
        HostTensor::try_allocate(kInt64, v.desc.shape, "transpose folding: pads '" + v.name + "'");
    if (!out.ok()) return std::nullopt;
    const int64_t* in = static_cast<const int64_t*>(v.constant->data());
    int64_t* o = static_cast<int64_t*>(out->mutable_data());
    for (size_t i = 0; i < rank; ++i) {
      o[size_t(perm[i])] = in[i];
      o[rank + size_t(perm[i])] = in[rank + i];
    }
    return std::move(*out);
  }

  // Transpose t (x -> y) read by one step e that commutes with it: e reads x
  // (its other data operands transposed back: constants now, the outputs of
  // Transposes by the same perm through their inputs) and writes w', and t
  // moves after it, w' -> w.
  bool push(int t) {
    const int x = c_.steps[size_t(t)].in[0], y = c_.steps[size_t(t)].out[0];
    const Perm p = perms_[size_t(t)];
    const size_t rank = p.size();
    if (!c_.values[size_t(x)].runtime) return false;
    if (pinned(y) || readers_[size_t(y)].size() != 1) return false;
    const int e = readers_[size_t(y)][0];
    const Step& es = c_.steps[size_t(e)];
    if (!perms_[size_t(e)].empty() || es.kernel == nullptr || es.label != nullptr) return false;
    const onnx::NodeProto& node = c_.graph.node(es.node);
    const LayoutRole role = layout_role(node.domain(), node.op_type());
    if (role == LayoutRole::kNone || reads_implicit(e)) return false;
    if (es.out.size() != 1 || es.out[0] < 0) return false;
    const int w = es.out[0];
    const ValueDesc wd = c_.values[size_t(w)].desc;
    if (c_.values[size_t(w)].alias_of >= 0 || wd.model_dtype != kUndefined) return false;
    if (wd.shape.size() != rank) return false;
    const bool same_shape = role != LayoutRole::kConcat && role != LayoutRole::kPad;
    if (same_shape && wd.shape != c_.values[size_t(y)].desc.shape) return false;
    const Perm inv = inverse_perm(p);

    std::vector<int> ins = es.in;
    std::vector<std::optional<HostTensor>> fresh(ins.size());
    std::vector<int> sources;  // Transposes whose inputs e now reads
    for (size_t k = 0; k < ins.size(); ++k) {
      const int id = es.in[k];
      if (id < 0) continue;
      if (role == LayoutRole::kPad && k == 1) {  // pads: [begin per axis, end per axis]
        fresh[k] = remapped_pads(id, p);
        if (!fresh[k]) return false;
        continue;
      }
      if (role == LayoutRole::kPad && k >= 3) return false;  // axes: not remapped
      const bool data = (role != LayoutRole::kUnary && role != LayoutRole::kPad) || k == 0;
      const Value& v = c_.values[size_t(id)];
      if (!data) {  // a parameter: one value, read the same in any layout
        if (id == y || shape_numel(v.desc.shape) > 1) return false;
        continue;
      }
      if (id == y) {
        ins[k] = x;
        continue;
      }
      const Shape& s = v.desc.shape;
      if (v.desc.model_dtype != kUndefined || s.size() > rank) return false;
      if (role == LayoutRole::kConcat && s.size() != rank) return false;
      if (std::all_of(s.begin(), s.end(), [](int64_t d) { return d == 1; })) continue;
      if (v.constant) {
        fresh[k] = transposed_constant(id, inv, rank);
        if (!fresh[k]) return false;
        continue;
      }
      const int d = v.def;
      if (v.runtime && v.alias_of < 0 && d >= 0 && !dead_[size_t(d)] && perms_[size_t(d)] == p) {
        ins[k] = c_.steps[size_t(d)].in[0];
        sources.push_back(d);
        continue;
      }
      return false;
    }

    onnx::NodeProto changed;  // e with its axis attributes remapped
    const onnx::NodeProto* rebuilt = &node;
    if (role == LayoutRole::kPad) {  // Pad-2's pads attribute
      for (const auto& a : node.attribute()) {
        if (a.name() != "pads") continue;
        if (a.ints_size() != int(2 * rank)) return false;
        Perm pads(2 * rank);
        for (size_t i = 0; i < rank; ++i) {
          pads[size_t(p[i])] = a.ints(int(i));
          pads[rank + size_t(p[i])] = a.ints(int(rank + i));
        }
        changed = node;
        onnx::AttributeProto* at = find_or_add_attr(changed, "pads");
        at->clear_ints();
        for (int64_t v : pads) at->add_ints(v);
        rebuilt = &changed;
      }
    }
    if (role == LayoutRole::kConcat) {
      int64_t axis = int64_t(rank);
      for (const auto& a : node.attribute()) {
        if (a.name() == "axis") axis = a.i();
      }
      if (axis < 0) axis += int64_t(rank);
      if (axis < 0 || axis >= int64_t(rank)) return false;
      changed = node;
      onnx::AttributeProto* a = find_or_add_attr(changed, "axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(p[size_t(axis)]);
      rebuilt = &changed;
    }

    // Descriptions of e's new inputs, with views of the known values.
    std::vector<ValueDesc> local(ins.size());
    std::vector<Tensor> views(ins.size());
    std::vector<const ValueDesc*> descs(ins.size(), nullptr);
    for (size_t k = 0; k < ins.size(); ++k) {
      if (ins[k] < 0) continue;
      const Value& v = c_.values[size_t(ins[k])];
      local[k] = v.desc;
      local[k].value = nullptr;
      if (fresh[k]) {
        local[k].dtype = fresh[k]->dtype();
        local[k].shape = fresh[k]->shape();
        local[k].is_initializer = false;
        views[k] = fresh[k]->view();
        local[k].value = &views[k];
      } else if (v.constant) {
        views[k] = v.constant->view();
        local[k].value = &views[k];
      }
      descs[k] = &local[k];
    }
    const Shape w2_shape = permute_shape(wd.shape, inv);
    auto ek = c_.build(*rebuilt, descs, wd.dtype, w2_shape);
    if (ek == nullptr) return false;
    ValueDesc w2d;
    w2d.dtype = wd.dtype;
    w2d.shape = w2_shape;
    auto tk = c_.build(transpose_node(c_.graph.node(c_.steps[size_t(t)].node).name(), p), {&w2d},
                       wd.dtype, wd.shape);
    if (tk == nullptr) return false;

    // Commit: new values, e rewritten, t after it.
    for (size_t k = 0; k < ins.size(); ++k) {
      if (!fresh[k]) continue;
      const int nid = c_.add_value(c_.values[size_t(ins[k])].name + "/transposed");
      Value& nv = c_.values[size_t(nid)];
      nv.desc.dtype = fresh[k]->dtype();
      nv.desc.shape = fresh[k]->shape();
      nv.constant = std::move(fresh[k]);
      ins[k] = nid;
    }
    const int w2 = c_.add_value(c_.values[size_t(w)].name + "/transposed");
    c_.values[size_t(w2)].desc.dtype = wd.dtype;
    c_.values[size_t(w2)].desc.shape = w2_shape;
    c_.values[size_t(w2)].runtime = true;
    Step moved;
    moved.node = c_.steps[size_t(t)].node;
    moved.kernel = std::move(tk);
    moved.in = {w2};
    moved.out = {w};
    Step& er = c_.steps[size_t(e)];
    er.kernel = std::move(ek);
    er.in = ins;
    er.out = {w2};
    remove(t);
    for (int d : sources) {
      const int o = c_.steps[size_t(d)].out[0];
      if (!pinned(o) && readers_[size_t(o)].size() == 1 && !dead_[size_t(d)]) remove(d);
    }
    c_.steps.insert(c_.steps.begin() + e + 1, std::move(moved));
    perms_.insert(perms_.begin() + e + 1, p);
    dead_.insert(dead_.begin() + e + 1, false);
    return true;
  }

  FoldContext& c_;
  std::vector<Perm> perms_;  // per step: its perm when it is a Transpose, else empty
  std::vector<bool> dead_;
  std::vector<std::vector<int>> readers_;  // per value: the steps that read it, in order
  std::vector<bool> aliased_;              // per value: another value shares its storage
};

}  // namespace

void Session::fold_transposes() {
  std::vector<bool> is_output(values_.size(), false);
  for (const auto& name : output_names_) is_output[size_t(value_index_.at(name))] = true;
  FoldContext c{values_,
                steps_,
                *graph_,
                std::move(is_output),
                options_.fold_limit_bytes,
                [this](const std::string& base) {
                  std::string name = base;
                  while (value_index_.count(name)) name += "'";
                  return add_value(name);
                },
                [this](const onnx::NodeProto& node, const std::vector<const ValueDesc*>& descs,
                       int32_t dtype, const Shape& shape) -> std::unique_ptr<Kernel> {
                  const OpEntry* op = find_op(node.domain(), node.op_type());
                  if (op == nullptr) return nullptr;
                  BuildContext ctx(node, opset_, descs, options_.weights);
                  ctx.set_subgraph_env(env_.get());
                  ctx.set_limits(plan_limits_);
                  if (!ctx.attr_status().ok()) return nullptr;
                  auto built = build_with_half_adapter(*op, ctx);
                  if (!ctx.attr_status().ok() || !built.ok() || *built == nullptr) return nullptr;
                  const auto& outs = ctx.outputs();
                  if (outs.size() != 1 || !outs[0].set || outs[0].value || outs[0].dtype != dtype ||
                      outs[0].shape != shape || outs[0].model_dtype != kUndefined ||
                      !ctx.aliases().empty())
                    return nullptr;
                  return std::move(*built);
                },
                [this](Kernel& k, void* in, void* out) {
                  Status failure;
                  void* ip[1] = {in};
                  void* op[1] = {out};
                  k.run(KernelIO{ip, op, options_.pool, &workspace_, &failure, plan_limits_});
                  return failure;
                }};
  Folder folder(c);
  auto count = [&] {
    return size_t(std::count_if(steps_.begin(), steps_.end(),
                                [&](const Step& st) { return folder.is_transpose(st); }));
  };
  const size_t before = count();
  if (options_.fold_transposes && !transpose_folding_disabled_by_env() && before > 0) {
    folder.run();
    renumber_step_outputs();
  }
  stats_.transposes = count();
  stats_.transposes_folded = before - stats_.transposes;
}

}  // namespace onnx_prepack::runtime
