// CPUID/XGETBV (x86_64) and hwcaps (aarch64) detection: the one detector of the
// project (base layer, so that digest, below device, uses it too). format.md §6.
// Built with baseline flags only (no _avx2/_avx512 suffix): it runs before we
// know what the CPU can do.
#include "base/cpu_features.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace onnx_prepack::base {
namespace {

// ref: Linux arch/arm64/include/uapi/asm/hwcap.h (checked against the kernel
// header where it exists: an aarch64 build).
constexpr uint64_t kHwcapFp = uint64_t(1) << 0;
constexpr uint64_t kHwcapAsimd = uint64_t(1) << 1;
constexpr uint64_t kHwcapFphp = uint64_t(1) << 9;
constexpr uint64_t kHwcapAsimdhp = uint64_t(1) << 10;
constexpr uint64_t kHwcapAsimddp = uint64_t(1) << 20;
constexpr uint64_t kHwcapSve = uint64_t(1) << 22;
constexpr uint64_t kHwcap2Sve2 = uint64_t(1) << 1;
constexpr uint64_t kHwcap2I8mm = uint64_t(1) << 13;
constexpr uint64_t kHwcap2Bf16 = uint64_t(1) << 14;
#if defined(__aarch64__)
static_assert(kHwcapFp == HWCAP_FP && kHwcapAsimd == HWCAP_ASIMD && kHwcapFphp == HWCAP_FPHP &&
              kHwcapAsimdhp == HWCAP_ASIMDHP && kHwcapAsimddp == HWCAP_ASIMDDP &&
              kHwcapSve == HWCAP_SVE);
static_assert(kHwcap2Sve2 == HWCAP2_SVE2 && kHwcap2I8mm == HWCAP2_I8MM &&
              kHwcap2Bf16 == HWCAP2_BF16);
#endif

#if defined(__x86_64__)
struct Regs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

// XCR0: which register states the OS saves on context switch.
uint64_t xgetbv0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1; }

// ref: Intel SDM vol. 2A, CPUID, tables 3-8 (leaf 1) and 3-8 leaf 7; vol. 1 13.3 (XCR0).
CpuFeatures detect() {
  CpuFeatures f;
  const uint32_t max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return f;
  const Regs l1 = cpuid(1, 0);
  f.sse3 = bit(l1.ecx, 0);
  f.ssse3 = bit(l1.ecx, 9);
  f.cx16 = bit(l1.ecx, 13);
  f.sse41 = bit(l1.ecx, 19);
  f.sse42 = bit(l1.ecx, 20);
  f.movbe = bit(l1.ecx, 22);
  f.popcnt = bit(l1.ecx, 23);
  f.xsave = bit(l1.ecx, 26);
  const bool osxsave = bit(l1.ecx, 27);
  const bool cpu_avx = bit(l1.ecx, 28);
  const bool cpu_fma = bit(l1.ecx, 12);
  const bool cpu_f16c = bit(l1.ecx, 29);

  uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;                 // XMM (bit 1) + YMM (bit 2)
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;         // XTILECFG (17) + XTILEDATA (18)

  f.avx = cpu_avx && os_avx;
  f.fma = cpu_fma && os_avx;
  f.f16c = cpu_f16c && os_avx;

  const uint32_t max_ext = __get_cpuid_max(0x80000000u, nullptr);
  if (max_ext >= 0x80000001u) {
    const Regs e1 = cpuid(0x80000001u, 0);
    f.sahf = bit(e1.ecx, 0);
    f.lzcnt = bit(e1.ecx, 5);
  }
  if (max_leaf >= 7) {
    const Regs l7 = cpuid(7, 0);
    f.bmi1 = bit(l7.ebx, 3);
    f.avx2 = bit(l7.ebx, 5) && os_avx;
    f.bmi2 = bit(l7.ebx, 8);
    f.avx512f = bit(l7.ebx, 16) && os_avx512;
    f.avx512dq = bit(l7.ebx, 17) && os_avx512;
    f.avx512ifma = bit(l7.ebx, 21) && os_avx512;
    f.avx512cd = bit(l7.ebx, 28) && os_avx512;
    f.avx512bw = bit(l7.ebx, 30) && os_avx512;
    f.avx512vl = bit(l7.ebx, 31) && os_avx512;
    f.avx512vbmi = bit(l7.ecx, 1) && os_avx512;
    f.avx512vnni = bit(l7.ecx, 11) && os_avx512;
    f.avx512fp16 = bit(l7.edx, 23) && os_avx512;
    f.amx_bf16 = bit(l7.edx, 22) && os_amx;
    f.amx_tile = bit(l7.edx, 24) && os_amx;
    f.amx_int8 = bit(l7.edx, 25) && os_amx;
    if (l7.eax >= 1) {
      const Regs l71 = cpuid(7, 1);
      f.avxvnni = bit(l71.eax, 4) && os_avx;
      f.avx512bf16 = bit(l71.eax, 5) && os_avx512;
    }
  }
  return f;
}
#elif defined(__aarch64__)
CpuFeatures detect() { return decode_aarch64_hwcaps(getauxval(AT_HWCAP), getauxval(AT_HWCAP2)); }
#else
CpuFeatures detect() { return CpuFeatures{}; }
#endif

}  // namespace

