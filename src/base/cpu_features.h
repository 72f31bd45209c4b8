// Host CPU features: CPUID plus XGETBV on x86_64 (a feature counts only when
// the operating system saves its registers), hwcaps on aarch64. Detected once.
// ONNX_PREPACK_MAX_ISA=ref|avx2|avx512 caps what the host reports, so the AVX2
// and portable paths can be tested on an AVX-512 machine (like oneDNN's
// ONEDNN_MAX_CPU_ISA); set_max_isa() does the same from code (tests).
// Built with baseline flags only. The base layer holds it so that every layer
// (BLAKE3 in digest included) sees the same features and the same cap; the
// device layer re-exports it (device/cpu_features.h).
#pragma once

#include <optional>
#include <string_view>

namespace onnx_prepack::base {

struct CpuFeatures {
  // x86_64
  bool sse3 = false, ssse3 = false, sse41 = false, sse42 = false, popcnt = false, cx16 = false;
  bool sahf = false, movbe = false, xsave = false, lzcnt = false, bmi1 = false, bmi2 = false;
  bool avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512cd = false, avx512dq = false, avx512vl = false;
  bool avx512vnni = false, avx512bf16 = false, avx512fp16 = false, avx512vbmi = false;
  bool avx512ifma = false, avxvnni = false;
  bool amx_tile = false, amx_int8 = false, amx_bf16 = false;
  // aarch64
  bool neon = false, fp16 = false, dotprod = false, i8mm = false, bf16 = false, sve = false,
       sve2 = false;
};

// Kernel ISA levels in increasing order; each implies the ones below it.
enum class IsaLevel { kRef = 0, kAvx2 = 1, kAvx512 = 2 };

std::optional<IsaLevel> isa_level_from_name(std::string_view name);  // "ref", "avx2", "avx512"
std::string_view isa_level_name(IsaLevel level);

// What CPUID/XGETBV (or hwcaps) say, without any cap.
CpuFeatures detect_cpu_features();

// Clears every feature above `level` (avx512: no AMX; avx2: no AVX-512; ref: no
// vector extension past the baseline).
CpuFeatures cap_cpu_features(CpuFeatures features, IsaLevel level);

// The highest level the features fully provide (avx2 = AVX2+FMA+F16C,
// avx512 = that plus AVX512F/BW/DQ/VL).
IsaLevel isa_level_of(const CpuFeatures& features);

// The cap in force: set_max_isa() if called, else ONNX_PREPACK_MAX_ISA (read
// once; an unknown value caps at ref with a warning); nullopt = none.
std::optional<IsaLevel> host_isa_cap();

// Detected features capped by host_isa_cap().
CpuFeatures host_cpu_features();
IsaLevel host_isa_level();

// Overrides the cap from now on; nullopt returns to the environment's cap.
void set_max_isa(std::optional<IsaLevel> level);

}  // namespace onnx_prepack::base
