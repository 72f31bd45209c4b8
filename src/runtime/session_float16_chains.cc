// SessionOptions::float16_float_chains: which FLOAT16 values the second
// planning pass holds as float. ONNX rounds every FLOAT16 output to float16;
// ONNX Runtime's CPU provider on x86 has float16 kernels for the operators
// that move data (Concat, Reshape, Transpose, ...) and a few others
// (LayerNormalization), not for most that compute (Conv, Relu, Sigmoid,
// MaxPool, Resize, ...): it wraps those in Casts to and from float, then
// removes the Cast pairs between two such nodes, so its intermediates stay
// float (docs/decisions.md, "FLOAT16 intermediates"). The rules here follow
// that graph rewrite, taking every computing operator but those listed below
// as one without a float16 kernel:
//  - a node "runs in float" when it has a float16 input computed at run time
//    and computes values (any operator but those with a float16 kernel below,
//    those that decide their own 16-bit types and those with a subgraph): the
//    first pass built it through the half adapter (half_adapter.h), or
//    natively (Resize);
//  - a node with a float16 kernel runs in float too when it sits alone
//    between such nodes: every float16 input produced by a node that runs in
//    float, every float16 output read only by such nodes and none a graph
//    output (ONNX Runtime forces those to float rather than cast around them);
//  - a FLOAT16 value stays float when its producer and all its readers run in
//    float and it is no graph output (an output keeps its declared type; the
//    value is then rounded for every reader, where ONNX Runtime still feeds
//    its float readers the float value).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/session.h"
#include "runtime/session_state.h"

namespace onnx_prepack::runtime {
namespace {

// Operators ONNX Runtime's CPU provider runs on float16 data as it is: those
// that move bytes, and LayerNormalization (a float16 kernel that computes in
// float inside: its input is rounded, its float statistics never leave it).
bool has_float16_kernel(const onnx::NodeProto& n) {
  static const std::set<std::string, std::less<>> kFloat16Kernels = {
      // data movers
      "Cast", "CastLike", "Concat", "DepthToSpace", "Expand", "Flatten", "Gather", "GatherElements",
      "GatherND", "Identity", "Reshape", "Shape", "Size", "Slice", "SpaceToDepth", "Split",
      "Squeeze", "Tile", "Transpose", "Unsqueeze",
      // computing
      "LayerNormalization"};
  return n.domain().empty() && kFloat16Kernels.count(n.op_type()) != 0;
}

bool has_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return true;
  }
  return false;
}

}  // namespace

std::set<std::string> Session::float16_chain_values() const {
  const auto& g = *graph_;
  std::map<std::string, int> producer;
  std::map<std::string, std::vector<int>> readers;
  for (int ni : order_) {
    for (const auto& o : g.node(ni).output()) {
      if (!o.empty()) producer[o] = ni;
    }
    for (const auto& in : node_inputs(ni)) {
      if (!in.empty()) readers[in].push_back(ni);
    }
  }
  const std::set<std::string> outputs(output_names_.begin(), output_names_.end());
  // A FLOAT16 value computed at run time (not a constant, not fed).
  auto computed_half = [&](const std::string& name) {
    auto it = value_index_.find(name);
    if (it == value_index_.end()) return false;
    const Value& v = values_[size_t(it->second)];
    return v.desc.dtype == kFloat16 && !v.constant && producer.count(name) != 0;
  };
  auto in_float = [&](const std::vector<bool>& runs, int ni) {
    return size_t(ni) < runs.size() && runs[size_t(ni)];
  };
  auto all_readers_in = [&](const std::vector<bool>& runs, const std::string& name) {
    auto it = readers.find(name);
    if (it == readers.end() || it->second.empty()) return false;
    for (int r : it->second) {
      if (!in_float(runs, r)) return false;
    }
    return true;
  };

  // Nodes that compute in float: the adapter's, and native ones that compute
  // values, unless ONNX Runtime has a float16 kernel for them.
  std::vector<bool> computes(size_t(g.node_size()), false);
  for (int ni : order_) {
    const auto& n = g.node(ni);
    if (has_float16_kernel(n)) continue;
    if (size_t(ni) < through_float_.size() && through_float_[size_t(ni)]) {
      computes[size_t(ni)] = true;
      continue;
    }
    const OpEntry* op = find_op(n.domain(), n.op_type());
    if (op == nullptr || op->own_half_types || has_subgraph(n)) continue;
    bool half_in = false;
    for (const auto& in : n.input()) half_in = half_in || (!in.empty() && computed_half(in));
    computes[size_t(ni)] = half_in;
  }
  std::vector<bool> runs = computes;
  for (int ni : order_) {
    const auto& n = g.node(ni);
    if (computes[size_t(ni)] || !has_float16_kernel(n)) continue;
    bool alone = true, any_in = false, any_out = false;
    for (const auto& in : n.input()) {
      if (in.empty()) continue;
      auto it = value_index_.find(in);
      if (it == value_index_.end() || values_[size_t(it->second)].desc.dtype != kFloat16) continue;
      any_in = true;
      // A float16 constant or graph input: ONNX Runtime keeps the node in float16.
      alone = alone && computed_half(in) && in_float(computes, producer.at(in));
    }
    for (const auto& o : n.output()) {
      if (o.empty() || !computed_half(o)) continue;
      any_out = true;
      alone = alone && outputs.count(o) == 0 && all_readers_in(computes, o);
    }
    if (alone && any_in && any_out) runs[size_t(ni)] = true;
  }

  std::set<std::string> chain;
  for (const auto& [name, p] : producer) {
    if (computed_half(name) && in_float(runs, p) && outputs.count(name) == 0 &&
        all_readers_in(runs, name))
      chain.insert(name);
  }
  return chain;
}

}  // namespace onnx_prepack::runtime
