// The pack layer at aarch64 kernel levels: the requests accept no x86-64
// format; a family without an aarch64 format says why, the GEMM B family
// accepts its NEON formats, the baseline integer formats stay acceptable (their
// architecture then misses as incompatible_device), and a miss still has a
// format to pack into.
#include <gtest/gtest.h>

#include "device/cpu_features.h"
#include "pack/format_list.h"
#include "pack/pack_family.h"

namespace onnx_prepack::pack {
namespace {

WeightUse use_of(const onnx::NodeProto& node, std::vector<int64_t> dims) {
  return {"w", node.op_type(), &node, 1, onnx::TensorProto::FLOAT, std::move(dims), nullptr};
}

TEST(Aarch64Requests, ConvFiltersAcceptNothingAndSayWhy) {
  onnx::NodeProto conv;
  conv.set_op_type("Conv");
  conv.add_input("x");
  conv.add_input("w");
  const std::pair<const char*, WeightUse> cases[] = {{"conv_filter", use_of(conv, {8, 3, 3, 3})}};
  for (const auto& [family_name, use] : cases) {
    const PackFamily* family = find_pack_family(family_name);
    ASSERT_NE(family, nullptr);
    EXPECT_TRUE(has_machine_formats(*family, device::Machine::kX86_64));
    EXPECT_FALSE(has_machine_formats(*family, device::Machine::kAarch64));
    for (device::IsaLevel level :
         {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
      const resolve::PackRequest r = pack_request(*family, use, level);
      EXPECT_TRUE(r.formats.empty()) << family_name;
      EXPECT_EQ(r.no_format_detail,
                std::string("no packed format for family ") + family_name + " on aarch64");
      // A miss still packs: into the portable kernels' layout.
      EXPECT_TRUE(family->miss_format(use, level).has_value()) << family_name;
    }
    // At ref (either machine) the request is empty too, without a machine to blame.
    const resolve::PackRequest ref = pack_request(*family, use, device::IsaLevel::kRef);
    EXPECT_TRUE(ref.formats.empty());
    EXPECT_TRUE(ref.no_format_detail.empty());
    EXPECT_FALSE(pack_request(*family, use, device::IsaLevel::kAvx2).formats.empty());
  }
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
