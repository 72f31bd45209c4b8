// Host description and compatibility (format.md §4.3 rule 4, §6), CPU detection.
#include "device/device_match.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "device/cpu_features.h"

namespace onnx_prepack::device {
namespace {

onnx::DeviceProto cpu(const std::string& arch) {
  onnx::DeviceProto d;
  d.set_type("cpu");
  d.set_architecture(arch);
  d.set_runtime(std::string(kRuntimeName));
  d.set_runtime_version(std::string(kPackingAbiVersion));
  return d;
}

TEST(DeviceMatch, RuntimeIdentity) {
  EXPECT_EQ(kRuntimeName, "onnx-prepack");
  EXPECT_EQ(kPackingAbiVersion, "1");
}

TEST(DeviceMatch, HostNeedsEveryListedFeature) {
  const HostDescription v3 = HostDescription::pretend("x86_64-v3").value();
  EXPECT_TRUE(match_device(cpu("x86_64-avx2-fma"), v3).ok());
  EXPECT_TRUE(match_device(cpu("x86_64-v2"), v3).ok());
  EXPECT_TRUE(match_device(cpu("x86_64"), v3).ok());
  DeviceMatch m = match_device(cpu("x86_64-v4"), v3);
  EXPECT_EQ(m.mismatch, DeviceMismatch::kMissingFeature);
  EXPECT_NE(m.detail.find("avx512f"), std::string::npos) << m.detail;
  EXPECT_EQ(match_device(cpu("aarch64-neon"), v3).mismatch, DeviceMismatch::kMachine);
  EXPECT_EQ(match_device(cpu("x86_64-avx2-newthing"), v3).mismatch,
            DeviceMismatch::kUnknownFeature);
  EXPECT_EQ(match_device(cpu("x86_64-AVX2"), v3).mismatch, DeviceMismatch::kArchitectureSyntax);
  EXPECT_EQ(match_device(cpu(""), v3).mismatch, DeviceMismatch::kArchitectureSyntax);
}

TEST(DeviceMatch, TypeIndexRuntimeVersionMetadata) {
  const HostDescription h = HostDescription::pretend("x86_64-v3").value();
  onnx::DeviceProto d = cpu("x86_64");
  d.set_type("cuda");
  EXPECT_EQ(match_device(d, h).mismatch, DeviceMismatch::kDeviceType);
  d = cpu("x86_64");
  d.set_index(0);
  EXPECT_TRUE(match_device(d, h).ok());
  d.set_index(1);
  EXPECT_EQ(match_device(d, h).mismatch, DeviceMismatch::kDeviceIndex);
  d = cpu("x86_64");
  d.set_runtime("onnxruntime");
  EXPECT_EQ(match_device(d, h).mismatch, DeviceMismatch::kRuntime);
  d = cpu("x86_64");
  d.set_runtime_version("01");
  EXPECT_EQ(match_device(d, h).mismatch, DeviceMismatch::kRuntimeVersion);
  d = cpu("x86_64");
  auto* kv = d.add_metadata_props();
  kv->set_key("note");
  kv->set_value("informational");
  EXPECT_TRUE(match_device(d, h).ok());
  kv->set_key("required.thing");
  EXPECT_EQ(match_device(d, h).mismatch, DeviceMismatch::kMetadata);
}

TEST(DeviceMatch, PretendRefusesUnknownFeatures) {
  EXPECT_FALSE(HostDescription::pretend("x86_64-foo").ok());
  EXPECT_FALSE(HostDescription::pretend("sparc").ok());
  EXPECT_TRUE(HostDescription::pretend("x86_64-v4")->pretended);
}

#if defined(__x86_64__)
// The detected features agree with the kernel's view in /proc/cpuinfo.
TEST(CpuFeatures, AgreesWithProcCpuinfo) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  }
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags";
  auto has = [&](const char* f) {
    return flags.find(" " + std::string(f) + " ") != std::string::npos;
  };
  const CpuFeatures& c = detect_cpu_features();
  EXPECT_EQ(c.avx2, has("avx2"));
  EXPECT_EQ(c.fma, has("fma"));
  EXPECT_EQ(c.f16c, has("f16c"));
  EXPECT_EQ(c.avx512f, has("avx512f"));
  EXPECT_EQ(c.avx512bw, has("avx512bw"));
  EXPECT_EQ(c.avx512vl, has("avx512vl"));
  EXPECT_EQ(c.avx512vnni, has("avx512_vnni"));
  EXPECT_EQ(c.sse42, has("sse4_2"));
  EXPECT_EQ(c.popcnt, has("popcnt"));
  EXPECT_EQ(c.bmi2, has("bmi2"));
}

TEST(CpuFeatures, HostDescriptionFollowsTheCap) {
  set_max_isa(IsaLevel::kAvx2);
  HostDescription h = HostDescription::detect();
  EXPECT_FALSE(h.architecture.features.has(Feature::kAvx512f));
  EXPECT_EQ(h.isa_cap, IsaLevel::kAvx2);
  EXPECT_EQ(h.architecture.features.has(Feature::kAvx2), detect_cpu_features().avx2);
  set_max_isa(IsaLevel::kRef);
  h = HostDescription::detect();
  EXPECT_FALSE(h.architecture.features.has(Feature::kAvx2));
  EXPECT_FALSE(match_device(cpu("x86_64-avx2"), h).ok());
  EXPECT_TRUE(match_device(cpu("x86_64"), h).ok());
  set_max_isa(std::nullopt);  // back to ONNX_PREPACK_MAX_ISA, if any
  h = HostDescription::detect();
  EXPECT_EQ(h.architecture.features, feature_set(host_cpu_features()));
}
#endif

}  // namespace
}  // namespace onnx_prepack::device
