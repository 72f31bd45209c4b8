// The pack layer at aarch64 kernel levels, before any aarch64 format exists:
// the requests accept no x86-64 format and say why per family, the baseline
// integer formats stay acceptable (their architecture then misses as
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

TEST(Aarch64Requests, FloatFamiliesAcceptNothingAndSayWhy) {
  onnx::NodeProto matmul;
  matmul.set_op_type("MatMul");
  matmul.add_input("a");
  matmul.add_input("w");
  onnx::NodeProto conv;
  conv.set_op_type("Conv");
  conv.add_input("x");
  conv.add_input("w");
  const std::pair<const char*, WeightUse> cases[] = {{"gemm_b", use_of(matmul, {40, 70})},
                                                     {"conv_filter", use_of(conv, {8, 3, 3, 3})}};
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

TEST(Aarch64Requests, LevelsNameTheirMachine) {
  EXPECT_EQ(level_machine(device::IsaLevel::kAvx512), device::Machine::kX86_64);
  EXPECT_EQ(level_machine(device::IsaLevel::kDotprod), device::Machine::kAarch64);
  EXPECT_FALSE(level_machine(device::IsaLevel::kRef).has_value());
  // The GEMM a runtime packs for on a miss at an aarch64 level is the portable
  // 16-column one, never an x86-64 kernel's.
  const GemmBFormat* f = gemm_b_runtime_format(kernels::PackSourceLayout::kKN,
                                               onnx::TensorProto::FLOAT, device::IsaLevel::kI8mm);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->nr, 16u);
  EXPECT_TRUE(gemm_b_formats_for(kernels::PackSourceLayout::kKN, onnx::TensorProto::FLOAT,
                                 device::IsaLevel::kI8mm)
                  .empty());
}

}  // namespace
}  // namespace onnx_prepack::pack
