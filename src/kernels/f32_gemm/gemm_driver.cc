// GEMM driver: work split, cache blocking and A packing around the
// microkernels of f32_gemm.h. Compiled for baseline x86-64; ISA code is reached
// only through the kernel table.
#include "kernels/f32_gemm/gemm_driver.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace onnx_prepack::kernels {
namespace {

constexpr size_t kDefaultKc = 384;  // A micro-panel (14 x kc) in L1, B sliver streamed from L2
constexpr size_t kFewRowsKc = 256;  // M <= 2 MR: B sliver (32 KiB) + A (<= 28 x 256) in L1
constexpr size_t kMcBlocks = 64;    // micro-panels of A per packed A block
constexpr size_t kMaxMr = 32;       // largest microkernel row count
constexpr size_t kBBlockBytes = size_t(1) << 20;  // kc x (group * nr) B block kept in L2

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

struct AlignedFree {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using FloatBuffer = std::unique_ptr<float[], AlignedFree>;
FloatBuffer alloc_floats(size_t n) {
  return FloatBuffer(
      static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(64))));
}

// Balanced split of `rows` into ceil(rows / mr_max) micro-panels.
struct RowSplit {
  size_t count, base, extra;  // first `extra` panels get base + 1 rows
  size_t rows_of(size_t b) const { return base + (b < extra ? 1 : 0); }
  size_t first_row(size_t b) const { return b * base + std::min(b, extra); }
};
RowSplit split_rows(size_t rows, size_t mr_max) {
  const size_t count = ceil_div(rows, mr_max);
  return {count, rows / count, rows % count};
}

struct Task {
  size_t m0, m1, p0, p1;
};

// Packs rows [r0, r0 + mr) x columns [pc, pc + kc) of A as one micro-panel
// dst[k * mr + i]: 4 x 4 transposes over groups of four rows (four read
// streams, so rows of a power-of-two stride do not thrash an L1 set), then the
// remaining rows one by one. Pure data movement: the bits do not depend on it.
void pack_a(const float* a, size_t lda, size_t mr, size_t kc, float* dst) {
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= mr; i += 4) {
    const float* s0 = a + i * lda;
    const float* s1 = s0 + lda;
    const float* s2 = s1 + lda;
    const float* s3 = s2 + lda;
    float* d = dst + i;
    size_t k = 0;
    for (; k + 4 <= kc; k += 4) {
      __m128 r0 = _mm_loadu_ps(s0 + k), r1 = _mm_loadu_ps(s1 + k);
      __m128 r2 = _mm_loadu_ps(s2 + k), r3 = _mm_loadu_ps(s3 + k);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(d + k * mr, r0);
      _mm_storeu_ps(d + (k + 1) * mr, r1);
      _mm_storeu_ps(d + (k + 2) * mr, r2);
      _mm_storeu_ps(d + (k + 3) * mr, r3);
    }
    for (; k < kc; ++k) {
      d[k * mr] = s0[k];
      d[k * mr + 1] = s1[k];
      d[k * mr + 2] = s2[k];
      d[k * mr + 3] = s3[k];
    }
  }
#endif
  for (; i < mr; ++i) {
    const float* src = a + i * lda;
    float* d = dst + i;
    for (size_t k = 0; k < kc; ++k) d[k * mr] = src[k];
  }
}

// A block of B: K rows [pc, pc + kc) of panels [p0, p1).
struct NextBlock {
  size_t pc = 0, kc = 0, p0 = 0, p1 = 0;
};

