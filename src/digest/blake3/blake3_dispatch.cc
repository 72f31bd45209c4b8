// Run-time choice of the BLAKE3 kernel from the project's one CPU feature
// detector (base/cpu_features.h), so ONNX_PREPACK_MAX_ISA caps hashing like
// every other kernel. Compiled for baseline x86-64, like every file without an
// ISA suffix.
#include <array>

#include "base/cpu_features.h"
#include "digest/blake3/blake3.h"

namespace onnx_prepack::digest::blake3 {
namespace {

constexpr Kernel kKernels[] = {
    {"portable", Isa::kPortable, 1, hash_many_ref},
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
    {"avx2", Isa::kAvx2, 8, hash_many_avx2},
    {"avx512", Isa::kAvx512, 16, hash_many_avx512},
#endif
};

}  // namespace

std::span<const Kernel> kernels() { return kKernels; }

bool kernel_supported(const Kernel& k) {
  switch (k.isa) {
    case Isa::kPortable:
      return true;
    // The _avx2 files are built with -mavx2 -mfma -mf16c: the avx2 level
    // (AVX2+FMA+F16C with the OS saving YMM state) is what they need.
    case Isa::kAvx2:
      return base::host_isa_level() >= base::IsaLevel::kAvx2;
    case Isa::kAvx512:
      return base::host_isa_level() >= base::IsaLevel::kAvx512;
  }
  return false;
}

// Not cached: the cap may change (set_max_isa in tests).
const Kernel& best_kernel() {
  const Kernel* b = &kKernels[0];
  for (const Kernel& k : kKernels) {
    if (kernel_supported(k)) b = &k;
  }
  return *b;
}

const Kernel* find_kernel(std::string_view name) {
  for (const Kernel& k : kKernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace onnx_prepack::digest::blake3
