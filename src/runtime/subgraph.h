// Subgraphs of If, Loop and Scan. A subgraph is planned as a Session of its
// own (Session::create_subgraph) whose inputs are its formal inputs followed by
// the outer-scope values it reads; the enclosing session passes those values to
// the node as implicit inputs (BuildContext::implicit_input, and KernelIO::in
// after the declared inputs), so they stay alive until the node has run.
// A subgraph is planned once, at its node's plan time, for the shapes seen
// then, and run any number of times without planning again.
#pragma once

#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "format/model.h"
#include "runtime/kernel.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime {

struct SubgraphEnv {
  std::shared_ptr<const format::Model> model;  // owns every subgraph's GraphProto
  int opset = 0;
  base::ThreadPool* pool = nullptr;
  int64_t fold_limit_bytes = 0;
  // The enclosing session prepares constant B weights: each subgraph then packs
  // its own (its initializers and the outer-scope initializers it reads) once,
  // when planned, instead of at every run.
  bool prepare_weights = false;
};

// Names a graph reads from outer scope (node inputs and graph outputs it does
// not define, recursively through nested subgraphs), sorted, without duplicates.
std::vector<std::string> outer_scope_names(const onnx::GraphProto& g);
// The same for all the subgraph attributes of one node (its implicit inputs).
std::vector<std::string> node_outer_scope_names(const onnx::NodeProto& node);
// Operators of `g` and its nested subgraphs that the registry lacks ("domain::Op"
// outside the default domain).
void collect_unsupported(const onnx::GraphProto& g, std::set<std::string>* out);

// A subgraph planned for one set of input shapes.
class Subgraph {
 public:
  // `formal`: one description per subgraph input (a known value pins it). The
  // outer-scope values come from ctx's implicit inputs.
  static Result<std::unique_ptr<Subgraph>> plan(const BuildContext& ctx,
                                                const onnx::GraphProto& graph,
                                                const std::vector<ValueDesc>& formal);

  const std::vector<Session::PlannedOutput>& outputs() const { return outputs_; }
  // Runs once. `formal` holds one pointer per formal input, `outer` one per
  // implicit input of the node (KernelIO::in after the declared inputs).
  // `limits` (may be null): the run's deadline and terminate flag.
  Status run(std::span<const void* const> formal, std::span<const void* const> outer,
             std::span<void* const> outputs, const RunLimits* limits = nullptr) const;
  std::string where() const { return where_; }

 private:
  std::unique_ptr<WeightPreparer> weights_;  // outlives session_
  std::unique_ptr<Session> session_;
  std::vector<int>
      outer_slot_;  // per outer input of the session: index in the node's implicit list
  size_t formal_count_ = 0;
  std::vector<Session::PlannedOutput> outputs_;
  std::string where_;
  mutable std::vector<const void*> bound_;
};

}  // namespace onnx_prepack::runtime