// More than two micro-panels of rows. Loop nest (outer to inner), after BLIS /
// OpenBLAS:
//   K blocks of kc
//     row blocks of mc: A packed once into micro-panels (L3 / L2)
//       column groups: a kc x (group * nr) block of B read into L2 by the first
//       micro-panel, reused from L2 by the others
//         micro-panels of rows: one kc x mr micro-panel of A stays in L1
//           panels of the group: the kernel streams the kc x nr B sliver from
//           L2 (prefetching it into L1 itself) against the A micro-panel.
// Between calls the driver prefetches the next C tile into L1 and, a piece per
// call, the next A micro-panel into L2.
void run_many_rows(const F32GemmArgs& g, const F32GemmKernel& kern, size_t kc_opt, const Task& t,
                   FloatBuffer& abuf, size_t& abuf_size) {
  const size_t K = g.b.k, nr = g.b.nr, mr_max = kern.mr;
  const size_t rows = t.m1 - t.m0;
  const size_t mc_max = kMcBlocks * mr_max;
  const size_t kc = kc_opt ? kc_opt : kDefaultKc;
  const size_t kc_eff = std::max<size_t>(std::min(kc, K), 1);
  const size_t need = std::min(rows, mc_max) * kc_eff;
  if (abuf_size < need) {
    abuf = alloc_floats(need);
    abuf_size = need;
  }
  F32GemmEpilogue ep;
  ep.alpha = g.alpha;
  ep.beta = g.beta;
  ep.bias_rs = g.bias_rs;
  ep.bias_cs = g.bias_cs;
  const size_t group = std::max<size_t>(1, kBBlockBytes / (kc_eff * nr * sizeof(float)));
  size_t pc = 0;
  do {
    const size_t kcur = std::min(kc, K - pc);
    const uint32_t flags = (pc > 0 ? kGemmAccumulate : 0) | (pc + kcur == K ? kGemmFinal : 0);
    const bool prefetch = kcur >= 32;  // calls long enough to hide the fetches
    for (size_t ic = t.m0; ic < t.m1; ic += mc_max) {
      const size_t mc = std::min(mc_max, t.m1 - ic);
      const RowSplit split = split_rows(mc, mr_max);
      for (size_t b = 0; b < split.count; ++b) {
        const size_t r0 = split.first_row(b);
        pack_a(g.a + (ic + r0) * g.lda + pc, g.lda, split.rows_of(b), kcur, abuf.get() + r0 * kcur);
      }
      for (size_t g0 = t.p0; g0 < t.p1; g0 += group) {
        const size_t g1 = std::min(t.p1, g0 + group);
        // The B block the loop nest reads next, fetched into L2 by the kernels
        // (kcur lines per call) over the last calls on this block.
        NextBlock next;
        if (prefetch && split.count > 1) {
          if (g1 < t.p1) {
            next = {pc, std::min(kc, K - pc), g1, std::min(t.p1, g1 + group)};
          } else if (ic + mc < t.m1) {
            next = {pc, kcur, t.p0, std::min(t.p1, t.p0 + group)};
          } else if (pc + kcur < K) {
            next = {pc + kcur, std::min(kc, K - pc - kcur), t.p0, std::min(t.p1, t.p0 + group)};
          }
        }
        const size_t sliver_lines = ceil_div(next.kc * nr * sizeof(float), 64);
        const size_t calls = split.count * (g1 - g0);
        const size_t pf_calls = prefetch ? ceil_div(sliver_lines * (next.p1 - next.p0), kcur) : 0;
        const size_t pf_first = calls > pf_calls ? calls - pf_calls : 0;
        for (size_t b = 0; b < split.count; ++b) {
          const size_t r0 = split.first_row(b), mr = split.rows_of(b);
          const size_t row = ic + r0;
          const float* ap = abuf.get() + r0 * kcur;
          // The next micro-panel of A, fetched into L2 over this group's calls.
          const char* next_a = nullptr;
          size_t a_bytes = 0, a_step = 0;
          if (prefetch && b + 1 < split.count) {
            next_a = reinterpret_cast<const char*>(abuf.get() + split.first_row(b + 1) * kcur);
            a_bytes = split.rows_of(b + 1) * kcur * sizeof(float);
            a_step = ceil_div(ceil_div(a_bytes, 64), g1 - g0) * 64;
          }
          for (size_t p = g0; p < g1; ++p) {
            const size_t col = p * nr;
            const size_t nrv = std::min(nr, g.b.n - col);
            const float* bp = g.b.data + p * K * nr + pc * nr;
            ep.bias =
                g.bias ? g.bias + ptrdiff_t(row) * g.bias_rs + ptrdiff_t(col) * g.bias_cs : nullptr;
            if (prefetch) {
              if (next_a != nullptr) {
                const size_t lo = (p - g0) * a_step, hi = std::min(a_bytes, lo + a_step);
                for (size_t off = lo; off < hi; off += 64) __builtin_prefetch(next_a + off, 0, 2);
              }
              // The next C tile (read when accumulating, written in any case).
              size_t next_row = row, next_col = col + nr, next_mr = mr;
              if (p + 1 == g1) {
                next_row = b + 1 < split.count ? ic + split.first_row(b + 1) : ic;
                next_col = b + 1 < split.count ? g0 * nr : g1 * nr;
                next_mr = b + 1 < split.count ? split.rows_of(b + 1) : split.rows_of(0);
              }
              if (next_col < g.b.n) {
                const float* nc = g.c + next_row * g.ldc + next_col;
                for (size_t i = 0; i < next_mr; ++i) {
                  for (size_t j = 0; j < nr; j += 16) __builtin_prefetch(nc + i * g.ldc + j, 1, 3);
                }
              }
            }
            ep.prefetch_l2 = nullptr;
            const size_t call = b * (g1 - g0) + (p - g0);
            if (pf_calls > 0 && call >= pf_first) {
              const size_t line = (call - pf_first) * kcur;
              const size_t s_idx = next.p0 + line / sliver_lines;
              if (s_idx < next.p1) {
                ep.prefetch_l2 =
                    reinterpret_cast<const char*>(g.b.data + s_idx * K * nr + next.pc * nr) +
                    (line % sliver_lines) * 64;
              }
            }
            kern.fn(mr, nrv, kcur, ap, bp, g.c + row * g.ldc + col, g.ldc, flags, &ep);
          }
        }
      }
    }
    pc += kcur;
  } while (pc < K);
}

