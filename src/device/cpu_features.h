// The host's CPU features and ISA level, as the device layer names them: the
// detector lives in base/cpu_features.h (one detector for every layer, one
// ONNX_PREPACK_MAX_ISA cap); this header re-exports it under device::.
#pragma once

#include "base/cpu_features.h"

namespace onnx_prepack::device {

using base::cap_cpu_features;
using base::CpuFeatures;
using base::detect_cpu_features;
using base::host_cpu_features;
using base::host_isa_cap;
using base::host_isa_level;
using base::isa_chain;
using base::isa_level_from_name;
using base::isa_level_name;
using base::isa_level_of;
using base::IsaLevel;
using base::set_max_isa;

}  // namespace onnx_prepack::device
