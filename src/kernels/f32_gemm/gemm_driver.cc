// GEMM driver: work split, cache blocking and A packing around the
// microkernels of f32_gemm.h. Compiled for baseline x86-64; ISA code is reached
// only through the kernel table.
#include "kernels/f32_gemm/gemm_driver.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace onnx_prepack::kernels {
namespace {

constexpr size_t kDefaultKc = 256;
constexpr size_t kMcBlocks = 16;                  // micro-panels of A per packed A block
constexpr size_t kMaxMr = 32;                     // largest microkernel row count
constexpr size_t kBBlockBytes = size_t(1) << 20;  // B block kept in L2 (half of it)

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

void run_task(const F32GemmArgs& g, const F32GemmKernel& kern, size_t kc_opt, const Task& t,
              FloatBuffer& abuf, size_t& abuf_size) {
  const size_t K = g.b.k, nr = g.b.nr, mr_max = kern.mr;
  const size_t rows = t.m1 - t.m0;
  if (rows == 0 || t.p0 == t.p1) return;
  const size_t mc_max = kMcBlocks * mr_max;
  // One micro-panel of A per block: no reuse of B across it, so stream whole panels.
  size_t kc = rows <= mr_max ? K : (kc_opt ? kc_opt : kDefaultKc);
  if (kc == 0) kc = 1;
  const size_t need = std::min(rows, mc_max) * std::min(kc, std::max<size_t>(K, 1));
  if (abuf_size < need) {
    abuf = alloc_floats(need);
    abuf_size = need;
  }
  F32GemmEpilogue ep;
  ep.alpha = g.alpha;
  ep.beta = g.beta;
  ep.bias_rs = g.bias_rs;
  ep.bias_cs = g.bias_cs;
  // Panels per B block: a kc x (group * nr) slice of B stays in L2 while
  // every A block of the task passes over it.
  const size_t group =
      std::max<size_t>(1, kBBlockBytes / (std::max<size_t>(std::min(kc, K), 1) * nr * 4));
  for (size_t g0 = t.p0; g0 < t.p1; g0 += group) {
    const size_t g1 = std::min(t.p1, g0 + group);
    size_t pc = 0;
    do {
      const size_t kcur = std::min(kc, K - pc);
      const uint32_t flags = (pc > 0 ? kGemmAccumulate : 0) | (pc + kcur == K ? kGemmFinal : 0);
      for (size_t ic = t.m0; ic < t.m1; ic += mc_max) {
        const size_t mc = std::min(mc_max, t.m1 - ic);
        const RowSplit split = split_rows(mc, mr_max);
        // Pack A[ic .. ic+mc, pc .. pc+kcur) as micro-panels a[k * mr + i].
        for (size_t b = 0; b < split.count; ++b) {
          const size_t r0 = split.first_row(b), mr = split.rows_of(b);
          float* dst = abuf.get() + r0 * kcur;
          const float* src[kMaxMr];
          for (size_t i = 0; i < mr; ++i) src[i] = g.a + (ic + r0 + i) * g.lda + pc;
          if (mr == 1) {
            std::copy(src[0], src[0] + kcur, dst);
          } else {
            for (size_t k = 0; k < kcur; ++k) {
              for (size_t i = 0; i < mr; ++i) *dst++ = src[i][k];
            }
          }
        }
        for (size_t p = g0; p < g1; ++p) {
          const size_t col = p * nr;
          const size_t nrv = std::min(nr, g.b.n - col);
          const float* bp = g.b.data + p * K * nr + pc * nr;
          for (size_t b = 0; b < split.count; ++b) {
            const size_t r0 = split.first_row(b), mr = split.rows_of(b);
            const size_t row = ic + r0;
            ep.bias =
                g.bias ? g.bias + ptrdiff_t(row) * g.bias_rs + ptrdiff_t(col) * g.bias_cs : nullptr;
            // Warm the next C tile while this one computes (it is read when
            // accumulating and written in any case).
            const size_t next_row = b + 1 < split.count ? ic + split.first_row(b + 1) : ic;
            const size_t next_col = b + 1 < split.count ? col : col + nr;
            if (next_col < g.b.n && kcur >= 32) {
              const float* nc = g.c + next_row * g.ldc + next_col;
              const size_t next_mr = b + 1 < split.count ? split.rows_of(b + 1) : split.rows_of(0);
              for (size_t i = 0; i < next_mr; ++i) {
                for (size_t j = 0; j < nr; j += 16) __builtin_prefetch(nc + i * g.ldc + j, 1, 3);
              }
            }
            kern.fn(mr, nrv, kcur, abuf.get() + r0 * kcur, bp, g.c + row * g.ldc + col, g.ldc,
                    flags, &ep);
          }
        }
      }
      pc += kcur;
    } while (pc < K);
  }
}

}  // namespace

const F32GemmKernel* f32_gemm_select(uint32_t nr, device::IsaLevel level) {
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (k.nr == nr && k.isa <= level) return &k;
  }
  return nullptr;
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
  // Split N first (each task streams its own panels), then M.
  size_t tn = std::min(threads, panels);
  size_t tm = std::min(ceil_div(threads, tn), mtiles);
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
  if (args.nr == 0 || args.nr % 8 != 0) {
    return invalid_argument("pack b: panel width " + std::to_string(args.nr) +
                            " is not a positive multiple of 8");
  }
  if (args.k == 0 || args.n == 0) return ok_status();
  if (args.src == nullptr || args.dst == nullptr) return invalid_argument("pack b: null buffer");
  const device::IsaLevel level = std::min(max_level, device::host_isa_level());
  auto fn = level >= device::IsaLevel::kAvx2 ? f32_pack_b_avx2 : f32_pack_b_ref;
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
