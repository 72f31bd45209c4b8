// The pack layer at aarch64 kernel levels: the requests accept no x86-64
// format; the GEMM B and Conv filter families accept their NEON formats, the
// baseline integer formats stay acceptable (their architecture then misses as
// incompatible_device), and a miss still has a format to pack into.
#include <gtest/gtest.h>

#include "device/cpu_features.h"
#include "pack/format_list.h"
#include "pack/pack_family.h"

namespace onnx_prepack::pack {
namespace {

WeightUse use_of(const onnx::NodeProto& node, std::vector<int64_t> dims) {
  return {"w", node.op_type(), &node, 1, onnx::TensorProto::FLOAT, std::move(dims), nullptr};
}

// The Conv filter family has its NEON formats (f32_conv_filter_m8,
// f32_conv_dw_neon, f32_deconv_filter_m8): an aarch64 level accepts exactly
// the one of the filter's kind, for the aarch64-neon architecture, and a miss
// packs into it (on an aarch64 build, whose Conv kernel is the NEON 8-row
// tile; elsewhere the portable one's rows).
TEST(Aarch64Requests, ConvFiltersAcceptTheNeonFormats) {
  onnx::NodeProto conv, dw, deconv;
  conv.set_op_type("Conv");
  conv.add_input("x");
  conv.add_input("w");
  dw = conv;
  auto* group = dw.add_attribute();
  group->set_name("group");
  group->set_type(onnx::AttributeProto::INT);
  group->set_i(16);
  deconv = conv;
  deconv.set_op_type("ConvTranspose");
  const PackFamily* family = find_pack_family("conv_filter");
  ASSERT_NE(family, nullptr);
  EXPECT_TRUE(has_machine_formats(*family, device::Machine::kX86_64));
  EXPECT_TRUE(has_machine_formats(*family, device::Machine::kAarch64));
  const std::pair<const char*, WeightUse> cases[] = {
      {"f32_conv_filter_m8", use_of(conv, {8, 3, 3, 3})},
      {"f32_conv_dw_neon", use_of(dw, {16, 1, 3, 3})},
      {"f32_deconv_filter_m8", use_of(deconv, {8, 3, 3, 3})}};
  for (const auto& [name, use] : cases) {
    for (device::IsaLevel level :
         {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
      const resolve::PackRequest r = pack_request(*family, use, level);
      ASSERT_EQ(r.formats.size(), 1u) << name;
      EXPECT_EQ(r.formats[0].name, name);
      EXPECT_EQ(r.formats[0].required_architecture, "aarch64-neon");
      EXPECT_TRUE(r.no_format_detail.empty());
      const auto miss = family->miss_format(use, level);
      ASSERT_TRUE(miss.has_value()) << name;
#if defined(__aarch64__)
      EXPECT_EQ(miss->name, name);
#endif
    }
    const resolve::PackRequest ref = pack_request(*family, use, device::IsaLevel::kRef);
    EXPECT_TRUE(ref.formats.empty());
    for (const auto& f : pack_request(*family, use, device::IsaLevel::kAvx512).formats)
      EXPECT_NE(f.required_architecture, "aarch64-neon");
    EXPECT_FALSE(pack_request(*family, use, device::IsaLevel::kAvx2).formats.empty());
  }
}

// A family with x86-64 formats only (every float family has an aarch64 one
// now): an aarch64 level's request is empty and says why.
class X86OnlyFamily final : public PackFamily {
 public:
  std::string_view name() const override { return "x86_only"; }
  bool eligible(const onnx::NodeProto&, int, int32_t, std::span<const int64_t>) const override {
    return true;
  }
  std::string label(const WeightUse&) const override { return "x86 only"; }
  std::span<const FormatInfo> formats() const override { return formats_; }
  std::vector<FormatInfo> accepted(const WeightUse&, device::IsaLevel level) const override {
    if (formats_[0].isa <= level) return {formats_[0]};
    return {};
  }
  std::optional<FormatInfo> miss_format(const WeightUse&, device::IsaLevel) const override {
    return formats_[0];
  }
  Result<PackPlan> plan(const WeightUse&, const FormatInfo&, const ContentFn&,
                        base::ThreadPool*) const override {
    return invalid_argument("unused");
  }
  Status check_entry(const WeightUse&, const FormatInfo&, const onnx::StructTypeProto&,
                     std::span<const uint64_t>) const override {
    return ok_status();
  }

 private:
  FormatInfo formats_[1] = {{"x86_only_m6", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2}};
};

TEST(Aarch64Requests, FamilyWithoutAnAarch64FormatSaysWhy) {
  onnx::NodeProto conv;
  conv.set_op_type("Conv");
  const X86OnlyFamily family;
  const WeightUse use = use_of(conv, {8, 3, 3, 3});
  EXPECT_TRUE(has_machine_formats(family, device::Machine::kX86_64));
  EXPECT_FALSE(has_machine_formats(family, device::Machine::kAarch64));
  for (device::IsaLevel level :
       {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
    const resolve::PackRequest r = pack_request(family, use, level);
    EXPECT_TRUE(r.formats.empty());
    EXPECT_EQ(r.no_format_detail, "no packed format for family x86_only on aarch64");
  }
  // At ref (either machine) the request is empty too, without a machine to blame.
  const resolve::PackRequest ref = pack_request(family, use, device::IsaLevel::kRef);
  EXPECT_TRUE(ref.formats.empty());
  EXPECT_TRUE(ref.no_format_detail.empty());
  EXPECT_FALSE(pack_request(family, use, device::IsaLevel::kAvx2).formats.empty());
}

// The GEMM B family has its NEON formats (f32_gemm_b_n12_*): an aarch64 level
// accepts exactly those, for the aarch64-neon architecture.
TEST(Aarch64Requests, GemmBAcceptsTheNeonFormat) {
  onnx::NodeProto matmul;
  matmul.set_op_type("MatMul");
  matmul.add_input("a");
  matmul.add_input("w");
  const WeightUse use = use_of(matmul, {40, 70});
  const PackFamily* family = find_pack_family("gemm_b");
  ASSERT_NE(family, nullptr);
  EXPECT_TRUE(has_machine_formats(*family, device::Machine::kX86_64));
  EXPECT_TRUE(has_machine_formats(*family, device::Machine::kAarch64));
  for (device::IsaLevel level :
       {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
    const resolve::PackRequest r = pack_request(*family, use, level);
    ASSERT_EQ(r.formats.size(), 1u);
    EXPECT_EQ(r.formats[0].name, "f32_gemm_b_n12_kn_f32");
    EXPECT_EQ(r.formats[0].required_architecture, "aarch64-neon");
    EXPECT_TRUE(r.no_format_detail.empty());
    EXPECT_TRUE(family->miss_format(use, level).has_value());
  }
  const resolve::PackRequest ref = pack_request(*family, use, device::IsaLevel::kRef);
  EXPECT_TRUE(ref.formats.empty());
  for (const auto& f : pack_request(*family, use, device::IsaLevel::kAvx512).formats)
    EXPECT_NE(f.required_architecture, "aarch64-neon");
}

TEST(Aarch64Requests, LevelsNameTheirMachine) {
  EXPECT_EQ(level_machine(device::IsaLevel::kAvx512), device::Machine::kX86_64);
  EXPECT_EQ(level_machine(device::IsaLevel::kDotprod), device::Machine::kAarch64);
  EXPECT_FALSE(level_machine(device::IsaLevel::kRef).has_value());
  // The GEMM a runtime packs for on a miss at an aarch64 level is the NEON
  // kernel's 12-column one on an aarch64 build, the portable 16-column one
  // elsewhere, never an x86-64 kernel's.
  const GemmBFormat* f = gemm_b_runtime_format(kernels::PackSourceLayout::kKN,
                                               onnx::TensorProto::FLOAT, device::IsaLevel::kI8mm);
  ASSERT_NE(f, nullptr);
#if defined(__aarch64__)
  EXPECT_EQ(f->nr, 12u);
#else
  EXPECT_EQ(f->nr, 16u);
#endif
  for (const GemmBFormat* g : gemm_b_formats_for(kernels::PackSourceLayout::kKN,
                                                 onnx::TensorProto::FLOAT, device::IsaLevel::kI8mm))
    EXPECT_EQ(g->architecture, "aarch64-neon");
}

}  // namespace
}  // namespace onnx_prepack::pack
