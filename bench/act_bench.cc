// Activation benchmark: the vectorised float activations (kernels/vec_math/vec_act.h)
// at each ISA the host runs against their scalar twin, one thread, on a large
// tensor (a PaddleOCR-sized feature map by default).
//   act_bench [--n ELEMENTS] [--reps N]
// Prints one line per operator: ns per element of a plain scalar loop, of the
// ref twin (std::fma: a library call without -mfma) and of avx2 / avx512, and
// the speedup of the host's variant over the plain loop.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/vec_math/vec_act.h"

namespace {

using namespace onnx_prepack;
using Clock = std::chrono::steady_clock;

double best_ns_per_element(kernels::vec::ActFn fn, int op, const std::vector<float>& x,
                           std::vector<float>& y, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    fn(op, x.data(), y.data(), x.size(), 0.2f, 0.5f);
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s);
  }
  return best * 1e9 / double(x.size());
}

// The plain scalar loop a straightforward implementation would run, one
// function per operator, built with the baseline flags.
template <int op>
void plain_op(const float* x, float* y, size_t n, float p0, float p1) {
  for (size_t i = 0; i < n; ++i) {
    float v = x[i];
    if constexpr (op == kernels::vec::kActClip) y[i] = std::min(std::max(v, p0), p1 + 5.0f);
    if constexpr (op == kernels::vec::kActHardSigmoid)
      y[i] = std::max(0.0f, std::min(1.0f, p0 * v + p1));
    if constexpr (op == kernels::vec::kActHardSwish)
      y[i] = v * std::max(0.0f, std::min(1.0f, v / 6.0f + 0.5f));
    if constexpr (op == kernels::vec::kActLeakyRelu) y[i] = v >= 0 ? v : v * p0;
    if constexpr (op == kernels::vec::kActExp) y[i] = std::exp(v);
    if constexpr (op == kernels::vec::kActSigmoid) y[i] = 1.0f / (1.0f + std::exp(-v));
  }
}

void plain(int op, const float* x, float* y, size_t n, float p0, float p1) {
  switch (op) {
    case kernels::vec::kActClip:
      return plain_op<kernels::vec::kActClip>(x, y, n, p0, p1);
    case kernels::vec::kActHardSigmoid:
      return plain_op<kernels::vec::kActHardSigmoid>(x, y, n, p0, p1);
    case kernels::vec::kActHardSwish:
      return plain_op<kernels::vec::kActHardSwish>(x, y, n, p0, p1);
    case kernels::vec::kActLeakyRelu:
      return plain_op<kernels::vec::kActLeakyRelu>(x, y, n, p0, p1);
    case kernels::vec::kActExp:
      return plain_op<kernels::vec::kActExp>(x, y, n, p0, p1);
    default:
      return plain_op<kernels::vec::kActSigmoid>(x, y, n, p0, p1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = size_t(1) * 96 * 160 * 160;  // a 1x96x160x160 feature map
  int reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--n") == 0) n = size_t(std::atoll(argv[i + 1]));
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  std::vector<float> x(n), y(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-8.0f, 8.0f);
  for (float& v : x) v = d(rng);
  const char* names[] = {"Clip", "HardSigmoid", "HardSwish", "LeakyRelu", "Exp", "Sigmoid"};
  const device::IsaLevel host = device::host_isa_level();
  // The levels of this machine's act_kernel, ref first (aarch64 has no vector
  // activation kernel yet: its neon column times the same ref twin).
#if defined(__x86_64__)
  const device::IsaLevel levels[] = {device::IsaLevel::kRef, device::IsaLevel::kAvx2,
                                     device::IsaLevel::kAvx512};
#elif defined(__aarch64__)
  const device::IsaLevel levels[] = {device::IsaLevel::kRef, device::IsaLevel::kNeon};
#else
  const device::IsaLevel levels[] = {device::IsaLevel::kRef};
#endif
  std::printf("%zu floats, best of %d, ns/element\n%-12s %8s", n, reps, "op", "plain");
  for (device::IsaLevel l : levels)
    std::printf(" %8s", std::string(device::isa_level_name(l)).c_str());
  std::printf(" %8s\n", "speedup");
  for (int op = kernels::vec::kActClip; op <= kernels::vec::kActSigmoid; ++op) {
    std::vector<double> t;
    for (device::IsaLevel l : levels) {
      if (l > host) break;  // a level above the host's (the host's is the last timed)
      t.push_back(best_ns_per_element(kernels::vec::act_kernel(l), op, x, y, reps));
    }
    double p = best_ns_per_element(plain, op, x, y, reps);
    std::printf("%-12s %8.3f", names[op], p);
    for (size_t l = 0; l < std::size(levels); ++l) std::printf(" %8.3f", l < t.size() ? t[l] : 0.0);
    std::printf(" %7.1fx\n", p / t.back());
  }
  return 0;
}
