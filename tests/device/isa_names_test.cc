// Architecture grammar of format.md §6: parse, print, psABI levels, errors.
#include "device/isa_names.h"

#include <gtest/gtest.h>

namespace onnx_prepack::device {
namespace {

TEST(IsaNames, ParsesAndPrintsCanonically) {
  auto a = parse_architecture("x86_64-fma-avx2");
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->machine, Machine::kX86_64);
  EXPECT_TRUE(a->features.has(Feature::kAvx2));
  EXPECT_TRUE(a->features.has(Feature::kFma));
  EXPECT_EQ(a->to_string(), "x86_64-avx2-fma");
  EXPECT_EQ(parse_architecture("x86_64")->to_string(), "x86_64");
  EXPECT_EQ(parse_architecture("aarch64-neon-dotprod-i8mm")->to_string(),
            "aarch64-neon-dotprod-i8mm");
}

TEST(IsaNames, PsabiLevelsExpand) {
  auto v4 = parse_architecture("x86_64-v4-avx512vnni").value();
  for (Feature f :
       {Feature::kSse42, Feature::kPopcnt, Feature::kAvx2, Feature::kFma, Feature::kF16c,
        Feature::kBmi2, Feature::kMovbe, Feature::kAvx512f, Feature::kAvx512bw, Feature::kAvx512cd,
        Feature::kAvx512dq, Feature::kAvx512vl, Feature::kAvx512vnni}) {
    EXPECT_TRUE(v4.features.has(f)) << feature_name(f);
  }
  EXPECT_TRUE(psabi_level(4).contains(psabi_level(3)));
  EXPECT_TRUE(psabi_level(3).contains(psabi_level(2)));
  EXPECT_FALSE(psabi_level(2).has(Feature::kAvx));
  EXPECT_FALSE(psabi_level(3).has(Feature::kAvx512f));
  EXPECT_TRUE(psabi_level(1).empty());
  EXPECT_EQ(parse_architecture("x86_64-v3")->features, psabi_level(3));
}

TEST(IsaNames, DashedFeatureNamesAndAliases) {
  auto a = parse_architecture("x86_64-amx-int8-amx-tile-avx2").value();
  EXPECT_TRUE(a.features.has(Feature::kAmxInt8));
  EXPECT_TRUE(a.features.has(Feature::kAmxTile));
  EXPECT_TRUE(a.unknown.empty());
  EXPECT_EQ(parse_architecture("x86_64-sse4_1-bmi")->to_string(), "x86_64-sse4.1-bmi1");
  EXPECT_EQ(parse_architecture("aarch64-asimd")->to_string(), "aarch64-neon");
}

TEST(IsaNames, UnknownFeaturesAreKept) {
  auto a = parse_architecture("x86_64-avx2-avx10.2").value();
  ASSERT_EQ(a.unknown.size(), 1u);
  EXPECT_EQ(a.unknown[0], "avx10.2");
  EXPECT_EQ(a.to_string(), "x86_64-avx2-avx10.2");
}

TEST(IsaNames, Errors) {
  for (const char* bad : {"", "x86", "X86_64", "x86_64-", "x86_64--avx2", "x86_64-AVX2",
                          "x86_64-neon", "aarch64-avx2", "riscv64-v", "-avx2"}) {
    auto a = parse_architecture(bad);
    EXPECT_FALSE(a.ok()) << bad;
    if (!a.ok()) {
      EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(a.status().message().find("architecture '"), std::string::npos);
    }
  }
}

TEST(IsaNames, EveryFeatureNameRoundTrips) {
  for (int i = 0; i < static_cast<int>(Feature::kCount); ++i) {
    const Feature f = static_cast<Feature>(i);
    EXPECT_EQ(feature_from_name(feature_name(f)), f);
    const std::string arch =
        std::string(machine_name(feature_machine(f))) + "-" + std::string(feature_name(f));
    auto a = parse_architecture(arch);
    ASSERT_TRUE(a.ok()) << arch;
    // The feature and what it implies (aarch64 extensions: docs/loading.md).
    FeatureSet want = aarch64_implied(f);
    want.add(f);
    EXPECT_EQ(a->features, want) << arch;
    EXPECT_EQ(parse_architecture(a->to_string())->features, want) << arch;
    if (aarch64_implied(f).empty()) {
      EXPECT_EQ(a->to_string(), arch);
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::device
