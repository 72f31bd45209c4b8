// GEMM benchmark: our packed-B f32 GEMM against OpenBLAS cblas_sgemm at the
// same thread count (results compared), plus B pack throughput.
//   gemm_bench [--quick] [--reps N] [--m M]... [--k K] [--n N] [--threads T] [--kc KC]
//              [--cpu-time] [--no-pack] [--kernel NAME]
// Prints one line per case: M K N threads, GFLOP/s of both, ratio ours/openblas.
// Without OpenBLAS (OP_GEMM_BENCH_OPENBLAS undefined, e.g. the aarch64 cross
// build, which has no arm64 OpenBLAS) it times ours only and checks it against a
// plain triple loop accumulating in double, computed once per case.
#if defined(OP_GEMM_BENCH_OPENBLAS)
#include <cblas.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "kernels/f32_gemm/f32_gemm.h"
#include "kernels/f32_gemm/gemm_driver.h"

#if defined(OP_GEMM_BENCH_OPENBLAS)
extern "C" char* openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int);
#endif

namespace {

using namespace onnx_prepack;
using Clock = std::chrono::steady_clock;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// --cpu-time: process CPU time instead of wall time, for a shared machine
// (meaningful with 1 thread only).
bool g_cpu_time = false;

double now_seconds() {
  if (!g_cpu_time) return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

template <typename F>
double best_seconds(int reps, double min_total, F&& f) {
  double best = 1e30, total = 0;
  for (int r = 0; r < reps || total < min_total; ++r) {
    const double t0 = now_seconds();
    f();
    const double s = now_seconds() - t0;
    best = std::min(best, s);
    total += s;
    if (r > 1000) break;
  }
  return best;
}

#if !defined(OP_GEMM_BENCH_OPENBLAS)
// C = A B for row-major A (M x K) and B (K x N), accumulated in double.
void reference_gemm(size_t m, size_t k, size_t n, const float* a, const float* b, float* c) {
  std::vector<double> row(n);
  for (size_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (size_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      for (size_t j = 0; j < n; ++j) row[j] += av * double(b[p * n + j]);
    }
    for (size_t j = 0; j < n; ++j) c[i * n + j] = float(row[j]);
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool quick = false;
  size_t kc = 0;
  int only_threads = 0;
  std::vector<size_t> only_m;
  size_t only_k = 0, only_n = 0;
  bool pack = true;
  const char* only_kernel = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--cpu-time") == 0) g_cpu_time = true;
    if (std::strcmp(argv[i], "--no-pack") == 0) pack = false;
    if (std::strcmp(argv[i], "--kernel") == 0 && i + 1 < argc) only_kernel = argv[++i];
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) only_threads = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--kc") == 0 && i + 1 < argc) kc = size_t(std::atoll(argv[++i]));
    if (std::strcmp(argv[i], "--k") == 0 && i + 1 < argc) only_k = size_t(std::atoll(argv[++i]));
    if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) only_n = size_t(std::atoll(argv[++i]));
    if (std::strcmp(argv[i], "--m") == 0 && i + 1 < argc)
      only_m.push_back(size_t(std::atoll(argv[++i])));
  }
  const device::IsaLevel level = device::host_isa_level();
  // The kernel the runtime uses at this level (x86-64: 32 columns at AVX-512, 16 at
  // AVX2; aarch64: the 12-column NEON one; 16-column portable at ref).
  const kernels::F32GemmKernel* kern = &kernels::f32_gemm_native(level);
  uint32_t nr = kern->nr;
  if (only_kernel != nullptr) {
    kern = nullptr;
    for (const auto& k : kernels::kF32GemmKernels) {
      if (std::strcmp(k.name, only_kernel) == 0 && k.isa <= level) kern = &k;
    }
    if (kern == nullptr) {
      std::fprintf(stderr, "gemm_bench: no kernel %s on this host\n", only_kernel);
      return 2;
    }
    nr = kern->nr;
  }
#if defined(OP_GEMM_BENCH_OPENBLAS)
  const char* blas = openblas_get_corename();
#else
  const char* blas = "none (checked against a double-accumulating loop)";
#endif
  std::printf("openblas core: %s; ours: %s (isa %s)\n", blas, kern->name,
              std::string(device::isa_level_name(level)).c_str());
  std::printf("%6s %6s %6s %3s %10s %10s %7s %s\n", "M", "K", "N", "thr", "ours_GF/s", "blas_GF/s",
              "ratio", "check");
  std::vector<size_t> ms =
      quick ? std::vector<size_t>{1, 128} : std::vector<size_t>{1, 16, 128, 1024};
  if (!only_m.empty()) ms = only_m;
  std::vector<size_t> ks = quick ? std::vector<size_t>{1024} : std::vector<size_t>{1024, 4096};
  if (only_k) ks = {only_k};
  int failures = 0;
  for (size_t kn : ks) {
    const size_t K = kn, N = only_n ? only_n : kn;
    const auto b = random_floats(K * N, 2);
    std::vector<float> packed(kernels::packed_b_floats(K, N, nr));
    kernels::F32PackBArgs pa{
        b.data(),     kernels::PackSourceLayout::kKN, kernels::PackSourceType::kFloat, K, N, nr,
        packed.data()};
    if (!kernels::f32_pack_b(pa).ok()) return 3;
    for (size_t M : ms) {
      const auto a = random_floats(M * K, 1);
      std::vector<float> c_ours(M * N), c_blas(M * N);
#if !defined(OP_GEMM_BENCH_OPENBLAS)
      reference_gemm(M, K, N, a.data(), b.data(), c_blas.data());
#endif
      for (int threads : {1, 2}) {
        if (only_threads && threads != only_threads) continue;
        base::ThreadPool pool{static_cast<size_t>(threads)};
#if defined(OP_GEMM_BENCH_OPENBLAS)
        openblas_set_num_threads(threads);
#endif
        kernels::F32GemmArgs g;
        g.m = M;
        g.a = a.data();
        g.lda = K;
        g.b = {packed.data(), K, N, nr};
        g.c = c_ours.data();
        g.ldc = N;
        kernels::F32GemmOptions o;
        o.pool = &pool;
        o.kernel = kern;
        o.kc = kc;
        const double flops = 2.0 * double(M) * double(N) * double(K);
        const double min_total = 0.3;
        const double t_ours = best_seconds(reps, min_total, [&] { (void)kernels::f32_gemm(g, o); });
#if defined(OP_GEMM_BENCH_OPENBLAS)
        const double t_blas = best_seconds(reps, min_total, [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f,
                      a.data(), int(K), b.data(), int(N), 0.0f, c_blas.data(), int(N));
        });
#else
        const double t_blas = 0;  // printed as 0 GFLOP/s and ratio 0: no OpenBLAS
#endif
        double max_err = 0;
        for (size_t i = 0; i < M * N; ++i) {
          max_err = std::max(max_err, double(std::fabs(c_ours[i] - c_blas[i])));
        }
        const bool ok = max_err <= 1e-3 * std::sqrt(double(K));
        failures += !ok;
        std::printf("%6zu %6zu %6zu %3d %10.1f %10.1f %7.2f %s (max diff %.2g)\n", M, K, N, threads,
                    flops / t_ours * 1e-9, t_blas > 0 ? flops / t_blas * 1e-9 : 0.0,
                    t_blas / t_ours, ok ? "ok" : "MISMATCH", max_err);
        std::fflush(stdout);
      }
    }
  }
  if (!pack) return failures ? 1 : 0;
  // Pack throughput, single thread, source bytes per second.
  std::printf("\npack throughput (1 thread, source bytes):\n");
  const size_t K = 4096, N = 4096;
  const auto src32 = random_floats(K * N, 5);
  std::vector<uint16_t> src16(K * N);
  for (size_t i = 0; i < src16.size(); ++i) src16[i] = uint16_t(0x3c00 + (i % 1000));
  for (uint32_t pnr : {16u, 32u}) {
    std::vector<float> dst(kernels::packed_b_floats(K, N, pnr));
    for (auto layout : {kernels::PackSourceLayout::kKN, kernels::PackSourceLayout::kNK}) {
      for (auto type : {kernels::PackSourceType::kFloat, kernels::PackSourceType::kFloat16}) {
        const bool f16 = type == kernels::PackSourceType::kFloat16;
        kernels::F32PackBArgs pa{f16 ? static_cast<const void*>(src16.data()) : src32.data(),
                                 layout,
                                 type,
                                 K,
                                 N,
                                 pnr,
                                 dst.data()};
        const double t = best_seconds(reps, 0.3, [&] { (void)kernels::f32_pack_b(pa); });
        const double bytes = double(K * N) * (f16 ? 2 : 4);
        std::printf("  nr=%u %s %s: %.2f GB/s source (%.2f GB/s written)\n", pnr,
                    layout == kernels::PackSourceLayout::kKN ? "KxN" : "NxK",
                    f16 ? "FLOAT16" : "FLOAT  ", bytes / t * 1e-9,
                    double(dst.size()) * 4 / t * 1e-9);
        std::fflush(stdout);
      }
    }
  }
  return failures ? 1 : 0;
}
