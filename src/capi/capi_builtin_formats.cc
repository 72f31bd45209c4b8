// This library's formats as op_acceptable_format records: a pack family's
// format for one weight use, with the family's entry check (capi_internal.h).
#include <map>
#include <mutex>
#include <tuple>

#include "capi/capi_internal.h"

namespace onnx_prepack::capi {

Result<BuiltinFormat> make_builtin(const pack::PackFamily* family, const pack::WeightUse& use,
                                   const pack::FormatInfo& format, const pack::ContentFn& content) {
  BuiltinFormat b;
  b.family = family;
  b.use = use;
  b.format = format;
  OP_ASSIGN_OR_RETURN(pack::PackPlan plan, family->plan(use, format, content, nullptr));
  b.type = std::move(plan.type);
  b.name = std::string(format.name);
  b.version = std::string(format.version);
  b.architecture = std::string(format.architecture);
  return b;
}

Result<std::span<const BuiltinFormat* const>> layout_builtin_formats(uint32_t layout,
                                                                     int32_t source_type,
                                                                     device::IsaLevel level) {
  struct Answer {
    std::deque<BuiltinFormat> records;
    std::vector<const BuiltinFormat*> list;
  };
  static std::mutex mu;
  static std::map<std::tuple<uint32_t, int32_t, int>, Answer> answers;
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(layout, source_type, static_cast<int>(level));
  if (auto it = answers.find(key); it != answers.end())
    return std::span<const BuiltinFormat* const>(it->second.list);

  // The consumer the layout stands for, asked of the registry like any model's.
  static const onnx::NodeProto* const nodes[2] = {[] {
                                                    auto* n = new onnx::NodeProto();
                                                    n->set_op_type("MatMul");
                                                    n->add_input("A");
                                                    n->add_input("B");
                                                    return n;
                                                  }(),
                                                  [] {
                                                    auto* n = new onnx::NodeProto();
                                                    n->set_op_type("Gemm");
                                                    n->add_input("A");
                                                    n->add_input("B");
                                                    onnx::AttributeProto* t = n->add_attribute();
                                                    t->set_name("transB");
                                                    t->set_type(onnx::AttributeProto::INT);
                                                    t->set_i(1);
                                                    return n;
                                                  }()};
  const onnx::NodeProto& node = *nodes[layout];
  const std::vector<int64_t> one = {1, 1};
  const pack::PackFamily* family = pack::family_for(node, 1, onnx::TensorProto::FLOAT, one);
  Answer& answer = answers[key];  // stable: the map never moves its values
  if (family != nullptr) {
    const pack::WeightUse use{"B", node.op_type(), &node, 1, source_type, one, nullptr};
    // A stand-in source of one element: the struct type does not depend on it.
    static const uint32_t zero = 0;
    const size_t width = source_type == onnx::TensorProto::FLOAT16 ? 2 : 4;
    const pack::ContentFn content =
        [width](const std::string&) -> Result<std::span<const uint8_t>> {
      return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&zero), width);
    };
    for (const pack::FormatInfo& f : family->accepted(use, level)) {
      Result<BuiltinFormat> b = make_builtin(family, use, f, content);
      if (!b.ok()) {
        answers.erase(key);
        return b.status();
      }
      answer.records.push_back(std::move(*b));
    }
    for (const BuiltinFormat& b : answer.records) answer.list.push_back(&b);
  }
  return std::span<const BuiltinFormat* const>(answer.list);
}

}  // namespace onnx_prepack::capi
