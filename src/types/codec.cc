#include "types/codec.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "format/data_type.h"

namespace onnx_prepack::types {
namespace {

using onnx::FunctionProto;
using onnx::TypeProto;

// Deterministic operators of the default ONNX domain (sorted for lookup).
// Random generators, control flow (graph attributes) and training-mode
// operators are absent on purpose.
constexpr std::array<std::string_view, 95> kAllowed = {
    "Abs",
    "Add",
    "And",
    "ArgMax",
    "ArgMin",
    "BitShift",
    "BitwiseAnd",
    "BitwiseNot",
    "BitwiseOr",
    "BitwiseXor",
    "Cast",
    "CastLike",
    "Ceil",
    "Clip",
    "Concat",
    "Constant",
    "ConstantOfShape",
    "CumSum",
    "DepthToSpace",
    "DequantizeLinear",
    "Div",
    "Einsum",
    "Equal",
    "Erf",
    "Exp",
    "Expand",
    "EyeLike",
    "Flatten",
    "Floor",
    "Gather",
    "GatherElements",
    "GatherND",
    "Gemm",
    "Greater",
    "GreaterOrEqual",
    "Identity",
    "IsInf",
    "IsNaN",
    "Less",
    "LessOrEqual",
    "Log",
    "MatMul",
    "MatMulInteger",
    "Max",
    "Mean",
    "Min",
    "Mod",
    "Mul",
    "Neg",
    "NonZero",
    "Not",
    "OneHot",
    "Or",
    "Pad",
    "Pow",
    "QuantizeLinear",
    "Range",
    "Reciprocal",
    "ReduceL1",
    "ReduceL2",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Relu",
    "Reshape",
    "Round",
    "ScatterElements",
    "ScatterND",
    "Shape",
    "Sigmoid",
    "Sign",
    "Size",
    "Slice",
    "SpaceToDepth",
    "Split",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Sum",
    "Tanh",
    "Tile",
    "TopK",
    "Transpose",
    "Trilu",
    "Unique",
    "Unsqueeze",
    "Where",
    "Xor",
    "Softmax",
    "LogSoftmax",
    "HardSigmoid",
    "LeakyRelu",
};

const TypeProto* typed(const FunctionProto& f, const std::string& name) {
  for (const auto& vi : f.value_info()) {
    if (vi.name() == name && vi.has_type() && vi.type().has_tensor_type() &&
        vi.type().tensor_type().has_elem_type()) {
      return &vi.type();
    }
  }
  return nullptr;
}

std::string type_name(int32_t et) { return std::string(format::data_type_name(et)); }

bool tensor_has_external(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0;
}

// Body rules shared by decoders and encoders.
void check_body(const FunctionProto& f, const std::string& base, std::vector<CodecProblem>* out) {
  if (f.attribute_size() > 0 || f.attribute_proto_size() > 0) {
    out->push_back({CodecProblemKind::kCapture, base,
                    base + ": declares " +
                        std::to_string(f.attribute_size() + f.attribute_proto_size()) +
                        " attribute parameters; a codec has no caller to bind them"});
  }
  std::unordered_set<std::string> defined(f.input().begin(), f.input().end());
  for (int n = 0; n < f.node_size(); ++n) {
    const auto& node = f.node(n);
    std::string path = base + ".node[" + std::to_string(n) + "]";
    if (!codec_operator_allowed(node.domain(), node.op_type())) {
      out->push_back({CodecProblemKind::kOperator, path,
                      path + ": operator '" + (node.domain().empty() ? "" : node.domain() + "::") +
                          node.op_type() +
                          "' is not a deterministic default-domain operator of the allow-list"});
    }
    for (const auto& in : node.input()) {
      if (!in.empty() && !defined.count(in)) {
        out->push_back(
            {CodecProblemKind::kCapture, path,
             path + ": input '" + in + "' is not a function input or an earlier node output"});
      }
    }
    for (int a = 0; a < node.attribute_size(); ++a) {
      const auto& attr = node.attribute(a);
      std::string apath = path + ".attribute[" + std::to_string(a) + "]";
      if (!attr.ref_attr_name().empty()) {
        out->push_back({CodecProblemKind::kCapture, apath,
                        apath + ": '" + attr.name() + "' refers to the outer attribute '" +
                            attr.ref_attr_name() + "'"});
      }
      if (attr.type() == onnx::AttributeProto::GRAPH ||
          attr.type() == onnx::AttributeProto::GRAPHS || attr.has_g() || attr.graphs_size() > 0) {
        out->push_back(
            {CodecProblemKind::kGraphAttribute, apath,
             apath + ": '" + attr.name() + "' is a graph attribute; codecs have no subgraphs"});
      }
      bool external = attr.has_t() && tensor_has_external(attr.t());
      for (const auto& t : attr.tensors()) external = external || tensor_has_external(t);
      if (attr.has_sparse_tensor()) {
        external = external || tensor_has_external(attr.sparse_tensor().values()) ||
                   tensor_has_external(attr.sparse_tensor().indices());
      }
      for (const auto& st : attr.sparse_tensors()) {
        external =
            external || tensor_has_external(st.values()) || tensor_has_external(st.indices());
      }
      if (external) {
        out->push_back({CodecProblemKind::kExternalData, apath,
                        apath + ": '" + attr.name() + "' holds a tensor with external data"});
      }
    }
    for (const auto& o : node.output()) {
      if (!o.empty()) defined.insert(o);
    }
  }
  for (const auto& o : f.output()) {
    if (!defined.count(o)) {
      out->push_back({CodecProblemKind::kOutput, base,
                      base + ": output '" + o + "' is not produced by any node or input"});
    }
  }
}

// Compares a value_info shape with a leaf's dims; empty string when they agree.
std::string shape_mismatch(const TypeProto& t, const Leaf& leaf) {
  if (!t.tensor_type().has_shape()) return "";
  const auto& shape = t.tensor_type().shape();
  if (size_t(shape.dim_size()) != leaf.dims.size()) {
    return "rank " + std::to_string(shape.dim_size()) + ", the leaf has rank " +
           std::to_string(leaf.dims.size());
  }
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    const LeafDim& l = leaf.dims[size_t(i)];
    if (!d.has_dim_value()) continue;
    if (l.param >= 0 || d.dim_value() < 0 || uint64_t(d.dim_value()) != l.value) {
      return "dim " + std::to_string(i) + " is " + std::to_string(d.dim_value()) +
             ", the leaf's is " +
             (l.param >= 0 ? "dims_param[" + std::to_string(l.param) + "]"
                           : std::to_string(l.value));
    }
  }
  return "";
}

}  // namespace

