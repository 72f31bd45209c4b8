// Builders for small models used across the tests, and temp-dir helpers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::testing {

// A fresh empty folder under $TMPDIR, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims,
                               const std::vector<float>& values, bool raw = true);
std::vector<float> pseudo_random_floats(size_t n, uint32_t seed);
// A graph input of a tensor type with fixed dims; a graph output of a tensor type.
void add_tensor_input(onnx::GraphProto* g, const std::string& name,
                      const std::vector<int64_t>& dims,
                      int32_t elem_type = onnx::TensorProto::FLOAT);
void add_tensor_output(onnx::GraphProto* g, const std::string& name,
                       int32_t elem_type = onnx::TensorProto::FLOAT);

// y = relu(x @ W1 + b1) @ W2 + b2 with x [batch, in]; opset 13, IR 8 (loads in onnx 1.12).
onnx::ModelProto make_mlp(int in, int hidden, int out, uint32_t seed);

// A Loop ("runaway") whose trip count and condition are fed: inputs M (int64
// scalar), cond (bool scalar), a0 (float [1]); output out = a0 + the number of
// iterations (the body adds 1 and keeps cond). M = 2^62 with cond true runs
// for ever but for a deadline (issue 18). Opset 13, IR 8.
onnx::ModelProto make_runaway_loop();

void write_bytes(const std::string& path, const std::string& bytes);
std::string read_bytes(const std::string& path);
// Runs a shell command; returns its exit status and captures stdout+stderr.
int run_command(const std::string& cmd, std::string* output);

}  // namespace onnx_prepack::testing
