// Host CPU features: CPUID plus XGETBV on x86_64 (a feature counts only when
// the operating system saves its registers), getauxval(AT_HWCAP/AT_HWCAP2) on
// aarch64, nothing on any other machine (the _ref kernels only). Detected once.
// ONNX_PREPACK_MAX_ISA=ref|avx2|avx512|neon|dotprod|i8mm caps what the host
// reports, so the narrower and portable paths can be tested on a wide machine
// (like oneDNN's ONEDNN_MAX_CPU_ISA); set_max_isa() does the same from code (tests).
// Built with baseline flags only. The base layer holds it so that every layer
// (BLAKE3 in digest included) sees the same features and the same cap; the
// device layer re-exports it (device/cpu_features.h).
#pragma once

#include <cstdint>
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

// Kernel ISA levels, one chain per machine above the shared portable level:
// ref < avx2 < avx512 (x86_64) and ref < neon < dotprod < i8mm (aarch64); each
// implies the ones below it in its chain. neon: Advanced SIMD kernels; dotprod:
// + SDOT/UDOT; i8mm: + dotprod + SMMLA/USMMLA (docs/decisions.md, "Builds per
// architecture"). fp16, bf16 and SVE are features a kernel may test, not levels.
enum class IsaLevel { kRef = 0, kAvx2 = 1, kAvx512 = 2, kNeon = 3, kDotprod = 4, kI8mm = 5 };

// The levels are partially ordered: ref is below every level, and levels of
// different machines are unordered (every comparison between them is false), so
// `level >= IsaLevel::kAvx2` never holds on an aarch64 level, nor a format's
// `isa <= level` across machines. These replace the built-in comparisons.
constexpr int isa_chain(IsaLevel l) {
  return l == IsaLevel::kRef ? 0 : (l == IsaLevel::kAvx2 || l == IsaLevel::kAvx512) ? 1 : 2;
}
constexpr bool operator<=(IsaLevel a, IsaLevel b) {
  return a == IsaLevel::kRef ||
         (isa_chain(a) == isa_chain(b) && static_cast<int>(a) <= static_cast<int>(b));
}
constexpr bool operator>=(IsaLevel a, IsaLevel b) { return b <= a; }
constexpr bool operator<(IsaLevel a, IsaLevel b) { return a != b && a <= b; }
constexpr bool operator>(IsaLevel a, IsaLevel b) { return b < a; }

// "ref", "avx2", "avx512", "neon", "dotprod", "i8mm".
std::optional<IsaLevel> isa_level_from_name(std::string_view name);
std::string_view isa_level_name(IsaLevel level);

// What CPUID/XGETBV (or hwcaps) say, without any cap.
CpuFeatures detect_cpu_features();

// The aarch64 features of getauxval(AT_HWCAP) and getauxval(AT_HWCAP2): a pure
// function of the bits (Linux arch/arm64/include/uapi/asm/hwcap.h) so that any
// host can test it. neon = FP + ASIMD, fp16 = FPHP + ASIMDHP (scalar and vector
// half-precision arithmetic), dotprod = ASIMDDP, sve = SVE, sve2 = HWCAP2_SVE2,
// i8mm = HWCAP2_I8MM, bf16 = HWCAP2_BF16.
CpuFeatures decode_aarch64_hwcaps(uint64_t hwcap, uint64_t hwcap2);

// Clears every feature above `level`. x86_64: avx512 drops AMX; avx2 drops
// AVX-512; ref drops AVX and up (the SSE baseline stays). aarch64: i8mm drops
// SVE/SVE2; dotprod also drops i8mm and bf16; neon also drops dotprod and fp16;
// ref also drops NEON, so that the portable kernels run. A level of the other
// machine caps this machine's features as ref does.
CpuFeatures cap_cpu_features(CpuFeatures features, IsaLevel level);

// The highest level the features fully provide (avx2 = AVX2+FMA+F16C,
// avx512 = that plus AVX512F/BW/DQ/VL; neon = NEON, dotprod = that plus
// dotprod, i8mm = that plus i8mm).
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
