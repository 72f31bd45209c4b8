#include "runtime/ops/gemm.h"

#include <algorithm>

namespace onnx_prepack::runtime {
namespace {

using MicroKernel = void (*)(size_t, size_t, size_t, const float*, size_t, const float*, size_t,
                             float*, size_t, int);

struct KernelChoice {
  MicroKernel fn;
  int64_t mr;
  int64_t nr;
  int64_t kc;
};

KernelChoice choose() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {f32_matmul_8x32_avx512, 8, 32, 128};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {f32_matmul_6x16_avx2, 6, 16, 256};
  }
  return {f32_matmul_4x16_ref, 4, 16, 256};
}

}  // namespace

void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc, bool accumulate, base::ThreadPool* pool) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    }
    return;
  }
  static const KernelChoice kc = choose();
  if (m <= 2) {
    // Matrix-vector: stream B row by row (sequential reads, C slice in L1),
    // columns split over the pool.
    const int64_t kCols = 2048;
    int64_t tasks = (n + kCols - 1) / kCols;
    auto gemv = [&](size_t t, size_t) {
      int64_t j0 = int64_t(t) * kCols, j1 = std::min(n, j0 + kCols);
      for (int64_t i = 0; i < m; ++i) {
        float* cr = c + i * ldc;
        const float* ar = a + i * lda;
        for (int64_t kk = 0; kk < k; ++kk) {
          const float av = ar[kk];
          const float* br = b + kk * ldb;
          if (kk == 0 && !accumulate) {
            for (int64_t j = j0; j < j1; ++j) cr[j] = av * br[j];
          } else {
            for (int64_t j = j0; j < j1; ++j) cr[j] += av * br[j];
          }
        }
      }
    };
    if (pool && tasks > 1 && double(n) * double(k) > 65536.0) {
      pool->parallel_for(size_t(tasks), gemv);
    } else {
      for (int64_t t = 0; t < tasks; ++t) gemv(size_t(t), 0);
    }
    return;
  }
  // Split the output into tasks: column blocks (multiples of NR) first, rows
  // when there are few columns; each task keeps at least ~64K multiply-adds.
  size_t threads = pool ? pool->size() : 1;
  int64_t n_blocks = (n + kc.nr - 1) / kc.nr;
  int64_t m_blocks = (m + kc.mr - 1) / kc.mr;
  double work = double(m) * double(n) * double(k);
  int64_t want = threads > 1 ? int64_t(std::min<double>(double(threads) * 4, work / 65536.0)) : 1;
  want = std::max<int64_t>(want, 1);
  int64_t n_tasks = std::min(n_blocks, want);
  int64_t m_tasks = std::min(m_blocks, std::max<int64_t>(1, want / n_tasks));
  int64_t n_per = (n_blocks + n_tasks - 1) / n_tasks * kc.nr;
  int64_t m_per = (m_blocks + m_tasks - 1) / m_tasks * kc.mr;
  n_tasks = (n + n_per - 1) / n_per;
  m_tasks = (m + m_per - 1) / m_per;

  auto task = [&](size_t t, size_t) {
    int64_t mi = int64_t(t) / n_tasks, ni = int64_t(t) % n_tasks;
    int64_t m0 = mi * m_per, m1 = std::min(m, m0 + m_per);
    int64_t n0 = ni * n_per, n1 = std::min(n, n0 + n_per);
    for (int64_t k0 = 0; k0 < k; k0 += kc.kc) {
      int64_t kb = std::min(kc.kc, k - k0);
      int acc = (accumulate || k0 > 0) ? 1 : 0;
      for (int64_t j = n0; j < n1; j += kc.nr) {
        size_t nr = size_t(std::min(kc.nr, n1 - j));
        for (int64_t i = m0; i < m1; i += kc.mr) {
          size_t mr = size_t(std::min(kc.mr, m1 - i));
          kc.fn(mr, nr, size_t(kb), a + i * lda + k0, size_t(lda), b + k0 * ldb + j, size_t(ldb),
                c + i * ldc + j, size_t(ldc), acc);
        }
      }
    }
  };
  size_t tasks = size_t(n_tasks * m_tasks);
  if (pool && tasks > 1) {
    pool->parallel_for(tasks, task);
  } else {
    for (size_t t = 0; t < tasks; ++t) task(t, 0);
  }
}

}  // namespace onnx_prepack::runtime