// At most two micro-panels of rows (M <= 2 MR): B is read from memory about
// once, so the loop nest keeps each B sliver in L1 for the micro-panels that
// use it: K blocks of kc (all of K for one micro-panel, whose panels are then
// streamed front to back), panels, micro-panels. The kernels fetch the next
// sliver into L2 while they run, the driver the next C tile into L1.
void run_few_rows(const F32GemmArgs& g, const F32GemmKernel& kern, size_t kc_opt, const Task& t,
                  FloatBuffer& abuf, size_t& abuf_size) {
  const size_t K = g.b.k, nr = g.b.nr, mr_max = kern.mr;
  const size_t rows = t.m1 - t.m0;
  size_t kc = rows <= mr_max ? K : (kc_opt ? kc_opt : kFewRowsKc);
  if (kc == 0) kc = 1;
  const size_t kc_eff = std::max<size_t>(std::min(kc, K), 1);
  if (abuf_size < rows * kc_eff) {
    abuf = alloc_floats(rows * kc_eff);
    abuf_size = rows * kc_eff;
  }
  F32GemmEpilogue ep;
  ep.alpha = g.alpha;
  ep.beta = g.beta;
  ep.bias_rs = g.bias_rs;
  ep.bias_cs = g.bias_cs;
  const RowSplit split = split_rows(rows, mr_max);
  size_t pc = 0;
  do {
    const size_t kcur = std::min(kc, K - pc);
    const uint32_t flags = (pc > 0 ? kGemmAccumulate : 0) | (pc + kcur == K ? kGemmFinal : 0);
    const bool prefetch = kcur >= 32;
    for (size_t b = 0; b < split.count; ++b) {
      const size_t r0 = split.first_row(b);
      pack_a(g.a + (t.m0 + r0) * g.lda + pc, g.lda, split.rows_of(b), kcur, abuf.get() + r0 * kcur);
    }
    const size_t sliver_lines = ceil_div(kcur * nr * sizeof(float), 64);
    for (size_t p = t.p0; p < t.p1; ++p) {
      const size_t col = p * nr;
      const size_t nrv = std::min(nr, g.b.n - col);
      const float* bp = g.b.data + p * K * nr + pc * nr;
      for (size_t b = 0; b < split.count; ++b) {
        const size_t r0 = split.first_row(b), mr = split.rows_of(b);
        const size_t row = t.m0 + r0;
        ep.bias =
            g.bias ? g.bias + ptrdiff_t(row) * g.bias_rs + ptrdiff_t(col) * g.bias_cs : nullptr;
        ep.prefetch_l2 = nullptr;
        if (prefetch) {
          // The slivers after this one, kcur lines per call (one micro-panel
          // streams whole panels and prefetches them itself).
          if (split.count > 1) {
            const size_t line = b * kcur;
            const size_t s_idx = p + 1 + line / sliver_lines;
            if (s_idx < t.p1) {
              ep.prefetch_l2 = reinterpret_cast<const char*>(g.b.data + s_idx * K * nr + pc * nr) +
                               (line % sliver_lines) * 64;
            }
          }
          const size_t next_row = b + 1 < split.count ? t.m0 + split.first_row(b + 1) : t.m0;
          const size_t next_col = b + 1 < split.count ? col : col + nr;
          if (next_col < g.b.n) {
            const float* nc = g.c + next_row * g.ldc + next_col;
            const size_t next_mr = b + 1 < split.count ? split.rows_of(b + 1) : split.rows_of(0);
            for (size_t i = 0; i < next_mr; ++i) {
              for (size_t j = 0; j < nr; j += 16) __builtin_prefetch(nc + i * g.ldc + j, 1, 3);
            }
          }
        }
        kern.fn(mr, nrv, kcur, abuf.get() + r0 * kcur, bp, g.c + row * g.ldc + col, g.ldc, flags,
                &ep);
      }
    }
    pc += kcur;
  } while (pc < K);
}

