// A small graph builder for the generators of generate_decoder.cc and generate_encoder.cc:
// nodes with attributes, Constant nodes, graph inputs/outputs with named dims, and
// initializers that either stay inline or are streamed to an external data file as they are
// made (so a 3.5 GiB model is never whole in memory), then published atomically.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/atomic_file.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::runtime::gen {

// splitmix64 seeded from (seed, name): the same tensor gets the same values whatever the order
// the generator makes tensors in (the genai and optimum forms share their weights this way).
class Rng {
 public:
  Rng(uint64_t seed, const std::string& name);
  uint64_t next();
  float uniform();  // [-1, 1)
 private:
  uint64_t s_;
};

using Dim = std::variant<int64_t, std::string>;

class Graph {
 public:
  // `data_path` empty: every initializer stays inline. Otherwise initializers of at least
  // `threshold` bytes are written to `data_path` (a temporary file until finish()), located in
  // the model as `data_location` (its file name).
  static Result<std::unique_ptr<Graph>> create(const std::string& data_path,
                                               const std::string& data_location,
                                               uint64_t threshold = 1024);
  onnx::ModelProto& model() { return m_; }
  onnx::GraphProto* graph() { return m_.mutable_graph(); }

  onnx::NodeProto* node(const std::string& op, const std::string& name,
                        const std::vector<std::string>& in, const std::vector<std::string>& out,
                        const std::string& domain = "");
  // node() with the builders' output convention: one output named "<name>/output_0".
  std::string op(const std::string& op, const std::string& name, const std::vector<std::string>& in,
                 const std::string& domain = "");
  static void attr(onnx::NodeProto* n, const std::string& key, int64_t v);
  static void attr(onnx::NodeProto* n, const std::string& key, float v);
  static void attr(onnx::NodeProto* n, const std::string& key, const std::vector<int64_t>& v);

  // A Constant node named `node_name` whose output is `out`.
  std::string constant_i64(const std::string& node_name, const std::string& out,
                           const std::vector<int64_t>& v, bool scalar);
  std::string constant_f32(const std::string& node_name, const std::string& out, float v);

  void input(const std::string& name, int32_t type, const std::vector<Dim>& dims);
  void output(const std::string& name, int32_t type, const std::vector<Dim>& dims);

  // Initializers (the bytes are copied to the proto or to the data file).
  Status tensor(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                std::span<const uint8_t> bytes);
  Status floats(const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<float>& v);

  // Publishes the data file (when any) and then the model, both atomically.
  Status finish(const std::string& model_path);
  uint64_t weight_bytes() const { return weight_bytes_; }
  uint64_t external_bytes() const { return external_bytes_; }

 private:
  Graph() = default;
  onnx::ModelProto m_;
  std::unique_ptr<base::AtomicFileWriter> data_;
  std::string location_;
  uint64_t threshold_ = 1024;
  uint64_t weight_bytes_ = 0;
  uint64_t external_bytes_ = 0;
};

// Overflow-checked product of positive sizes; an error names `what`.
Result<uint64_t> checked_product(const std::vector<uint64_t>& v, const std::string& what);

}  // namespace onnx_prepack::runtime::gen