bool codec_operator_allowed(std::string_view domain, std::string_view op_type) {
  if (!domain.empty() && domain != "ai.onnx") return false;
  return std::find(kAllowed.begin(), kAllowed.end(), op_type) != kAllowed.end();
}

std::vector<CodecProblem> check_decoder(const FunctionProto& f, std::span<const Leaf> leaves,
                                        const std::string& base) {
  std::vector<CodecProblem> out;
  if (size_t(f.input_size()) != leaves.size()) {
    out.push_back({CodecProblemKind::kInputCount, base,
                   base + ": has " + std::to_string(f.input_size()) + " inputs, the type has " +
                       std::to_string(leaves.size()) + " canonical leaves"});
  }
  size_t n = std::min(size_t(f.input_size()), leaves.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string& in = f.input(int(i));
    const Leaf& leaf = leaves[i];
    std::string path = base + ".input[" + std::to_string(i) + "]";
    const TypeProto* t = typed(f, in);
    if (!t) {
      out.push_back({CodecProblemKind::kInputType, path,
                     path + ": input '" + in + "' has no tensor type in value_info (leaf '" +
                         leaf.name + "' is " + type_name(leaf.elem_type) + ")"});
      continue;
    }
    if (t->tensor_type().elem_type() != leaf.elem_type) {
      out.push_back({CodecProblemKind::kInputType, path,
                     path + ": input '" + in + "' is " + type_name(t->tensor_type().elem_type()) +
                         ", leaf '" + leaf.name + "' is " + type_name(leaf.elem_type)});
      continue;
    }
    std::string mismatch = shape_mismatch(*t, leaf);
    if (!mismatch.empty()) {
      out.push_back(
          {CodecProblemKind::kInputType, path,
           path + ": input '" + in + "' has " + mismatch + " (leaf '" + leaf.name + "')"});
    }
  }
  if (f.output_size() != 1) {
    out.push_back({CodecProblemKind::kOutput, base,
                   base + ": has " + std::to_string(f.output_size()) +
                       " outputs, a decoder has exactly one"});
  } else {
    const TypeProto* t = typed(f, f.output(0));
    if (!t || !format::data_type_known(t->tensor_type().elem_type())) {
      out.push_back({CodecProblemKind::kOutput, base + ".output[0]",
                     base + ".output[0]: '" + f.output(0) +
                         "' has no standard tensor element type in value_info"});
    }
  }
  check_body(f, base, &out);
  return out;
}