void run_task(const F32GemmArgs& g, const F32GemmKernel& kern, size_t kc_opt, const Task& t,
              FloatBuffer& abuf, size_t& abuf_size) {
  if (t.m1 == t.m0 || t.p0 == t.p1) return;
  if (t.m1 - t.m0 <= 2 * size_t(kern.mr)) {
    run_few_rows(g, kern, kc_opt, t, abuf, abuf_size);
  } else {
    run_many_rows(g, kern, kc_opt, t, abuf, abuf_size);
  }
}

}  // namespace

const F32GemmKernel* f32_gemm_select(uint32_t nr, device::IsaLevel level) {
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.nr == nr && k.isa <= level) return &k;
  }
  return nullptr;
}

const F32GemmKernel& f32_gemm_native(device::IsaLevel level) {
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.isa != device::IsaLevel::kRef && k.isa <= level) return k;
  }
  // Portable: the 16-column layout (the AVX2 format's), read by its _ref twin.
  return *f32_gemm_select(16, device::IsaLevel::kRef);
}

Status f32_gemm(const F32GemmArgs& g, const F32GemmOptions& options) {
  const PackedBView& b = g.b;
  if (g.m == 0 || b.n == 0) return ok_status();
  const F32GemmKernel* kern =
      options.kernel ? options.kernel : f32_gemm_select(uint32_t(b.nr), device::host_isa_level());
  if (kern == nullptr) {
    return invalid_argument("f32 gemm: no kernel reads panels of " + std::to_string(b.nr) +
                            " columns");
  }
  if (kern->nr != b.nr) {
    return invalid_argument("f32 gemm: kernel " + std::string(kern->name) + " reads panels of " +
                            std::to_string(kern->nr) + " columns, b has " + std::to_string(b.nr));
  }
  if (kern->mr > kMaxMr || kern->mr == 0) {
    return internal_error("f32 gemm: kernel " + std::string(kern->name) + " has mr " +
                          std::to_string(kern->mr));
  }
  if (kern->isa > device::host_isa_level()) {
    return invalid_argument("f32 gemm: kernel " + std::string(kern->name) +
                            " needs an isa this host lacks");
  }
  if ((b.k > 0 && (g.a == nullptr || b.data == nullptr)) || g.c == nullptr) {
    return invalid_argument("f32 gemm: null operand");
  }
  if (g.lda < b.k || g.ldc < b.n) {
    return invalid_argument("f32 gemm: lda " + std::to_string(g.lda) + " or ldc " +
                            std::to_string(g.ldc) + " below k " + std::to_string(b.k) + " / n " +
                            std::to_string(b.n));
  }
  if (g.bias != nullptr && g.bias_cs != 0 && g.bias_cs != 1) {
    return invalid_argument("f32 gemm: bias column stride must be 0 or 1, got " +
                            std::to_string(g.bias_cs));
  }
  const size_t panels = packed_b_panels(b.n, b.nr);
  const size_t mtiles = ceil_div(g.m, kern->mr);
  const size_t threads = options.pool ? options.pool->size() : 1;
  // Split N first (each task streams only its own panels of B but packs all of
  // A), then M. When M is large against N, split M first: each task packs only
  // its rows of A (packing is not overlapped with compute, streaming B from L3
  // is, through the prefetches) and every task has enough micro-panels to reuse
  // each B block from L2.
  size_t tn = std::min(threads, panels);
  size_t tm = std::min(ceil_div(threads, tn), mtiles);
  if (threads > 1 && 2 * g.m >= b.n && mtiles >= 8 * threads) {
    tm = std::min(threads, mtiles);
    tn = std::min(ceil_div(threads, tm), panels);
  }
  if (2 * g.m * b.n * std::max<size_t>(b.k, 1) < (size_t(1) << 17)) tn = tm = 1;  // tiny
  std::vector<Task> tasks;
  for (size_t i = 0; i < tm; ++i) {
    // Rows in whole micro-panels where possible.
    const size_t t0 = mtiles * i / tm, t1 = mtiles * (i + 1) / tm;
    const size_t m0 = std::min(g.m, t0 * kern->mr), m1 = std::min(g.m, t1 * kern->mr);
    for (size_t j = 0; j < tn; ++j) {
      tasks.push_back({m0, m1, panels * j / tn, panels * (j + 1) / tn});
    }
  }
  const size_t workers = tasks.size() > 1 ? threads : 1;
  std::vector<FloatBuffer> bufs(workers);
  std::vector<size_t> sizes(workers, 0);
  if (tasks.size() == 1) {
    run_task(g, *kern, options.kc, tasks[0], bufs[0], sizes[0]);
  } else {
    options.pool->parallel_for(tasks.size(), [&](size_t task, size_t worker) {
      run_task(g, *kern, options.kc, tasks[task], bufs[worker], sizes[worker]);
    });
  }
  return ok_status();
}

