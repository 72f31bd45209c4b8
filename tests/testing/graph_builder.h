// A small-graph builder for the plan-time fusion tests
// (tests/runtime/norm_gelu_fusion_test.cc, attention_fusion_test.cc): graph
// inputs and outputs, float and int64 initializers with generated names, and
// nodes named after their op whose one output is the node's name.
// Header-only: it needs the runtime's Shape, which the testing library does
// not link.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"
#include "testing/test_models.h"

namespace onnx_prepack::testing {

struct GraphBuilder {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  int counter = 0;

  GraphBuilder(const std::string& name, int opset) : g(m.mutable_graph()) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    g->set_name(name);
  }
  void input(const std::string& name, const runtime::Shape& s, int32_t dtype = runtime::kFloat) {
    add_tensor_input(g, name, {s.begin(), s.end()}, dtype);
  }
  void output(const std::string& name) { add_tensor_output(g, name); }
  // A float initializer of shape `s`, pseudo-random from `seed`.
  std::string init(const runtime::Shape& s, uint32_t seed) {
    const std::string name = "c" + std::to_string(counter++);
    auto v = pseudo_random_floats(size_t(runtime::shape_numel(s)), seed);
    *g->add_initializer() = float_tensor(name, s, v);
    return name;
  }
  // A float initializer of shape `s` (a scalar by default) filled with `v`.
  std::string scalar(float v, const runtime::Shape& s = {}) {
    const std::string name = "k" + std::to_string(counter++);
    *g->add_initializer() =
        float_tensor(name, s, std::vector<float>(size_t(runtime::shape_numel(s)), v));
    return name;
  }
  // A 1-D int64 initializer.
  std::string ints(const std::vector<int64_t>& v) {
    const std::string name = "i" + std::to_string(counter++);
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return name;
  }
  onnx::NodeProto* last() { return g->mutable_node(g->node_size() - 1); }
  // A node reading `in`; its output (and name) is `out`, or the op and a number.
  std::string node(const std::string& op, std::vector<std::string> in,
                   const std::string& out = "") {
    const std::string name = out.empty() ? op + std::to_string(counter++) : out;
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    n->add_output(name);
    return name;
  }
  // Attributes of the last node.
  void ints_attr(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = last()->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  void int_attr(const std::string& name, int64_t v) {
    auto* a = last()->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
};

}  // namespace onnx_prepack::testing
