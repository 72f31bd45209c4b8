// Small helpers for writing decoder FunctionProtos node by node (pack layer),
// shared by every format's decoder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::pack::fn {

inline onnx::NodeProto* node(onnx::FunctionProto& f, const char* op, std::vector<std::string> in,
                             const std::string& out) {
  onnx::NodeProto* n = f.add_node();
  n->set_op_type(op);
  for (auto& s : in) n->add_input(s);
  n->add_output(out);
  return n;
}

inline void int_attr(onnx::NodeProto* n, const char* name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void ints_attr(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void string_attr(onnx::NodeProto* n, const char* name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// A Constant node: INT64 [v.size()].
inline void constant_ints(onnx::FunctionProto& f, const std::string& out,
                          const std::vector<int64_t>& v) {
  auto* a = node(f, "Constant", {}, out)->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(int64_t(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

// A Constant node: a UINT8 scalar.
inline void constant_u8(onnx::FunctionProto& f, const std::string& out, uint8_t v) {
  auto* a = node(f, "Constant", {}, out)->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::UINT8);
  t->set_raw_data(std::string(1, char(v)));
}

inline void typed(onnx::FunctionProto& f, const std::string& name, int32_t elem) {
  auto* vi = f.add_value_info();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

}  // namespace onnx_prepack::pack::fn
