// Int8 GEMM driver (i8_gemm.h): prepares A (uint8, zero-padded rows, row sums
// and zero points), the per-column zero points, then splits panels over the
// pool, and rows too when there are fewer panel chunks than workers. Compiled
// for the baseline (x86-64, Armv8-A); ISA code is reached only through I8GemmKernels.
#include <algorithm>
#include <cstring>
#include <memory>

#include "kernels/i8_gemm/i8_gemm.h"

namespace onnx_prepack::kernels {
namespace {

// Rows per task: the tile of A a panel chunk streams (K = 3072: 384 KiB) stays in L2.
constexpr int64_t kRowBlock = 128;

struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

size_t round64(size_t n) { return (n + 63) / 64 * 64; }

// Row stride of prepared A: whole groups of 4, 64-byte aligned rows.
size_t a_stride(const I8GemmShape& s) { return round64(size_t(s.k_groups()) * 4); }

struct Scratch {
  uint8_t* a;
  int32_t* row_za;
  int32_t* row_sum;
  int32_t* col_zb;
  float* col_scale;
  float* col_bias;
};

Scratch carve(const I8GemmShape& s, int64_t M, uint8_t* base) {
  Scratch out;
  out.a = base;
  base += a_stride(s) * size_t(M);
  out.row_za = reinterpret_cast<int32_t*>(base);
  base += round64(size_t(M) * 4);
  out.row_sum = reinterpret_cast<int32_t*>(base);
  base += round64(size_t(M) * 4);
  out.col_zb = reinterpret_cast<int32_t*>(base);
  base += round64(size_t(s.panels() * kI8Panel) * 4);
  out.col_scale = reinterpret_cast<float*>(base);
  base += round64(size_t(s.panels() * kI8Panel) * 4);
  out.col_bias = reinterpret_cast<float*>(base);
  return out;
}

// uint8 A whose rows are whole groups of 4 is read where it lies: the kernels see the rows
// they would have been copied into (no shift, no padding), and the copy was a fifth of a
// 128 x 384 x 384 product's time.
bool a_in_place(const I8GemmShape& s, const I8GemmArgs& g) { return !g.a_signed && s.K % 4 == 0; }

// Rows [m0, m1) of A as uint8 u (int8 A + 128), with za' and sum_k u.
void prepare_rows(const I8GemmShape& s, const I8GemmArgs& g, const Scratch& w, int64_t m0,
                  int64_t m1) {
  const size_t K = size_t(s.K), stride = a_stride(s);
  const uint32_t za_shift = g.a_signed ? 128 : 0;
  const bool in_place = a_in_place(s, g);
  for (int64_t m = m0; m < m1; ++m) {
    const auto* src = static_cast<const uint8_t*>(g.a) + size_t(m) * g.lda;
    uint32_t sum = 0;
    const uint32_t za = g.za ? uint32_t(g.za[g.za_n == 1 ? 0 : m % g.za_n]) : 0;
    w.row_za[m] = int32_t(za + za_shift);
    if (in_place) {  // only the sum: the kernels read src itself
      for (size_t k = 0; k < K; ++k) sum += src[k];
      w.row_sum[m] = int32_t(sum);
      continue;
    }
    uint8_t* dst = w.a + size_t(m) * stride;
    if (g.a_signed) {
      for (size_t k = 0; k < K; ++k) {
        dst[k] = uint8_t(src[k] ^ 0x80);  // int8 a + 128 as uint8
        sum += dst[k];
      }
    } else {
      std::memcpy(dst, src, K);
      for (size_t k = 0; k < K; ++k) sum += dst[k];
    }
    std::memset(dst + K, 0, stride - K);
    w.row_sum[m] = int32_t(sum);
  }
}

}  // namespace

I8GemmKernels i8_gemm_ref_kernels() { return {"i8_gemm_ref", i8_gemm_ref}; }

I8GemmKernels i8_gemm_select(const device::CpuFeatures& f) {
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  const bool avx512 = f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.avx2 && f.fma;
  if (avx512 && f.avx512vnni) return {"i8_gemm_avx512vnni", i8_gemm_avx512vnni};
  if (f.avx2 && f.avxvnni) return {"i8_gemm_avxvnni", i8_gemm_avxvnni};
  if (f.avx2) return {"i8_gemm_avx2", i8_gemm_avx2};
#elif defined( \
    __aarch64__)  // the _dotprod / _i8mm units are built on aarch64 only (cmake/isa.cmake)
  // host_cpu_features() is capped (ONNX_PREPACK_MAX_ISA=neon drops dotprod).
  if (f.i8mm && f.dotprod) return {"i8_gemm_i8mm", i8_gemm_i8mm};
  if (f.dotprod) return {"i8_gemm_dotprod", i8_gemm_dotprod};
#else
  (void)f;
#endif
  return i8_gemm_ref_kernels();
}

