// What the single-node model tests (tests/runtime/hostile_ops_test.cc,
// contrib_norm_test.cc, opset24_test.cc, attention_test.cc) share: a builder of
// one-node models, a fed tensor, planning and running a model on such feeds,
// and an error check by message parts.
// Header-only: it needs the runtime, which the testing library does not link.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::testing {

// A model of one node whose inputs and outputs are graph inputs, initializers
// and graph outputs, built in the order the node reads them. The default
// domain at `opset`; com.microsoft at version 1 when `ms_opset`. The node's
// domain is `domain` ("" = ONNX).
struct OneNodeModel {
  onnx::ModelProto m;
  onnx::GraphProto* g = nullptr;
  onnx::NodeProto* n = nullptr;

  OneNodeModel(const std::string& op, const std::string& name, const std::string& domain, int opset,
               bool ms_opset, int ir_version) {
    m.set_ir_version(ir_version);
    auto* onnx_opset = m.add_opset_import();
    onnx_opset->set_domain("");
    onnx_opset->set_version(opset);
    if (ms_opset) {
      auto* ms = m.add_opset_import();
      ms->set_domain("com.microsoft");
      ms->set_version(1);
    }
    g = m.mutable_graph();
    g->set_name(op);
    n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    if (!domain.empty()) n->set_domain(domain);
  }
  // A graph input feeding the node's next input; an empty name is an omitted
  // optional input.
  OneNodeModel& input(const std::string& name, int32_t dtype, const runtime::Shape& shape) {
    n->add_input(name);
    if (name.empty()) return *this;
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto* sh = tt->mutable_shape();
    for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
    return *this;
  }
  OneNodeModel& none() {
    n->add_input("");
    return *this;
  }
  // An int64 initializer feeding the node's next input.
  OneNodeModel& ints(const std::string& name, const std::vector<int64_t>& v, bool scalar = false) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(int64_t(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    n->add_input(name);
    return *this;
  }
  // An initializer of raw bytes feeding the node's next input.
  OneNodeModel& raw(const std::string& name, int32_t dtype, const runtime::Shape& shape,
                    const std::string& bytes) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(dtype);
    for (int64_t d : shape) t->add_dims(d);
    t->set_raw_data(bytes);
    n->add_input(name);
    return *this;
  }
  // The node's next output, a graph output unless the name is empty (unused).
  OneNodeModel& output(const std::string& name) {
    if (!name.empty()) g->add_output()->set_name(name);
    n->add_output(name);
    return *this;
  }
  onnx::AttributeProto* attr(const std::string& name, onnx::AttributeProto::AttributeType t) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  }
  OneNodeModel& attr_int(const std::string& name, int64_t v) {
    attr(name, onnx::AttributeProto::INT)->set_i(v);
    return *this;
  }
  OneNodeModel& attr_float(const std::string& name, float v) {
    attr(name, onnx::AttributeProto::FLOAT)->set_f(v);
    return *this;
  }
  OneNodeModel& attr_ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = attr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  OneNodeModel& attr_string(const std::string& name, const std::string& v) {
    attr(name, onnx::AttributeProto::STRING)->set_s(v);
    return *this;
  }
};

// A fed input: type, shape and bytes.
struct Fed {
  int32_t dtype;
  runtime::Shape shape;
  const void* data;
};

// Plans (and runs, when planning succeeds) `model` on `feeds`; the first
// failure, or the outputs. `pin_values`: every fed value is known at plan time
// (GroupQueryAttention's total_sequence_length must be).
inline Result<std::vector<runtime::HostTensor>> plan_and_run_model(
    const onnx::ModelProto& model, const std::map<std::string, Fed>& feeds,
    bool pin_values = false) {
  using runtime::Session;
  auto fm = std::shared_ptr<const format::Model>(format::Model::from_proto(model, "."));
  OP_ASSIGN_OR_RETURN(auto s, Session::create(fm, {}));
  std::map<std::string, runtime::Tensor> run_feeds;
  for (const auto& [name, f] : feeds)
    run_feeds[name] = runtime::Tensor{f.dtype, f.shape, const_cast<void*>(f.data)};
  std::map<std::string, Session::Feed> plan_feeds;
  for (const auto& [name, t] : run_feeds)
    plan_feeds[name] = Session::Feed{t.dtype, t.shape, pin_values ? &run_feeds[name] : nullptr};
  OP_RETURN_IF_ERROR(plan_status(s->plan(plan_feeds)));
  return s->run(run_feeds);
}

// Expects a failure whose message holds every one of `parts`.
inline void expect_error(const Result<std::vector<runtime::HostTensor>>& r,
                         const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok()) << "expected an error with '" << parts.front() << "'";
  const std::string& msg = r.status().message();
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
}

template <typename T>
std::vector<T> values(const runtime::HostTensor& t) {
  return std::vector<T>(t.as<T>(), t.as<T>() + t.numel());
}

}  // namespace onnx_prepack::testing
