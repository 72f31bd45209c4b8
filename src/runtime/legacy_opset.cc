#include "runtime/legacy_opset.h"

#include <string>
#include <string_view>

namespace onnx_prepack::runtime {
namespace {

const onnx::AttributeProto* find_attr(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool is_legacy_broadcast_op(std::string_view op) {
  for (std::string_view o :
       {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less", "PRelu"})
    if (op == o) return true;
  return false;
}

Status refuse(const onnx::NodeProto& node, int opset, const std::string& why) {
  return unimplemented("node '" + node.name() + "' (" + node.op_type() + "): opset " +
                       std::to_string(opset) + " form " + why + " is not supported");
}

}  // namespace

Status check_legacy_form(const onnx::NodeProto& node, int opset) {
  if (opset >= 7 || !node.domain().empty()) return Status();
  std::string_view op = node.op_type();
  // Before opset 7, broadcasting was explicit: `broadcast`=1 with `axis` aligned
  // B at that axis instead of at the trailing dimensions.
  if (is_legacy_broadcast_op(op) && find_attr(node, "axis") != nullptr)
    return refuse(node, opset, "with a broadcast 'axis'");
  if (op == "Cast" && opset < 6) return refuse(node, opset, "with a string 'to'");
  if (op == "Reshape" && opset < 5) return refuse(node, opset, "with a 'shape' attribute");
  if (op == "Pad" && opset < 2) return refuse(node, opset, "with 'paddings'");
  if (op == "Split" && opset < 2) return refuse(node, opset, "with a 'split' input");
  if (op == "Concat" && opset < 4 && find_attr(node, "axis") == nullptr)
    return refuse(node, opset, "with a default axis");
  if (op == "Tile" && opset < 6) return refuse(node, opset, "with 'tiles' and 'axis' inputs");
  if (op == "Upsample") return refuse(node, opset, "with scale attributes");
  if (op == "BatchNormalization") {
    const auto* spatial = find_attr(node, "spatial");
    if (spatial != nullptr && spatial->i() == 0) return refuse(node, opset, "with spatial=0");
  }
  return Status();
}

}  // namespace onnx_prepack::runtime