size_t i8_gemm_scratch_bytes(const I8GemmShape& s, int64_t M) {
  if (M <= 0) return 0;
  return a_stride(s) * size_t(M) + 2 * round64(size_t(M) * 4) +
         3 * round64(size_t(s.panels() * kI8Panel) * 4);
}

void i8_gemm(const I8GemmKernels& kernels, const I8GemmShape& s, const uint8_t* packed,
             const I8GemmArgs& g, void* scratch, base::ThreadPool* pool) {
  const int64_t M = g.M;
  if (M <= 0 || s.N <= 0) return;
  std::unique_ptr<uint8_t[], AlignedFree> owned;
  if (scratch == nullptr) {
    owned.reset(
        static_cast<uint8_t*>(::operator new[](i8_gemm_scratch_bytes(s, M), std::align_val_t(64))));
    scratch = owned.get();
  }
  const Scratch w = carve(s, M, static_cast<uint8_t*>(scratch));
  const int64_t panels = s.panels();
  const uint32_t zb_shift = s.b_signed ? 0 : 128;
  for (int64_t n = 0; n < panels * kI8Panel; ++n) {
    const uint32_t zb = g.zb && n < s.N ? uint32_t(g.zb[g.zb_n == 1 ? 0 : n]) : 0;
    w.col_zb[n] = n < s.N ? int32_t(zb - zb_shift) : 0;
  }
  if (g.scale != nullptr) {
    for (int64_t n = 0; n < panels * kI8Panel; ++n) {
      w.col_scale[n] = n < s.N ? g.scale[g.scale_n == 1 ? 0 : n] : 0.0f;
      w.col_bias[n] = g.bias && n < s.N ? g.bias[g.bias_n == 1 ? 0 : n] : 0.0f;
    }
  }
  const size_t workers = pool ? pool->size() : 1;
  const int64_t row_blocks = (M + kRowBlock - 1) / kRowBlock;
  if (workers > 1 && M * s.K >= 4096) {
    // Blocks of 32 rows: a 128-row A is prepared by every worker, not one.
    const int64_t prep_blocks = (M + 31) / 32;
    pool->parallel_for(size_t(prep_blocks), [&](size_t b, size_t) {
      prepare_rows(s, g, w, int64_t(b) * 32, std::min(M, int64_t(b + 1) * 32));
    });
  } else {
    prepare_rows(s, g, w, 0, M);
  }
  // Tasks: panel chunks (pairs of panels at least, the VNNI tile's width) x row blocks; a few
  // per worker so uneven speeds even out. Rows are split further only when N alone cannot
  // feed the workers.
  const int64_t pairs = (panels + 1) / 2;
  int64_t n_chunks = 1, m_chunks = 1;
  if (workers > 1) {
    n_chunks = std::min<int64_t>(pairs, int64_t(workers) * 4);
    if (n_chunks < int64_t(workers) * 2) {
      m_chunks = std::min<int64_t>((M + 7) / 8, int64_t(workers) * 4 / n_chunks + 1);
    }
  }
  m_chunks = std::max(m_chunks, row_blocks);
  auto run_task = [&](size_t task, size_t) {
    const int64_t nc = int64_t(task) % n_chunks, mc = int64_t(task) / n_chunks;
    const int64_t p0 = std::min(panels, pairs * nc / n_chunks * 2);
    const int64_t p1 = std::min(panels, pairs * (nc + 1) / n_chunks * 2);
    const int64_t m0 = M * mc / m_chunks, m1 = M * (mc + 1) / m_chunks;
    if (p0 >= p1 || m0 >= m1) return;
    I8Tile t;
    if (a_in_place(s, g)) {
      t.a = static_cast<const uint8_t*>(g.a) + size_t(m0) * g.lda;
      t.lda = g.lda;
    } else {
      t.a = w.a + size_t(m0) * a_stride(s);
      t.lda = a_stride(s);
    }
    t.rows = size_t(m1 - m0);
    t.row_za = w.row_za + m0;
    t.row_sum = w.row_sum + m0;
    t.col_zb = w.col_zb;
    t.ldc = g.ldc;
    if (g.scale != nullptr) {
      t.col_scale = w.col_scale;
      t.row_scale = g.row_scale ? g.row_scale + m0 : nullptr;
      t.col_bias = g.bias ? w.col_bias : nullptr;
      t.bias_first = g.bias_first;
      t.relu = g.relu;
      t.cf = g.cf + size_t(m0) * g.ldc;
    } else {
      t.c = g.c + size_t(m0) * g.ldc;
    }
    kernels.fn(s, t, packed, p0, p1);
  };
  const size_t tasks = size_t(n_chunks * m_chunks);
  if (workers > 1 && tasks > 1) {
    pool->parallel_for(tasks, run_task);
  } else {
    for (size_t i = 0; i < tasks; ++i) run_task(i, 0);
  }
}

}  // namespace onnx_prepack::kernels
