#include "testing/test_models.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace onnx_prepack::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/onnx-prepack-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims,
                               const std::vector<float>& values, bool raw) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t.add_dims(d);
  if (raw) {
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  } else {
    for (float v : values) t.add_float_data(v);
  }
  return t;
}

void add_tensor_input(onnx::GraphProto* g, const std::string& name,
                      const std::vector<int64_t>& dims, int32_t elem_type) {
  auto* in = g->add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_tensor_output(onnx::GraphProto* g, const std::string& name, int32_t elem_type) {
  auto* o = g->add_output();
  o->set_name(name);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

std::vector<float> pseudo_random_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    x = float(int32_t(s % 2001) - 1000) / 1000.0f;
  }
  return v;
}

namespace {

void add_io(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
            std::vector<int64_t> dims, const std::string& dyn0,
            int32_t type = onnx::TensorProto::FLOAT) {
  auto* v = list->Add();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  tt->mutable_shape();  // a scalar has a shape of rank 0
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = tt->mutable_shape()->add_dim();
    if (i == 0 && !dyn0.empty())
      d->set_dim_param(dyn0);
    else
      d->set_dim_value(dims[i]);
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

}  // namespace

onnx::ModelProto make_mlp(int in, int hidden, int out, uint32_t seed) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("onnx-prepack-tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("mlp");
  add_io(g->mutable_input(), "x", {1, in}, "batch");
  add_io(g->mutable_output(), "y", {1, out}, "batch");
  *g->add_initializer() =
      float_tensor("W1", {in, hidden}, pseudo_random_floats(size_t(in) * hidden, seed));
  *g->add_initializer() =
      float_tensor("b1", {hidden}, pseudo_random_floats(size_t(hidden), seed + 1));
  *g->add_initializer() =
      float_tensor("W2", {hidden, out}, pseudo_random_floats(size_t(hidden) * out, seed + 2));
  *g->add_initializer() = float_tensor("b2", {out}, pseudo_random_floats(size_t(out), seed + 3));
  add_node(g, "MatMul", {"x", "W1"}, {"h0"});
  add_node(g, "Add", {"h0", "b1"}, {"h1"});
  add_node(g, "Relu", {"h1"}, {"h2"});
  add_node(g, "MatMul", {"h2", "W2"}, {"h3"});
  add_node(g, "Add", {"h3", "b2"}, {"y"});
  return m;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int run_command(const std::string& cmd, std::string* output) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = ::pclose(p);
  if (output) *output = out;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

onnx::ModelProto make_runaway_loop() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("onnx-prepack-tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("runaway_loop");
  add_io(g->mutable_input(), "M", {}, "", onnx::TensorProto::INT64);
  add_io(g->mutable_input(), "cond", {}, "", onnx::TensorProto::BOOL);
  add_io(g->mutable_input(), "a0", {1}, "");
  add_io(g->mutable_output(), "out", {1}, "");
  *g->add_initializer() = float_tensor("one", {1}, {1.0f});
  onnx::GraphProto body;
  body.set_name("body");
  add_io(body.mutable_input(), "i", {}, "", onnx::TensorProto::INT64);
  add_io(body.mutable_input(), "c", {}, "", onnx::TensorProto::BOOL);
  add_io(body.mutable_input(), "acc", {1}, "");
  add_io(body.mutable_output(), "c2", {}, "", onnx::TensorProto::BOOL);
  add_io(body.mutable_output(), "acc2", {1}, "");
  add_node(&body, "Identity", {"c"}, {"c2"});
  add_node(&body, "Add", {"acc", "one"}, {"acc2"});
  auto* loop = add_node(g, "Loop", {"M", "cond", "a0"}, {"out"});
  loop->set_name("runaway");
  auto* attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = std::move(body);
  return m;
}

}  // namespace onnx_prepack::testing
