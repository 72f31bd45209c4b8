// Run-time choice of the BLAKE3 kernel from CPUID feature bits and the register state the
// OS saves (XGETBV). Compiled for baseline x86-64, like every file without an ISA suffix.
#include <cpuid.h>

#include <array>

#include "digest/blake3/blake3.h"

namespace onnx_prepack::digest::blake3 {
namespace {

constexpr std::array<Kernel, 3> kKernels = {{
    {"portable", Isa::kPortable, 1, hash_many_ref},
    {"avx2", Isa::kAvx2, 8, hash_many_avx2},
    {"avx512", Isa::kAvx512, 16, hash_many_avx512},
}};

struct CpuSupport {
  bool avx2 = false;
  bool avx512 = false;
};

uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}

CpuSupport detect() {
  CpuSupport s;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return s;
  const bool osxsave = ecx & (1u << 27);
  const bool avx = ecx & (1u << 28);
  const bool fma = ecx & (1u << 12);
  const bool f16c = ecx & (1u << 29);
  if (!osxsave || !avx) return s;
  const uint64_t xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;    // SSE and AVX registers
  const bool zmm_state = (xcr0 & 0xE0) == 0xE0;  // opmask, ZMM0-15 upper, ZMM16-31
  if (__get_cpuid_max(0, nullptr) < 7) return s;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool avx2 = ebx & (1u << 5);
  const bool avx512f = ebx & (1u << 16);
  const bool avx512dq = ebx & (1u << 17);
  const bool avx512bw = ebx & (1u << 30);
  const bool avx512vl = ebx & (1u << 31);
  // The _avx2 files are built with -mavx2 -mfma -mf16c, so all three are required.
  s.avx2 = ymm_state && avx2 && fma && f16c;
  s.avx512 = s.avx2 && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
  return s;
}

const CpuSupport& support() {
  static const CpuSupport s = detect();
  return s;
}

}  // namespace

std::span<const Kernel> kernels() { return kKernels; }

bool kernel_supported(const Kernel& k) {
  switch (k.isa) {
    case Isa::kPortable:
      return true;
    case Isa::kAvx2:
      return support().avx2;
    case Isa::kAvx512:
      return support().avx512;
  }
  return false;
}

const Kernel& best_kernel() {
  static const Kernel* best = [] {
    const Kernel* b = &kKernels[0];
    for (const Kernel& k : kKernels) {
      if (kernel_supported(k)) b = &k;
    }
    return b;
  }();
  return *best;
}

const Kernel* find_kernel(std::string_view name) {
  for (const Kernel& k : kKernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace onnx_prepack::digest::blake3
