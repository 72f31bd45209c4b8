#include "pack/gemm_b_weights.h"

#include <set>
#include <utility>

namespace onnx_prepack::pack {

std::vector<GemmBWeight> gemm_b_weights(const format::Model& model) {
  const onnx::GraphProto& g = model.proto().graph();
  std::set<std::string> inputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  std::vector<GemmBWeight> out;
  std::set<std::pair<std::string, int>> seen;
  for (const onnx::NodeProto& n : g.node()) {
    const bool matmul = n.op_type() == "MatMul";
    const bool gemm = n.op_type() == "Gemm";
    if (!(matmul || gemm) || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    if (n.input_size() < 2) continue;
    const onnx::TensorProto* t = model.find_initializer(n.input(1));
    if (t == nullptr || t->dims_size() != 2) continue;
    if (t->data_type() != onnx::TensorProto::FLOAT &&
        t->data_type() != onnx::TensorProto::FLOAT16) {
      continue;
    }
    kernels::PackSourceLayout layout = kernels::PackSourceLayout::kKN;
    if (gemm) {
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.name() == "transB" && a.i() != 0) layout = kernels::PackSourceLayout::kNK;
      }
    }
    if (!seen.insert({n.input(1), static_cast<int>(layout)}).second) continue;
    out.push_back({n.input(1), n.name().empty() ? n.op_type() : n.name(), layout, t->data_type(),
                   inputs.count(n.input(1)) > 0, model.count_initializers(n.input(1))});
  }
  return out;
}

}  // namespace onnx_prepack::pack
