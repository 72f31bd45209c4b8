// The MatMulNBits pack family: B (input 1) of com.microsoft::MatMulNBits as
// the panel records of kernels/q4_gemm (q_gemm_b.h). One byte layout per bit
// width under two names: the x86-64 format (accepted at the x86-64 levels and
// at ref) and the aarch64-dotprod one (accepted at the aarch64 levels; a NEON
// host without dotprod misses its entries as incompatible_device and packs its
// own). A pack reads scales and zero points too: its entries carry their
// lineage (format.md §4.5).
#include <string>
#include <vector>

#include "pack/pack_family.h"
#include "pack/q_gemm_b.h"

namespace onnx_prepack::pack {
namespace {

FormatInfo info(const QGemmBFormat& f) { return {f.name, f.version, f.architecture, f.isa}; }

// The machine whose format a level reads: aarch64 for its chain, x86-64 for
// x86-64 levels and for ref (as before the aarch64 formats).
device::Machine machine_of(device::IsaLevel level) {
  return level_machine(level).value_or(device::Machine::kX86_64);
}

class QGemmBFamily final : public PackFamily {
 public:
  QGemmBFamily() {
    for (const QGemmBFormat* f : q_gemm_b_formats()) formats_.push_back(info(*f));
  }
  std::string_view name() const override { return "q_gemm_b"; }

  bool eligible(const onnx::NodeProto& node, int input, int32_t data_type,
                std::span<const int64_t>) const override {
    return node.op_type() == "MatMulNBits" && node.domain() == "com.microsoft" && input == 1 &&
           data_type == onnx::TensorProto::UINT8;
  }
  std::string label(const WeightUse&) const override { return "n_kblocks_blob"; }
  std::span<const FormatInfo> formats() const override { return formats_; }

  std::vector<FormatInfo> accepted(const WeightUse& use, device::IsaLevel level) const override {
    auto shape = matmul_nbits_shape(*use.node);
    if (!shape.ok()) return {};
    return {info(*q_gemm_b_format(shape->bits, machine_of(level)))};
  }
  std::optional<FormatInfo> miss_format(const WeightUse& use,
                                        device::IsaLevel level) const override {
    auto f = accepted(use, level);
    if (f.empty()) return std::nullopt;
    return f.front();
  }
  Result<PackPlan> plan(const WeightUse& use, const FormatInfo& format, const ContentFn&,
                        base::ThreadPool*) const override {
    OP_ASSIGN_OR_RETURN(kernels::QGemmShape shape, matmul_nbits_shape(*use.node));
    const QGemmBFormat* f = find_q_gemm_b_format(format.name);
    if (f == nullptr || f->bits != shape.bits) {
      return invalid_argument("'" + std::string(format.name) + "' does not hold " +
                              std::to_string(shape.bits) + "-bit weights");
    }
    PackPlan p;
    p.format = format;
    p.type = q_gemm_b_struct_type(*f);
    p.dims = q_gemm_b_dims(shape);
    p.payload_bytes = q_gemm_b_payload_bytes(shape);
    if (use.model != nullptr) {
      // The same checks the runtime makes on scales and zero points (their
      // sizes, unique initializers, no g_idx), read from the model.
      std::optional<QGemmBJob> job = q_gemm_b_job(*use.model, *use.node);
      if (!job) {
        return invalid_argument(
            "scales and zero points must be unique initializers (not graph inputs) of the sizes "
            "the attributes imply, without g_idx");
      }
      const format::Model* model = use.model;
      p.pack = [model, j = *job](std::span<uint8_t> out) {
        return q_gemm_b_pack_job(*model, j, out);
      };
    }
    return p;
  }
  Status check_entry(const WeightUse& use, const FormatInfo& format,
                     const onnx::StructTypeProto& type,
                     std::span<const uint64_t> dims) const override {
    OP_ASSIGN_OR_RETURN(kernels::QGemmShape shape, matmul_nbits_shape(*use.node));
    const QGemmBFormat* f = find_q_gemm_b_format(format.name);
    if (f == nullptr)
      return invalid_argument("'" + std::string(format.name) + "' is not a MatMulNBits format");
    return q_gemm_b_check_entry(*f, type, dims, shape);
  }
  std::optional<resolve::LineageRequest> lineage(const WeightUse& use) const override {
    return matmul_nbits_lineage(*use.node);
  }
  // One entry per B (its first consumer); other consumers are checked against it.
  std::string use_key(const WeightUse&) const override { return ""; }

 private:
  std::vector<FormatInfo> formats_;
};

}  // namespace

const PackFamily& q_gemm_b_family() {
  static const QGemmBFamily family;
  return family;
}

}  // namespace onnx_prepack::pack
