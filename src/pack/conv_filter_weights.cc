#include "pack/conv_filter_weights.h"

#include <set>
#include <tuple>
#include <utility>

namespace onnx_prepack::pack {

std::vector<ConvFilterWeight> conv_filter_weights(const format::Model& model) {
  const onnx::GraphProto& g = model.proto().graph();
  std::set<std::string> inputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  std::vector<ConvFilterWeight> out;
  std::set<std::tuple<std::string, int64_t, bool>> seen;
  for (const onnx::NodeProto& n : g.node()) {
    const bool transposed = n.op_type() == "ConvTranspose";
    if ((n.op_type() != "Conv" && !transposed) || !(n.domain().empty() || n.domain() == "ai.onnx"))
      continue;
    if (n.input_size() < 2) continue;
    const onnx::TensorProto* t = model.find_initializer(n.input(1));
    if (t == nullptr || t->data_type() != onnx::TensorProto::FLOAT) continue;
    if (t->dims_size() < 3 || t->dims_size() > 5) continue;
    std::vector<int64_t> dims(t->dims().begin(), t->dims().end());
    bool positive = true;
    for (int64_t d : dims) positive = positive && d > 0;
    int64_t group = 1;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "group") group = a.i();
    }
    if (!positive || group <= 0 || dims[0] % group != 0) continue;
    if (!seen.insert({n.input(1), group, transposed}).second) continue;
    out.push_back({n.input(1), n.name().empty() ? n.op_type() : n.name(), group, std::move(dims),
                   inputs.count(n.input(1)) > 0, model.count_initializers(n.input(1)), transposed});
  }
  return out;
}

}  // namespace onnx_prepack::pack
