// The host as the loading rules see it (format.md §4.3 rule 4, §6): device type,
// CPU architecture, and this runtime's identity; plus the compatibility test
// of a DeviceProto against it. Device layer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "device/isa_names.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::device {

// Our runtime identity (format.md §6): DeviceProto.runtime and runtime_version of the
// entries we write and read. The packing ABI version changes only when some
// format's bytes change meaning.
inline constexpr std::string_view kRuntimeName = "onnx-prepack";
inline constexpr std::string_view kPackingAbiVersion = "1";

struct HostDescription {
  std::string device_type = "cpu";
  Architecture architecture;        // features the OS enabled, after any cap
  bool pretended = false;           // built from a string (`explain --arch`), not detected
  std::optional<IsaLevel> isa_cap;  // ONNX_PREPACK_MAX_ISA or set_max_isa in force

  // The running host: host_cpu_features() (capped by ONNX_PREPACK_MAX_ISA).
  static HostDescription detect();
  // A host that has exactly the features of `architecture` (psABI levels
  // expanded). Errors as parse_architecture; unknown feature names are refused.
  static Result<HostDescription> pretend(std::string_view architecture);
};

// The kernel ISA level of a host's features (isa_level_of over them): what a
// pretended host (`explain --arch`) would run.
IsaLevel kernel_level(const HostDescription& host);

// Why a device is not usable here; kOk when it is.
enum class DeviceMismatch {
  kOk,
  kDeviceType,          // type is not the host's ("cuda" on a CPU host)
  kDeviceIndex,         // an ordinal other than 0 on a CPU
  kArchitectureSyntax,  // architecture string does not parse
  kMachine,             // x86_64 entry on an aarch64 host or the reverse
  kMissingFeature,      // a listed feature the host lacks or the OS disabled
  kUnknownFeature,      // a feature name this build does not know
  kRuntime,             // runtime is not ours
  kRuntimeVersion,      // runtime_version differs from our packing ABI version
  kMetadata,            // a required metadata key we do not understand
};

struct DeviceMatch {
  DeviceMismatch mismatch = DeviceMismatch::kOk;
  std::string detail;  // "architecture 'x86_64-avx512f' needs avx512f, host lacks it"
  bool ok() const { return mismatch == DeviceMismatch::kOk; }
};

// Checks a device descriptor against the host and a runtime identity, in the
// order: type, index, architecture, runtime, runtime version, metadata.
// Metadata (decision): keys starting with "required." must be understood; we
// understand none yet, so any such key is a mismatch; other keys are
// informational.
DeviceMatch match_device(const onnx::DeviceProto& device, const HostDescription& host,
                         std::string_view runtime_name = kRuntimeName,
                         std::string_view runtime_version = kPackingAbiVersion);

// Host supports every feature of `architecture` (same machine, no unknown
// names). Used for a format's required ISA.
DeviceMatch match_architecture(std::string_view architecture, const HostDescription& host);

}  // namespace onnx_prepack::device