Status f32_pack_b(const F32PackBArgs& args, base::ThreadPool* pool, device::IsaLevel max_level) {
  if (args.nr == 0 || args.nr % 4 != 0) {
    return invalid_argument("pack b: panel width " + std::to_string(args.nr) +
                            " is not a positive multiple of 4");
  }
  if (args.k == 0 || args.n == 0) return ok_status();
  if (args.src == nullptr || args.dst == nullptr) return invalid_argument("pack b: null buffer");
  const size_t dense = args.layout == PackSourceLayout::kKN ? args.n : args.k;
  if (args.ld != 0 && args.ld < dense) {
    return invalid_argument("pack b: source row stride " + std::to_string(args.ld) +
                            " is below the row length " + std::to_string(dense));
  }
  const device::IsaLevel level = std::min(max_level, device::host_isa_level());
#if defined(__x86_64__)  // the _avx* units are built on x86-64 only (cmake/isa.cmake)
  // The AVX2 packer moves 8 columns at a time; 12-column (NEON) panels packed
  // on x86-64 for an aarch64 target take the portable one (same bytes).
  auto fn = level >= device::IsaLevel::kAvx2 && args.nr % 8 == 0 ? f32_pack_b_avx2 : f32_pack_b_ref;
#else
  (void)level;
  auto fn = f32_pack_b_ref;
#endif
  const size_t panels = packed_b_panels(args.n, args.nr);
  const size_t threads = pool ? std::min(pool->size(), panels) : 1;
  if (threads <= 1) {
    fn(&args, 0, panels);
  } else {
    pool->parallel_for(threads, [&](size_t t, size_t) {
      fn(&args, panels * t / threads, panels * (t + 1) / threads);
    });
  }
  return ok_status();
}

}  // namespace onnx_prepack::kernels
