// Block-quantized GEMM driver: prepares A per accuracy level (each row once),
// splits panels over the pool (in pairs, the SIMD kernels' widest tile) and,
// when there are too few panels to go round, rows too. With M > 1 a kernel gets
// every row of its share against one panel pair at a time, so the pair
// (~100 KiB for K = 4096) stays in L2 while each row tile reads it. Compiled for
// the baseline (x86-64, armv8-a); ISA code is reached only through QGemmKernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// Rows per task when rows are split over the pool.
constexpr int64_t kRowTile = 4;

// Scratch for the prepared rows of A, 64-byte aligned.
struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

size_t round64(size_t n) { return (n + 63) / 64 * 64; }

}  // namespace

QGemmKernels q_gemm_ref_kernels() { return {"q_gemm_ref", q_gemm_l0_ref, q_gemm_l4_ref}; }

QGemmKernels q_gemm_select(const device::CpuFeatures& f) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  const bool avx512 = f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.avx2 && f.fma;
  if (avx512 && f.avx512vnni) return {"q_gemm_avx512vnni", q_gemm_l0_avx512, q_gemm_l4_avx512vnni};
  if (avx512) return {"q_gemm_avx512", q_gemm_l0_avx512, q_gemm_l4_avx512};
  if (f.avx2 && f.fma && f.f16c) return {"q_gemm_avx2", q_gemm_l0_avx2, q_gemm_l4_avx2};
#elif defined(__aarch64__)  // the _neon / _dotprod / _i8mm units are built on aarch64 only
  if (f.neon && f.dotprod && f.i8mm) return {"q_gemm_i8mm", q_gemm_l0_neon, q_gemm_l4_i8mm};
  if (f.neon && f.dotprod) return {"q_gemm_dotprod", q_gemm_l0_neon, q_gemm_l4_dotprod};
  if (f.neon) return {"q_gemm_neon", q_gemm_l0_neon, q_gemm_l4_ref};
#else
  (void)f;
#endif
  return q_gemm_ref_kernels();
}

void q_gemm(const QGemmKernels& kernels, const QGemmShape& s, int level, const uint8_t* packed,
            int64_t M, const float* a, size_t lda, float* c, size_t ldc, const float* bias,
            base::ThreadPool* pool) {
  if (M <= 0 || s.N <= 0) return;
  const bool l4 = level == 4;
  const size_t kp = size_t(s.k_padded()), kb = size_t(s.k_blocks());
  const size_t row_bytes =
      l4 ? round64(kp) + 2 * round64(kb * 4) : round64(kp * 4) + round64(kb * 4);
  std::unique_ptr<uint8_t[], AlignedFree> scratch(
      static_cast<uint8_t*>(::operator new[](row_bytes* size_t(M), std::align_val_t(64))));
  std::vector<QARow> rows(static_cast<size_t>(M));
  for (int64_t m = 0; m < M; ++m) {
    uint8_t* base = scratch.get() + row_bytes * size_t(m);
    const float* src = a + size_t(m) * lda;
    QARow& row = rows[size_t(m)];
    if (l4) {
      auto* qa = reinterpret_cast<int8_t*>(base);
      auto* sa = reinterpret_cast<float*>(base + round64(kp));
      auto* qsum = reinterpret_cast<float*>(base + round64(kp) + round64(kb * 4));
      for (size_t b = 0; b < kb; ++b) {
        const size_t k0 = b * size_t(s.block);
        const size_t k1 = std::min(k0 + size_t(s.block), size_t(s.K));
        float amax = 0;
        for (size_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(src[k]));
        const float scale = amax / 127.0f;
        const float inv = amax > 0 ? 127.0f / amax : 0.0f;
        int32_t sum = 0;
        for (size_t k = k0; k < k0 + size_t(s.block); ++k) {
          const int32_t q = k < k1 ? int32_t(std::nearbyint(src[k] * inv)) : 0;
          qa[k] = int8_t(std::clamp(q, -127, 127));
          sum += qa[k];
        }
        sa[b] = scale;
        qsum[b] = scale * float(sum);
      }
      row.qa = qa;
      row.a_scale = sa;
      row.a_qsum = qsum;
    } else {
      auto* ap = reinterpret_cast<float*>(base);
      auto* asum = reinterpret_cast<float*>(base + round64(kp * 4));
      std::memcpy(ap, src, size_t(s.K) * 4);
      std::fill(ap + s.K, ap + kp, 0.0f);
      for (size_t b = 0; b < kb; ++b) {
        float sum = 0;
        for (size_t k = b * size_t(s.block); k < (b + 1) * size_t(s.block); ++k) sum += ap[k];
        asum[b] = sum;
      }
      row.a = ap;
      row.a_sum = asum;
    }
  }
  const QGemmUkernel fn = l4 ? kernels.l4 : kernels.l0;
  const int64_t pairs = (s.panels() + 1) / 2;
  const int64_t workers = pool ? int64_t(pool->size()) : 1;
  // Panel chunks: a few per worker so uneven speeds even out; rows are split
  // only where the panel pairs alone cannot keep the workers busy.
  const int64_t chunks = workers > 1 ? std::min<int64_t>(pairs, workers * 4) : 1;
  const int64_t row_tiles = (M + kRowTile - 1) / kRowTile;
  const int64_t row_chunks =
      workers > 1 && pairs < workers * 2 ? std::min<int64_t>(row_tiles, workers * 2) : 1;
  auto run_task = [&](size_t task, size_t) {
    const int64_t chunk = int64_t(task) % chunks, rchunk = int64_t(task) / chunks;
    const int64_t p0 = std::min(s.panels(), 2 * (pairs * chunk / chunks));
    const int64_t p1 = std::min(s.panels(), 2 * (pairs * (chunk + 1) / chunks));
    const int64_t m0 = std::min(M, kRowTile * (row_tiles * rchunk / row_chunks));
    const int64_t m1 = std::min(M, kRowTile * (row_tiles * (rchunk + 1) / row_chunks));
    if (m1 <= m0 || p1 <= p0) return;
    const size_t n = size_t(m1 - m0);
    float* cm = c + size_t(m0) * ldc;
    if (n == 1) {
      fn(s, rows.data() + m0, 1, packed, p0, p1, cm, ldc, bias);
      return;
    }
    for (int64_t p = p0; p < p1; p += 2) {
      fn(s, rows.data() + m0, n, packed, p, std::min(p + 2, p1), cm, ldc, bias);
    }
  };
  const int64_t tasks = chunks * row_chunks;
  if (tasks > 1) {
    pool->parallel_for(size_t(tasks), run_task);
  } else {
    run_task(0, 0);
  }
}

}  // namespace onnx_prepack::kernels
