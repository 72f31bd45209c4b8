// The integer GEMM B pack family: B of ONNX MatMulInteger (input 1) and
// QLinearMatMul (input 3, b) and of com.microsoft MatMulIntegerToFloat and
// DynamicQuantizeMatMul (input 1), an int8 or uint8 2-D initializer, as the
// panels of kernels/i8_gemm (i8_gemm_b_format.h). Every kernel, the portable one included, reads
// the one format of each source type. The pack depends on B alone: the zero points, scales and A's
// type are applied at run time, so the entries carry no lineage and all consumers of one B share
// one entry.
//
// The same panels also hold the constant W [M, C, k...] of ConvInteger (input
// 1) and QLinearConv (input 3, w), attribute group 1, C > 1 (depthwise and
// grouped W stay kernel-owned at run time), as B [C * prod(kernel), M], in the
// i8_conv_w formats: the panels, then W's dims for the decoder. A W is never
// 2-D, so the source's rank tells the two uses apart; the two operators share
// one entry of a W (its scales and zero points are applied at run time).
//
// Each format has an aarch64 twin of the same bytes (architecture "aarch64-dotprod", read by
// the SDOT kernel): at an aarch64 level the twin is accepted first, then the baseline one, so
// `compile --target aarch64-dotprod` writes the twin, a dotprod host hits it, and a NEON-only
// host (or one capped at neon) rejects it as incompatible_device, naming dotprod.
#include <string>
#include <vector>

#include "pack/i8_gemm_b_format.h"
#include "pack/pack_family.h"

namespace onnx_prepack::pack {
namespace {

FormatInfo info(const I8GemmBFormat& f) { return {f.name, f.version, f.architecture, f.isa}; }

bool is_conv_w(const WeightUse& use) { return use.dims.size() >= 3; }

int64_t group_of(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "group") return a.i();
  }
  return 1;
}

class I8GemmBFamily final : public PackFamily {
 public:
  I8GemmBFamily() {
    for (const I8GemmBFormat* f : i8_gemm_b_formats()) formats_.push_back(info(*f));
    for (const I8GemmBFormat* f : i8_conv_w_formats()) formats_.push_back(info(*f));
  }
  std::string_view name() const override { return "i8_gemm_b"; }

  bool eligible(const onnx::NodeProto& node, int input, int32_t data_type,
                std::span<const int64_t> dims) const override {
    if (i8_gemm_b_format(data_type) == nullptr) return false;
    const bool onnx = node.domain().empty() || node.domain() == "ai.onnx";
    const std::string& op = node.op_type();
    if (onnx && ((op == "ConvInteger" && input == 1) || (op == "QLinearConv" && input == 3))) {
      // The runtime's GEMM path: more than one input channel per group.
      const int64_t group = group_of(node);
      return dims.size() >= 3 && dims[1] > 1 && group >= 1 && dims[0] % group == 0;
    }
    if (dims.size() != 2) return false;
    if (onnx) return (op == "MatMulInteger" && input == 1) || (op == "QLinearMatMul" && input == 3);
    return node.domain() == "com.microsoft" && input == 1 &&
           (op == "MatMulIntegerToFloat" || op == "DynamicQuantizeMatMul");
  }
  std::string label(const WeightUse& use) const override {
    return is_conv_w(use) ? "conv_nk" : "kn";
  }
  std::span<const FormatInfo> formats() const override { return formats_; }