std::vector<CodecProblem> check_encoder(const FunctionProto& f, const FunctionProto* decoder,
                                        std::optional<uint64_t> byte_size,
                                        const std::string& base) {
  std::vector<CodecProblem> out;
  if (f.input_size() != 1) {
    out.push_back(
        {CodecProblemKind::kInputCount, base,
         base + ": has " + std::to_string(f.input_size()) + " inputs, an encoder has exactly one"});
  } else {
    std::string path = base + ".input[0]";
    const TypeProto* t = typed(f, f.input(0));
    const TypeProto* want =
        decoder && decoder->output_size() == 1 ? typed(*decoder, decoder->output(0)) : nullptr;
    if (!t) {
      out.push_back({CodecProblemKind::kInputType, path,
                     path + ": input '" + f.input(0) + "' has no tensor type in value_info"});
    } else if (want && t->tensor_type().elem_type() != want->tensor_type().elem_type()) {
      out.push_back({CodecProblemKind::kInputType, path,
                     path + ": input '" + f.input(0) + "' is " +
                         type_name(t->tensor_type().elem_type()) + ", the decoder output is " +
                         type_name(want->tensor_type().elem_type())});
    } else if (want && t->tensor_type().has_shape() && want->tensor_type().has_shape() &&
               t->tensor_type().shape().SerializeAsString() !=
                   want->tensor_type().shape().SerializeAsString()) {
      out.push_back({CodecProblemKind::kInputType, path,
                     path + ": input '" + f.input(0) + "' has a shape unlike the decoder output"});
    }
  }
  if (f.output_size() != 1) {
    out.push_back({CodecProblemKind::kOutput, base,
                   base + ": has " + std::to_string(f.output_size()) +
                       " outputs, an encoder has exactly one"});
  } else {
    std::string path = base + ".output[0]";
    const TypeProto* t = typed(f, f.output(0));
    if (!t || t->tensor_type().elem_type() != onnx::TensorProto::UINT8) {
      out.push_back({CodecProblemKind::kOutput, path,
                     path + ": '" + f.output(0) + "' must be typed tensor(UINT8) in value_info"});
    } else if (t->tensor_type().has_shape()) {
      const auto& s = t->tensor_type().shape();
      if (s.dim_size() != 1) {
        out.push_back({CodecProblemKind::kOutput, path,
                       path + ": '" + f.output(0) + "' has rank " + std::to_string(s.dim_size()) +
                           ", expected 1"});
      } else if (byte_size && s.dim(0).has_dim_value() &&
                 (s.dim(0).dim_value() < 0 || uint64_t(s.dim(0).dim_value()) != *byte_size)) {
        out.push_back({CodecProblemKind::kOutput, path,
                       path + ": '" + f.output(0) + "' has " +
                           std::to_string(s.dim(0).dim_value()) + " bytes, the type is " +
                           std::to_string(*byte_size)});
      }
    }
  }
  check_body(f, base, &out);
  return out;
}

}  // namespace onnx_prepack::types
