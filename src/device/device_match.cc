// Host description and the device compatibility test (format.md §4.3 rule 4, §6).
// Device layer.
#include "device/device_match.h"

namespace onnx_prepack::device {
namespace {

DeviceMatch mismatch(DeviceMismatch m, std::string detail) { return {m, std::move(detail)}; }

DeviceMatch match_parsed(std::string_view text, const Architecture& arch,
                         const HostDescription& host) {
  const std::string quoted = "architecture '" + std::string(text) + "'";
  if (arch.machine != host.architecture.machine) {
    return mismatch(DeviceMismatch::kMachine,
                    quoted + ": machine " + std::string(machine_name(arch.machine)) + ", host is " +
                        std::string(machine_name(host.architecture.machine)));
  }
  if (!arch.unknown.empty()) {
    return mismatch(DeviceMismatch::kUnknownFeature,
                    quoted + ": unknown feature '" + arch.unknown.front() + "'");
  }
  const FeatureSet missing = arch.features.minus(host.architecture.features);
  if (!missing.empty()) {
    std::string names;
    for (Feature f : missing.list()) {
      if (!names.empty()) names += ", ";
      names += feature_name(f);
    }
    return mismatch(
        DeviceMismatch::kMissingFeature,
        quoted + ": host lacks " + names + " (host is " + host.architecture.to_string() + ")");
  }
  return {};
}

}  // namespace

HostDescription HostDescription::detect() {
  HostDescription h;
  h.architecture.machine = host_machine();
  h.architecture.features = feature_set(host_cpu_features());
  h.isa_cap = host_isa_cap();
  return h;
}

IsaLevel kernel_level(const HostDescription& host) {
  const FeatureSet& f = host.architecture.features;
  CpuFeatures cpu;  // the features isa_level_of reads, from the set
  cpu.avx2 = f.has(Feature::kAvx2);
  cpu.fma = f.has(Feature::kFma);
  cpu.f16c = f.has(Feature::kF16c);
  cpu.avx512f = f.has(Feature::kAvx512f);
  cpu.avx512bw = f.has(Feature::kAvx512bw);
  cpu.avx512dq = f.has(Feature::kAvx512dq);
  cpu.avx512vl = f.has(Feature::kAvx512vl);
  cpu.neon = f.has(Feature::kNeon);
  cpu.dotprod = f.has(Feature::kDotprod);
  cpu.i8mm = f.has(Feature::kI8mm);
  return isa_level_of(cpu);
}

Result<HostDescription> HostDescription::pretend(std::string_view architecture) {
  OP_ASSIGN_OR_RETURN(Architecture arch, parse_architecture(architecture));
  if (!arch.unknown.empty()) {
    return invalid_argument("architecture '" + std::string(architecture) + "': unknown feature '" +
                            arch.unknown.front() + "'");
  }
  HostDescription h;
  h.architecture = std::move(arch);
  h.pretended = true;
  return h;
}

DeviceMatch match_architecture(std::string_view architecture, const HostDescription& host) {
  if (architecture.empty()) return {};
  Result<Architecture> arch = parse_architecture(architecture);
  if (!arch.ok()) return mismatch(DeviceMismatch::kArchitectureSyntax, arch.status().message());
  return match_parsed(architecture, *arch, host);
}

DeviceMatch match_device(const onnx::DeviceProto& device, const HostDescription& host,
                         std::string_view runtime_name, std::string_view runtime_version) {
  if (device.type() != host.device_type) {
    return mismatch(DeviceMismatch::kDeviceType,
                    "device type '" + device.type() + "', host is '" + host.device_type + "'");
  }
  if (device.has_index() && device.index() != 0) {
    return mismatch(DeviceMismatch::kDeviceIndex, "device index " + std::to_string(device.index()) +
                                                      ", a cpu has only ordinal 0");
  }
  if (device.architecture().empty()) {
    return mismatch(DeviceMismatch::kArchitectureSyntax,
                    "architecture '': empty, expected <machine>(-<feature>)*");
  }
  DeviceMatch arch = match_architecture(device.architecture(), host);
  if (!arch.ok()) return arch;
  if (device.runtime() != runtime_name) {
    return mismatch(DeviceMismatch::kRuntime, "runtime '" + device.runtime() + "', this is '" +
                                                  std::string(runtime_name) + "'");
  }
  if (device.runtime_version() != runtime_version) {
    return mismatch(DeviceMismatch::kRuntimeVersion,
                    "runtime_version '" + device.runtime_version() + "', packing ABI is '" +
                        std::string(runtime_version) + "'");
  }
  for (const onnx::StringStringEntryProto& kv : device.metadata_props()) {
    if (kv.key().rfind("required.", 0) == 0) {
      return mismatch(DeviceMismatch::kMetadata,
                      "metadata key '" + kv.key() + "' is required but not understood");
    }
  }
  return {};
}

}  // namespace onnx_prepack::device