  std::vector<FormatInfo> accepted(const WeightUse& use, device::IsaLevel level) const override {
    const I8GemmBFormat* f = is_conv_w(use) ? i8_conv_w_format(use.data_type, group_of(*use.node))
                                            : i8_gemm_b_format(use.data_type);
    if (f == nullptr) return {};
    std::vector<FormatInfo> out;
    if (level_machine(level) == device::Machine::kAarch64) {
      if (const I8GemmBFormat* twin = i8_aarch64_twin(*f)) out.push_back(info(*twin));
    }
    out.push_back(info(*f));
    return out;
  }
  // The first accepted format the level's kernels read (the runtime's in-memory pack: the same
  // bytes whichever it is).
  std::optional<FormatInfo> miss_format(const WeightUse& use,
                                        device::IsaLevel level) const override {
    for (const FormatInfo& f : accepted(use, level)) {
      if (f.isa <= level) return f;
    }
    return std::nullopt;
  }
  Result<PackPlan> plan(const WeightUse& use, const FormatInfo& format, const ContentFn& content,
                        base::ThreadPool*) const override {
    if (is_conv_w(use)) return plan_conv_w(use, format, content);
    const I8GemmBFormat* f = find_i8_gemm_b_format(format.name);
    if (f == nullptr || f->source_type != use.data_type) {
      return invalid_argument("'" + std::string(format.name) + "' does not hold this B's type");
    }
    OP_ASSIGN_OR_RETURN(kernels::I8GemmShape shape, i8_gemm_b_shape(use.data_type, use.dims));
    OP_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, content(use.source));
    PackPlan p;
    p.format = format;
    p.type = i8_gemm_b_struct_type(*f);
    p.dims = i8_gemm_b_dims(shape);
    p.payload_bytes = i8_gemm_b_payload_bytes(shape);
    p.pack = [shape, bytes](std::span<uint8_t> out) { return i8_gemm_b_pack(shape, bytes, out); };
    return p;
  }
  Status check_entry(const WeightUse& use, const FormatInfo& format,
                     const onnx::StructTypeProto& type,
                     std::span<const uint64_t> dims) const override {
    if (is_conv_w(use)) {
      const I8GemmBFormat* f = find_i8_conv_w_format(format.name);
      if (f == nullptr)
        return invalid_argument("'" + std::string(format.name) + "' is not a ConvInteger W format");
      return i8_conv_w_check_entry(*f, type, dims, use.data_type, use.dims, group_of(*use.node));
    }
    const I8GemmBFormat* f = find_i8_gemm_b_format(format.name);
    if (f == nullptr)
      return invalid_argument("'" + std::string(format.name) + "' is not an integer GEMM B format");
    return i8_gemm_b_check_entry(*f, type, dims, use.data_type, use.dims);
  }
  // One entry per B or W (its first consumer): the pack does not depend on the consumer.
  std::string use_key(const WeightUse& use) const override {
    return is_conv_w(use) ? "conv_nk" : "";
  }

 private:
  static Result<PackPlan> plan_conv_w(const WeightUse& use, const FormatInfo& format,
                                      const ContentFn& content) {
    const I8GemmBFormat* f = find_i8_conv_w_format(format.name);
    if (f == nullptr || f->source_type != use.data_type) {
      return invalid_argument("'" + std::string(format.name) + "' does not hold this W's type");
    }
    const int64_t groups = group_of(*use.node);
    if (f->grouped != (groups > 1)) {
      return invalid_argument("'" + std::string(format.name) + "' does not hold W of group " +
                              std::to_string(groups));
    }
    OP_ASSIGN_OR_RETURN(kernels::I8GemmShape shape,
                        i8_conv_w_shape(use.data_type, use.dims, groups));
    OP_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, content(use.source));
    PackPlan p;
    p.format = format;
    p.type = i8_conv_w_struct_type(*f);
    p.dims = i8_conv_w_dims(shape, use.dims.size(), groups);
    p.payload_bytes = i8_conv_w_payload_bytes(shape, use.dims.size(), groups);
    p.pack = [shape, bytes, dims = use.dims, groups](std::span<uint8_t> out) {
      return i8_conv_w_pack(shape, bytes, dims, out, groups);
    };
    return p;
  }

  std::vector<FormatInfo> formats_;
};

}  // namespace

const PackFamily& i8_gemm_b_family() {
  static const I8GemmBFamily family;
  return family;
}

}  // namespace onnx_prepack::pack
