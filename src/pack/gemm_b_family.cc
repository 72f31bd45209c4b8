// The GEMM B pack family: B (input 1) of MatMul and Gemm as f32 panels
// (gemm_b_format.h). A consumer at a level reads every panel width whose
// kernel runs there (n16 and n32 on AVX-512); a miss packs the runtime's own
// width (kernels::f32_gemm_native).
#include <vector>

#include "pack/format_list.h"
#include "pack/gemm_b_format.h"
#include "pack/pack_family.h"

namespace onnx_prepack::pack {
namespace {

using kernels::PackSourceLayout;

FormatInfo info(const GemmBFormat& f) { return {f.name, f.version, f.architecture, f.isa}; }

PackSourceLayout layout_of(const onnx::NodeProto& node) {
  if (node.op_type() == "Gemm") {
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "transB" && a.i() != 0) return PackSourceLayout::kNK;
    }
  }
  return PackSourceLayout::kKN;
}

class GemmBFamily final : public PackFamily {
 public:
  GemmBFamily() {
    for (const GemmBFormat* f : gemm_b_formats()) formats_.push_back(info(*f));
  }
  std::string_view name() const override { return "gemm_b"; }

  bool eligible(const onnx::NodeProto& node, int input, int32_t data_type,
                std::span<const int64_t> dims) const override {
    const bool op = node.op_type() == "MatMul" || node.op_type() == "Gemm";
    // FLOAT16 B: the _f16 formats, the same f32 panels of the exactly widened
    // values, read by the float kernel the half adapter runs (docs/decisions.md).
    return op && (node.domain().empty() || node.domain() == "ai.onnx") && input == 1 &&
           dims.size() == 2 &&
           (data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::FLOAT16);
  }
  std::string label(const WeightUse& use) const override {
    return layout_of(*use.node) == PackSourceLayout::kKN ? "kn" : "nk";
  }
  std::span<const FormatInfo> formats() const override { return formats_; }

  std::vector<FormatInfo> accepted(const WeightUse& use, device::IsaLevel level) const override {
    std::vector<FormatInfo> out;
    for (const GemmBFormat* f : gemm_b_formats_for(layout_of(*use.node), use.data_type, level))
      out.push_back(info(*f));
    return out;
  }
  std::optional<FormatInfo> miss_format(const WeightUse& use,
                                        device::IsaLevel level) const override {
    const GemmBFormat* f = gemm_b_runtime_format(layout_of(*use.node), use.data_type, level);
    if (f == nullptr) return std::nullopt;
    return info(*f);
  }
  Result<PackPlan> plan(const WeightUse& use, const FormatInfo& format, const ContentFn& content,
                        base::ThreadPool* pool) const override {
    const GemmBFormat* f = find_gemm_b_format(format.name);
    if (f == nullptr)
      return invalid_argument("'" + std::string(format.name) + "' is not a GEMM B format");
    OP_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, content(use.source));
    OP_ASSIGN_OR_RETURN(GemmBSource src,
                        gemm_b_source(bytes, use.data_type, use.dims, layout_of(*use.node)));
    PackPlan p;
    p.format = format;
    p.type = gemm_b_struct_type(*f);
    p.dims = gemm_b_dims(*f, src.k, src.n);
    p.payload_bytes = gemm_b_payload_bytes(*f, src.k, src.n);
    p.pack = [f, src, pool](std::span<uint8_t> out) { return gemm_b_pack(*f, src, out, pool); };
    return p;
  }
  Status check_entry(const WeightUse& use, const FormatInfo& format,
                     const onnx::StructTypeProto& type,
                     std::span<const uint64_t> dims) const override {
    const GemmBFormat* f = find_gemm_b_format(format.name);
    if (f == nullptr)
      return invalid_argument("'" + std::string(format.name) + "' is not a GEMM B format");
    return gemm_b_check_entry(*f, type, dims, use.data_type, use.dims);
  }

 private:
  std::vector<FormatInfo> formats_;
};

}  // namespace

const PackFamily& gemm_b_family() {
  static const GemmBFamily family;
  return family;
}

}  // namespace onnx_prepack::pack
