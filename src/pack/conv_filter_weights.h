// Which initializers are Conv filters the pack layer can pack: the one
// definition `compile` and `explain` share (the runtime asks per node).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/model.h"

namespace onnx_prepack::pack {

struct ConvFilterWeight {
  std::string name;
  std::string consumer;  // the first consuming node's name, else its op type
  int64_t group = 1;     // the consuming node's group (the blocks are per group)
  std::vector<int64_t> dims;
  bool graph_input = false;  // also a graph input: a fed value may override it
  int initializers = 0;      // top-level initializers of that name (1 unless duplicated)
  bool transposed = false;   // a ConvTranspose filter [C, M/group, k...]
};

// W (input 1) of every default-domain top-level Conv or ConvTranspose that
// names a FLOAT initializer of rank 3 to 5 with positive dims and a group
// dividing its first dim (Conv output, ConvTranspose input channels), in node
// order, one per (name, group, op).
std::vector<ConvFilterWeight> conv_filter_weights(const format::Model& model);

}  // namespace onnx_prepack::pack
