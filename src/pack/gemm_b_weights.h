// Which initializers are GEMM B operands the pack layer can pack: the one
// definition `compile` and `explain` share (the runtime asks per node).
#pragma once

#include <string>
#include <vector>

#include "format/model.h"
#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::pack {

struct GemmBWeight {
  std::string name;
  std::string consumer;  // the first consuming node's name, else its op type
  kernels::PackSourceLayout layout = kernels::PackSourceLayout::kKN;
  int32_t data_type = 0;
  bool graph_input = false;  // also a graph input: a fed value may override it
  int initializers = 0;      // top-level initializers of that name (1 unless duplicated)
};

// B (input 1) of every default-domain top-level MatMul or Gemm that names a 2-D FLOAT or
// FLOAT16 initializer, in node order, one per (name, layout): a Gemm with transB != 0 reads
// the `nk` layout, everything else `kn`.
std::vector<GemmBWeight> gemm_b_weights(const format::Model& model);

}  // namespace onnx_prepack::pack
