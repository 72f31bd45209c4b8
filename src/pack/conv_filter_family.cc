// The Conv filter pack family: W (input 1) of Conv and ConvTranspose as the
// blocked, depthwise or transposed layouts of conv_filter_format.h. A consumer
// at a level reads every block height whose microkernel runs there (m14 and
// m6 on AVX-512: the Conv kernel picks the microkernel by the filter's rows);
// a miss packs the rows of the level's own microkernel. FLOAT16 filters have
// formats of their own (_f16): the same f32 payload, widened exactly.
#include <string>
#include <vector>

#include "kernels/f32_conv/f32_conv.h"
#include "pack/conv_filter_format.h"
#include "pack/pack_family.h"

namespace onnx_prepack::pack {
namespace {

FormatInfo info(const ConvFilterFormat& f) { return {f.name, f.version, f.architecture, f.isa}; }

int64_t group_of(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "group") return a.i();
  }
  return 1;
}
bool transposed(const onnx::NodeProto& node) { return node.op_type() == "ConvTranspose"; }

class ConvFilterFamily final : public PackFamily {
 public:
  ConvFilterFamily() {
    for (const ConvFilterFormat* f : conv_filter_formats()) formats_.push_back(info(*f));
  }
  std::string_view name() const override { return "conv_filter"; }

  bool eligible(const onnx::NodeProto& node, int input, int32_t data_type,
                std::span<const int64_t> dims) const override {
    const bool op = node.op_type() == "Conv" || node.op_type() == "ConvTranspose";
    const int64_t group = group_of(node);
    return op && (node.domain().empty() || node.domain() == "ai.onnx") && input == 1 &&
           (data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::FLOAT16) &&
           dims.size() >= 3 && dims.size() <= 5 && group > 0 && dims[0] % group == 0;
  }
  std::string label(const WeightUse& use) const override {
    return std::string(transposed(*use.node) ? "conv_transpose" : "conv") + " group " +
           std::to_string(group_of(*use.node));
  }
  std::span<const FormatInfo> formats() const override { return formats_; }

  std::vector<FormatInfo> accepted(const WeightUse& use, device::IsaLevel level) const override {
    std::vector<FormatInfo> out;
    for (const ConvFilterFormat* f : conv_filter_formats_for(use.dims, group_of(*use.node), level,
                                                             transposed(*use.node), use.data_type))
      out.push_back(info(*f));
    return out;
  }
  std::optional<FormatInfo> miss_format(const WeightUse& use,
                                        device::IsaLevel level) const override {
    const bool t = transposed(*use.node);
    const int64_t group = group_of(*use.node);
    const size_t mr =
        !t && conv_filter_is_depthwise(use.dims, group) ? 0 : kernels::conv_gemm_kernel(level)->mr;
    const ConvFilterFormat* f =
        conv_filter_format_for_rows(use.dims, group, mr, level, t, use.data_type);
    if (f == nullptr) return std::nullopt;
    return info(*f);
  }
  Result<PackPlan> plan(const WeightUse& use, const FormatInfo& format, const ContentFn& content,
                        base::ThreadPool*) const override {
    const ConvFilterFormat* f = find_conv_filter_format(format.name);
    if (f == nullptr)
      return invalid_argument("'" + std::string(format.name) + "' is not a Conv filter format");
    OP_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, content(use.source));
    OP_ASSIGN_OR_RETURN(ConvFilterSource src,
                        conv_filter_source(bytes, use.data_type, use.dims, group_of(*use.node),
                                           transposed(*use.node)));
    PackPlan p;
    p.format = format;
    p.type = conv_filter_struct_type(*f);
    p.dims = conv_filter_dims(*f, src);
    p.payload_bytes = conv_filter_payload_bytes(*f, src);
    p.pack = [f, src](std::span<uint8_t> out) { return conv_filter_pack(*f, src, out); };
    return p;
  }
  Status check_entry(const WeightUse& use, const FormatInfo& format,
                     const onnx::StructTypeProto& type,
                     std::span<const uint64_t> dims) const override {
    const ConvFilterFormat* f = find_conv_filter_format(format.name);
    if (f == nullptr)
      return invalid_argument("'" + std::string(format.name) + "' is not a Conv filter format");
    return conv_filter_check_entry(*f, type, dims, use.data_type, use.dims, group_of(*use.node));
  }

 private:
  std::vector<FormatInfo> formats_;
};

}  // namespace

const PackFamily& conv_filter_family() {
  static const ConvFilterFamily family;
  return family;
}

}  // namespace onnx_prepack::pack
