// The aarch64 side of the device layer, testable on any host: HWCAP decoding
// (a pure function of the bits), the aarch64 kernel levels and their order
// against the x86-64 ones, the cap, architecture strings with implied features,
// kernel levels of pretended hosts and the miss details against them.
#include <gtest/gtest.h>

#include <cstdint>

#include "device/cpu_features.h"
#include "device/device_match.h"
#include "device/isa_names.h"

namespace onnx_prepack::device {
namespace {

// Linux arch/arm64/include/uapi/asm/hwcap.h, written out again so that a
// wrong constant in cpu_features.cc cannot agree with itself.
constexpr uint64_t kFp = 1u << 0, kAsimd = 1u << 1, kFphp = 1u << 9, kAsimdhp = 1u << 10,
                   kAsimddp = 1u << 20, kSve = 1u << 22;
constexpr uint64_t k2Sve2 = 1u << 1, k2I8mm = 1u << 13, k2Bf16 = 1u << 14;

TEST(Aarch64Hwcaps, DecodesEachBitAndNothingElse) {
  const CpuFeatures none = base::decode_aarch64_hwcaps(0, 0);
  EXPECT_EQ(feature_set(none), FeatureSet());
  // A Cortex-A53 (Raspberry Pi 3): fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid.
  const CpuFeatures a53 =
      base::decode_aarch64_hwcaps(kFp | kAsimd | (1u << 2) | (0x1fu << 3) | (1u << 11), 0);
  EXPECT_EQ(feature_set(a53), FeatureSet::of({Feature::kNeon}));
  // A Neoverse N1: + fphp asimdhp asimddp (and atomics, rdm, lrcpc, dcpop: ignored).
  const CpuFeatures n1 = base::decode_aarch64_hwcaps(
      kFp | kAsimd | kFphp | kAsimdhp | kAsimddp | (1u << 8) | (1u << 12) | (1u << 15), 0);
  EXPECT_EQ(feature_set(n1), FeatureSet::of({Feature::kNeon, Feature::kFp16, Feature::kDotprod}));
  // A Neoverse V1-like part: + sve, i8mm, bf16 (HWCAP2), sve2 (HWCAP2 bit 1).
  const CpuFeatures v1 = base::decode_aarch64_hwcaps(
      kFp | kAsimd | kFphp | kAsimdhp | kAsimddp | kSve, k2Sve2 | k2I8mm | k2Bf16);
  EXPECT_TRUE(v1.neon && v1.fp16 && v1.dotprod && v1.sve && v1.sve2 && v1.i8mm && v1.bf16);
  EXPECT_FALSE(v1.avx2 || v1.avx512f);
}

TEST(Aarch64Hwcaps, PairedBitsNeedBoth) {
  // NEON = FP and ASIMD; fp16 = scalar (FPHP) and vector (ASIMDHP) arithmetic.
  EXPECT_FALSE(base::decode_aarch64_hwcaps(kAsimd, 0).neon);
  EXPECT_FALSE(base::decode_aarch64_hwcaps(kFp, 0).neon);
  EXPECT_FALSE(base::decode_aarch64_hwcaps(kFp | kAsimd | kAsimdhp, 0).fp16);
  EXPECT_FALSE(base::decode_aarch64_hwcaps(kFp | kAsimd | kFphp, 0).fp16);
  // HWCAP2 bits read from the second word only: bit 13 of HWCAP is JSCVT, not i8mm.
  EXPECT_FALSE(base::decode_aarch64_hwcaps(kFp | kAsimd | (1u << 13) | (1u << 14), 0).i8mm);
  EXPECT_FALSE(base::decode_aarch64_hwcaps(kFp | kAsimd, kAsimddp).dotprod);
}

TEST(Aarch64Levels, NamesRoundTripAndLevelsFollowFeatures) {
  for (IsaLevel l : {IsaLevel::kRef, IsaLevel::kAvx2, IsaLevel::kAvx512, IsaLevel::kNeon,
                     IsaLevel::kDotprod, IsaLevel::kI8mm}) {
    EXPECT_EQ(isa_level_from_name(isa_level_name(l)), l) << isa_level_name(l);
  }
  EXPECT_EQ(isa_level_name(IsaLevel::kDotprod), "dotprod");
  EXPECT_FALSE(isa_level_from_name("sve").has_value());
  EXPECT_FALSE(isa_level_from_name("asimd").has_value());
  EXPECT_EQ(isa_level_of(base::decode_aarch64_hwcaps(0, 0)), IsaLevel::kRef);
  EXPECT_EQ(isa_level_of(base::decode_aarch64_hwcaps(kFp | kAsimd, k2I8mm)), IsaLevel::kNeon);
  EXPECT_EQ(isa_level_of(base::decode_aarch64_hwcaps(kFp | kAsimd | kAsimddp, 0)),
            IsaLevel::kDotprod);
  EXPECT_EQ(isa_level_of(base::decode_aarch64_hwcaps(kFp | kAsimd | kAsimddp, k2I8mm)),
            IsaLevel::kI8mm);
}

TEST(Aarch64Levels, ChainsAreOrderedAndUnorderedAcrossMachines) {
  EXPECT_LT(IsaLevel::kRef, IsaLevel::kNeon);
  EXPECT_LT(IsaLevel::kNeon, IsaLevel::kDotprod);
  EXPECT_LT(IsaLevel::kDotprod, IsaLevel::kI8mm);
  EXPECT_LT(IsaLevel::kRef, IsaLevel::kAvx2);
  EXPECT_LT(IsaLevel::kAvx2, IsaLevel::kAvx512);
  EXPECT_LE(IsaLevel::kI8mm, IsaLevel::kI8mm);
  EXPECT_GE(IsaLevel::kNeon, IsaLevel::kRef);
  // What x86-64 selectors test (`level >= kAvx2`) and formats test (`isa <= level`)
  // never holds across machines, in either direction.
  for (IsaLevel x : {IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    for (IsaLevel a : {IsaLevel::kNeon, IsaLevel::kDotprod, IsaLevel::kI8mm}) {
      EXPECT_FALSE(a >= x) << isa_level_name(a) << " " << isa_level_name(x);
      EXPECT_FALSE(a <= x || a < x || a > x || x <= a || x >= a);
    }
  }
  EXPECT_EQ(std::max(IsaLevel::kRef, IsaLevel::kDotprod), IsaLevel::kDotprod);
}

TEST(Aarch64Levels, CapCutsTheChainAndOtherMachinesLevelsCapAtRef) {
  const CpuFeatures all = base::decode_aarch64_hwcaps(
      kFp | kAsimd | kFphp | kAsimdhp | kAsimddp | kSve, k2Sve2 | k2I8mm | k2Bf16);
  EXPECT_EQ(isa_level_of(all), IsaLevel::kI8mm);
  auto set = [](IsaLevel cap, const CpuFeatures& f) {
    return feature_set(cap_cpu_features(f, cap));
  };
  EXPECT_EQ(set(IsaLevel::kI8mm, all),
            FeatureSet::of({Feature::kNeon, Feature::kFp16, Feature::kDotprod, Feature::kI8mm,
                            Feature::kBf16}));
  EXPECT_EQ(set(IsaLevel::kDotprod, all),
            FeatureSet::of({Feature::kNeon, Feature::kFp16, Feature::kDotprod}));
  EXPECT_EQ(set(IsaLevel::kNeon, all), FeatureSet::of({Feature::kNeon}));
  EXPECT_EQ(set(IsaLevel::kRef, all), FeatureSet());
  EXPECT_EQ(set(IsaLevel::kAvx512, all), FeatureSet());
  EXPECT_EQ(isa_level_of(cap_cpu_features(all, IsaLevel::kDotprod)), IsaLevel::kDotprod);
  EXPECT_EQ(isa_level_of(cap_cpu_features(all, IsaLevel::kAvx2)), IsaLevel::kRef);
  // And the reverse: an aarch64 cap on x86-64 features is ref (the SSE baseline stays).
  CpuFeatures x86;
  x86.sse42 = x86.avx = x86.avx2 = x86.fma = x86.f16c = x86.avx512f = true;
  const CpuFeatures capped = cap_cpu_features(x86, IsaLevel::kI8mm);
  EXPECT_TRUE(capped.sse42);
  EXPECT_FALSE(capped.avx || capped.avx2 || capped.avx512f);
}

TEST(Aarch64Architecture, ExtensionsImplyWhatTheyRequire) {
  EXPECT_EQ(parse_architecture("aarch64-dotprod")->to_string(), "aarch64-neon-dotprod");
  EXPECT_EQ(parse_architecture("aarch64-i8mm-dotprod")->to_string(), "aarch64-neon-dotprod-i8mm");
  EXPECT_EQ(parse_architecture("aarch64-sve2")->to_string(), "aarch64-neon-fp16-sve-sve2");
  EXPECT_EQ(parse_architecture("aarch64")->to_string(), "aarch64");
  // x86-64 names imply nothing (their strings list every feature, format.md §6).
  EXPECT_EQ(parse_architecture("x86_64-avx2")->to_string(), "x86_64-avx2");
  EXPECT_FALSE(parse_architecture("aarch64-v3").value().unknown.empty());  // no psABI levels
}

TEST(Aarch64Architecture, PretendedHostsHaveTheirKernelLevel) {
  EXPECT_EQ(kernel_level(HostDescription::pretend("aarch64").value()), IsaLevel::kRef);
  EXPECT_EQ(kernel_level(HostDescription::pretend("aarch64-neon").value()), IsaLevel::kNeon);
  EXPECT_EQ(kernel_level(HostDescription::pretend("aarch64-dotprod").value()), IsaLevel::kDotprod);
  EXPECT_EQ(kernel_level(HostDescription::pretend("aarch64-dotprod-i8mm").value()),
            IsaLevel::kI8mm);
  // i8mm without dotprod is no level above neon: i8mm kernels may use both.
  EXPECT_EQ(kernel_level(HostDescription::pretend("aarch64-i8mm").value()), IsaLevel::kNeon);
  EXPECT_EQ(kernel_level(HostDescription::pretend("x86_64-v4").value()), IsaLevel::kAvx512);
}

TEST(Aarch64Architecture, MatchAndMissDetails) {
  const HostDescription n1 = HostDescription::pretend("aarch64-neon-fp16-dotprod").value();
  EXPECT_TRUE(match_architecture("aarch64-dotprod", n1).ok());
  EXPECT_TRUE(match_architecture("aarch64", n1).ok());
  DeviceMatch m = match_architecture("aarch64-dotprod-i8mm", n1);
  EXPECT_EQ(m.mismatch, DeviceMismatch::kMissingFeature);
  EXPECT_NE(m.detail.find("host lacks i8mm (host is aarch64-neon-fp16-dotprod)"), std::string::npos)
      << m.detail;
  m = match_architecture("x86_64-avx2-fma", n1);
  EXPECT_EQ(m.mismatch, DeviceMismatch::kMachine);
  EXPECT_NE(m.detail.find("machine x86_64, host is aarch64"), std::string::npos) << m.detail;
  const HostDescription v3 = HostDescription::pretend("x86_64-v3").value();
  m = match_architecture("aarch64-dotprod", v3);
  EXPECT_EQ(m.mismatch, DeviceMismatch::kMachine);
  EXPECT_NE(m.detail.find("machine aarch64, host is x86_64"), std::string::npos) << m.detail;
}

#if defined(__aarch64__)
// On an aarch64 host (qemu in tools/test_aarch64.sh): the detector is the
// decoder of this process's hwcaps, and NEON is always there on Linux.
TEST(Aarch64Hwcaps, HostDetectionIsTheDecoderOfGetauxval) {
  const CpuFeatures& f = detect_cpu_features();
  EXPECT_TRUE(f.neon);
  EXPECT_FALSE(f.avx2);
  EXPECT_EQ(host_machine(), Machine::kAarch64);
  set_max_isa(IsaLevel::kRef);
  EXPECT_EQ(host_isa_level(), IsaLevel::kRef);
  set_max_isa(IsaLevel::kNeon);
  EXPECT_EQ(host_isa_level(), IsaLevel::kNeon);
  set_max_isa(std::nullopt);
}
#endif

}  // namespace
}  // namespace onnx_prepack::device