CpuFeatures decode_aarch64_hwcaps(uint64_t hw, uint64_t hw2) {
  auto all = [](uint64_t word, uint64_t bits) { return (word & bits) == bits; };
  CpuFeatures f;
  f.neon = all(hw, kHwcapFp | kHwcapAsimd);
  f.fp16 = all(hw, kHwcapFphp | kHwcapAsimdhp);
  f.dotprod = all(hw, kHwcapAsimddp);
  f.sve = all(hw, kHwcapSve);
  f.sve2 = all(hw2, kHwcap2Sve2);
  f.i8mm = all(hw2, kHwcap2I8mm);
  f.bf16 = all(hw2, kHwcap2Bf16);
  return f;
}

namespace {

// -1: no cap; otherwise an IsaLevel value.
int read_env_cap() {
  const char* env = std::getenv("ONNX_PREPACK_MAX_ISA");
  if (env == nullptr || *env == '\0') return -1;
  const std::optional<IsaLevel> level = isa_level_from_name(env);
  if (level) return static_cast<int>(*level);
  std::fprintf(
      stderr,
      "onnx-prepack: ONNX_PREPACK_MAX_ISA='%s' is not ref, avx2, avx512, neon, dotprod or i8mm; "
      "capping at ref\n",
      env);
  return static_cast<int>(IsaLevel::kRef);
}

int env_cap() {
  static const int cap = read_env_cap();
  return cap;
}

// -2: follow the environment; -1: no cap; else an IsaLevel value.
std::atomic<int> g_override{-2};

}  // namespace

std::optional<IsaLevel> isa_level_from_name(std::string_view name) {
  if (name == "ref") return IsaLevel::kRef;
  if (name == "avx2") return IsaLevel::kAvx2;
  if (name == "avx512") return IsaLevel::kAvx512;
  if (name == "neon") return IsaLevel::kNeon;
  if (name == "dotprod") return IsaLevel::kDotprod;
  if (name == "i8mm") return IsaLevel::kI8mm;
  return std::nullopt;
}

std::string_view isa_level_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::kRef:
      return "ref";
    case IsaLevel::kAvx2:
      return "avx2";
    case IsaLevel::kAvx512:
      return "avx512";
    case IsaLevel::kNeon:
      return "neon";
    case IsaLevel::kDotprod:
      return "dotprod";
    case IsaLevel::kI8mm:
      return "i8mm";
  }
  return "ref";
}

// Each machine's chain is cut at the cap when the cap is of that chain, and
// at ref otherwise.
CpuFeatures cap_cpu_features(CpuFeatures f, IsaLevel level) {
  const IsaLevel x86 = isa_chain(level) == 1 ? level : IsaLevel::kRef;
  const IsaLevel arm = isa_chain(level) == 2 ? level : IsaLevel::kRef;
  // Any cap: no AMX on x86_64, no SVE on aarch64 (the steps above the top levels).
  f.amx_tile = f.amx_int8 = f.amx_bf16 = false;
  f.sve = f.sve2 = false;
  if (x86 != IsaLevel::kAvx512) {
    f.avx512f = f.avx512bw = f.avx512cd = f.avx512dq = f.avx512vl = false;
    f.avx512vnni = f.avx512bf16 = f.avx512fp16 = f.avx512vbmi = f.avx512ifma = false;
    if (x86 != IsaLevel::kAvx2) f.avx = f.avx2 = f.fma = f.f16c = f.avxvnni = false;
  }
  if (arm != IsaLevel::kI8mm) {
    f.i8mm = f.bf16 = false;
    if (arm != IsaLevel::kDotprod) {
      f.dotprod = f.fp16 = false;
      if (arm != IsaLevel::kNeon) f.neon = false;
    }
  }
  return f;
}

IsaLevel isa_level_of(const CpuFeatures& f) {
  if (f.avx2 && f.fma && f.f16c) {
    if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl) return IsaLevel::kAvx512;
    return IsaLevel::kAvx2;
  }
  if (f.neon) {
    if (f.dotprod && f.i8mm) return IsaLevel::kI8mm;
    if (f.dotprod) return IsaLevel::kDotprod;
    return IsaLevel::kNeon;
  }
  return IsaLevel::kRef;
}

CpuFeatures detect_cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

std::optional<IsaLevel> host_isa_cap() {
  int cap = g_override.load(std::memory_order_relaxed);
  if (cap == -2) cap = env_cap();
  if (cap < 0) return std::nullopt;
  return static_cast<IsaLevel>(cap);
}

void set_max_isa(std::optional<IsaLevel> level) {
  g_override.store(level ? static_cast<int>(*level) : -2, std::memory_order_relaxed);
}

CpuFeatures host_cpu_features() {
  const std::optional<IsaLevel> cap = host_isa_cap();
  return cap ? cap_cpu_features(detect_cpu_features(), *cap) : detect_cpu_features();
}

IsaLevel host_isa_level() { return isa_level_of(host_cpu_features()); }

}  // namespace onnx_prepack::base
