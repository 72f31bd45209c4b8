#include "runtime/generate_graph.h"

#include <cstring>
#include <limits>

namespace onnx_prepack::runtime::gen {

Rng::Rng(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  s_ = h ^ (seed * 0x2545f4914f6cdd1dull + 0x9e3779b97f4a7c15ull);
}

uint64_t Rng::next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float Rng::uniform() { return float(next() >> 40) * (1.0f / 8388608.0f) - 1.0f; }

Result<std::unique_ptr<Graph>> Graph::create(const std::string& data_path,
                                             const std::string& data_location, uint64_t threshold) {
  std::unique_ptr<Graph> g(new Graph());
  g->threshold_ = threshold;
  g->location_ = data_location;
  if (!data_path.empty()) {
    auto w = base::AtomicFileWriter::create(data_path);
    if (!w.ok()) return w.status();
    g->data_ = std::make_unique<base::AtomicFileWriter>(std::move(*w));
  }
  return g;
}

onnx::NodeProto* Graph::node(const std::string& op, const std::string& name,
                             const std::vector<std::string>& in,
                             const std::vector<std::string>& out, const std::string& domain) {
  auto* n = graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

std::string Graph::op(const std::string& op, const std::string& name,
                      const std::vector<std::string>& in, const std::string& domain) {
  std::string out = name + "/output_0";
  node(op, name, in, {out}, domain);
  return out;
}

void Graph::attr(onnx::NodeProto* n, const std::string& key, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void Graph::attr(onnx::NodeProto* n, const std::string& key, float v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
void Graph::attr(onnx::NodeProto* n, const std::string& key, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

std::string Graph::constant_i64(const std::string& node_name, const std::string& out,
                                const std::vector<int64_t>& v, bool scalar) {
  auto* n = node("Constant", node_name, {}, {out});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(int64_t(v.size()));
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8));
  return out;
}

std::string Graph::constant_f32(const std::string& node_name, const std::string& out, float v) {
  auto* n = node("Constant", node_name, {}, {out});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
  return out;
}

namespace {
void value_info(onnx::ValueInfoProto* v, const std::string& name, int32_t type,
                const std::vector<Dim>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* sd = shape->add_dim();
    if (const auto* i = std::get_if<int64_t>(&d))
      sd->set_dim_value(*i);
    else
      sd->set_dim_param(std::get<std::string>(d));
  }
}
}  // namespace

void Graph::input(const std::string& name, int32_t type, const std::vector<Dim>& dims) {
  value_info(graph()->add_input(), name, type, dims);
}
void Graph::output(const std::string& name, int32_t type, const std::vector<Dim>& dims) {
  value_info(graph()->add_output(), name, type, dims);
}

Status Graph::tensor(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                     std::span<const uint8_t> bytes) {
  auto* t = graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
  weight_bytes_ += bytes.size();
  if (!data_ || bytes.size() < threshold_) {
    t->set_raw_data(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    return ok_status();
  }
  // 4096-aligned offsets, like the project's other writers (mmap-friendly).
  uint64_t pad = (4096 - data_->offset() % 4096) % 4096;
  OP_RETURN_IF_ERROR(data_->write_zeros(pad));
  const uint64_t offset = data_->offset();
  OP_RETURN_IF_ERROR(data_->write(bytes));
  external_bytes_ += bytes.size();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location_);
  kv("offset", std::to_string(offset));
  kv("length", std::to_string(bytes.size()));
  return ok_status();
}

Status Graph::floats(const std::string& name, const std::vector<int64_t>& dims,
                     const std::vector<float>& v) {
  return tensor(name, onnx::TensorProto::FLOAT, dims,
                {reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4});
}

Status Graph::finish(const std::string& model_path) {
  if (data_) {
    OP_RETURN_IF_ERROR(data_->commit());
    data_.reset();
  }
  std::string bytes;
  if (!m_.SerializeToString(&bytes)) {
    return invalid_argument(
        "the model's graph is over protobuf's 2 GiB limit; write it with "
        "external data");
  }
  return base::write_file_atomically(
      model_path, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

Result<uint64_t> checked_product(const std::vector<uint64_t>& v, const std::string& what) {
  uint64_t p = 1;
  for (uint64_t x : v) {
    if (x != 0 && p > std::numeric_limits<uint64_t>::max() / x) {
      return invalid_argument(what + ": the byte count overflows 64 bits");
    }
    p *= x;
  }
  return p;
}

}  // namespace onnx_prepack::runtime::gen
