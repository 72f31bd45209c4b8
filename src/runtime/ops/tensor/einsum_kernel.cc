// Runs an Einsum plan step by step (einsum_kernel.h).
#include "runtime/ops/tensor/einsum_kernel.h"

#include <algorithm>
#include <new>
#include <type_traits>

#include "runtime/memory_account.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/linalg/gemm.h"
#include "runtime/run_limits.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// Sums accumulate in double for floating types and in uint64 for integers:
// unsigned arithmetic wraps without undefined behaviour, and its result cast
// back to the element type is the one of that type's own wrapping arithmetic.
template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// Calls fn(offset) for every index of `w` in order (last dimension fastest).
template <typename Fn>
void for_each_offset(const EinsumWalk& w, Fn&& fn) {
  const size_t r = w.dims.size();
  for (int64_t d : w.dims) {
    if (d == 0) return;
  }
  if (r == 0) {
    fn(int64_t(0));
    return;
  }
  const int64_t inner = w.dims[r - 1], inner_stride = w.strides[r - 1];
  std::vector<int64_t> idx(r - 1, 0);
  int64_t off = 0;
  while (true) {
    for (int64_t x = 0; x < inner; ++x) fn(off + x * inner_stride);
    size_t j = r - 1;
    for (; j-- > 0;) {
      if (++idx[j] < w.dims[j]) {
        off += w.strides[j];
        break;
      }
      idx[j] = 0;
      off -= (w.dims[j] - 1) * w.strides[j];
    }
    if (j == size_t(-1)) return;  // every outer index wrapped
  }
}

template <typename T>
class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(std::shared_ptr<const EinsumPlan> plan, std::string where)
      : plan_(std::move(plan)), where_(std::move(where)) {}

  void run(const KernelIO& io) const override {
    const EinsumPlan& p = *plan_;
    std::vector<std::unique_ptr<T[]>> bufs(p.buffer_shapes.size());
    std::vector<MemoryReservation> held(p.buffer_shapes.size());
    auto create = [&](int b) -> bool {
      if (b < 0 || bufs[size_t(b)]) return true;
      // dims-lint: ok (every planned buffer passed checked_tensor_bytes when the node was built)
      int64_t elems = shape_numel(p.buffer_shapes[size_t(b)]);
      auto r =
          reserve_memory(uint64_t(elems) * sizeof(T), where_ + ": Einsum intermediate " +
                                                          shape_string(p.buffer_shapes[size_t(b)]));
      if (!r.ok()) {
        report_failure(io, r.status());
        return false;
      }
      held[size_t(b)] = std::move(*r);
      bufs[size_t(b)].reset(new (std::nothrow) T[size_t(std::max<int64_t>(elems, 1))]);
      if (!bufs[size_t(b)]) {
        report_failure(
            io, resource_exhausted(where_ + ": cannot allocate the Einsum " + "intermediate " +
                                   shape_string(p.buffer_shapes[size_t(b)])));
        return false;
      }
      return true;
    };
    auto source = [&](const EinsumSource& s) -> const T* {
      return s.input >= 0 ? static_cast<const T*>(io.in[size_t(s.input)])
                          : bufs[size_t(s.buffer)].get();
    };
    T* out = static_cast<T*>(io.out[0]);
    for (size_t si = 0; si < p.steps.size(); ++si) {
      const EinsumStep& s = p.steps[si];
      // A plan of thousands of steps (one per operand) stops between two of
      // them when the run passes its deadline (run_limits.h).
      if (io.limits != nullptr && io.limits->active() && io.limits->stop_now()) {
        report_failure(io, io.limits->stop_status(where_));
        return;
      }
      if (!create(s.dst) || !create(s.a_copy) || !create(s.b_copy)) return;
      T* dst = s.dst >= 0 ? bufs[size_t(s.dst)].get() : out;
      if (s.kind == EinsumStep::kReduce) {
        reduce(source(s.src), s, dst);
      } else {
        contract(io, source(s.left), source(s.right), s,
                 s.a_copy >= 0 ? bufs[size_t(s.a_copy)].get() : nullptr,
                 s.b_copy >= 0 ? bufs[size_t(s.b_copy)].get() : nullptr, dst);
      }
      for (int b : p.step_frees[si]) {
        bufs[size_t(b)].reset();
        held[size_t(b)] = MemoryReservation();
      }
    }
  }

 private:
  static void reduce(const T* src, const EinsumStep& s, T* dst) {
    for_each_offset(s.kept, [&](int64_t kept) {
      Acc<T> acc = 0;
      for_each_offset(s.summed, [&](int64_t summed) { acc += Acc<T>(src[kept + summed]); });
      *dst++ = T(acc);
    });
  }

  static void gather(const T* src, const EinsumWalk& w, T* dst) {
    for_each_offset(w, [&](int64_t off) { *dst++ = src[off]; });
  }

  static void contract(const KernelIO& io, const T* left, const T* right, const EinsumStep& s,
                       T* a_copy, T* b_copy, T* dst) {
    const T* a = left;
    const T* b = right;
    if (a_copy != nullptr) {
      gather(left, s.a_walk, a_copy);
      a = a_copy;
    }
    if (b_copy != nullptr) {
      gather(right, s.b_walk, b_copy);
      b = b_copy;
    }
    const int64_t m = s.m, n = s.n, k = s.k;
    if constexpr (std::is_same_v<T, float>) {
      if (s.gemm) {
        const auto layout =
            s.b_nk ? kernels::PackSourceLayout::kNK : kernels::PackSourceLayout::kKN;
        // Many small products (attention heads): one per task, each packing
        // its B into its worker's scratch, as MatMul does. The product does
        // not depend on the split.
        if (io.pool && io.pool->size() > 1 && s.batch >= int64_t(io.pool->size()) &&
            double(m) * double(n) * double(k) < 4e6) {
          if (io.workspace) io.workspace->reserve_workers(io.pool->size());
          io.pool->parallel_for(size_t(s.batch), [&](size_t t, size_t worker) {
            const int64_t i = int64_t(t);
            gemm_f32(size_t(m), size_t(n), size_t(k), a + i * m * k, size_t(k), b + i * k * n,
                     layout, dst + i * m * n, size_t(n), false, io.workspace, worker, nullptr);
          });
          return;
        }
        for (int64_t t = 0; t < s.batch; ++t) {
          gemm_f32(size_t(m), size_t(n), size_t(k), a + t * m * k, size_t(k), b + t * k * n, layout,
                   dst + t * m * n, size_t(n), false, io.workspace, 0, io.pool);
        }
        return;
      }
    }
    std::vector<Acc<T>> acc(static_cast<size_t>(n));
    for (int64_t t = 0; t < s.batch; ++t) {
      const T* bt = b + t * k * n;
      for (int64_t i = 0; i < m; ++i) {
        const T* ai = a + (t * m + i) * k;
        std::fill(acc.begin(), acc.end(), Acc<T>(0));
        if (s.b_nk) {
          for (int64_t j = 0; j < n; ++j) {
            const T* bj = bt + j * k;
            for (int64_t q = 0; q < k; ++q) acc[size_t(j)] += Acc<T>(ai[q]) * Acc<T>(bj[q]);
          }
        } else {
          for (int64_t q = 0; q < k; ++q) {
            const Acc<T> aq = Acc<T>(ai[q]);
            const T* bq = bt + q * n;
            for (int64_t j = 0; j < n; ++j) acc[size_t(j)] += aq * Acc<T>(bq[j]);
          }
        }
        T* ci = dst + (t * m + i) * n;
        for (int64_t j = 0; j < n; ++j) ci[j] = T(acc[size_t(j)]);
      }
    }
  }

  std::shared_ptr<const EinsumPlan> plan_;
  std::string where_;
};

}  // namespace

std::unique_ptr<Kernel> make_einsum_kernel(int32_t dtype, std::shared_ptr<const EinsumPlan> plan,
                                           std::string where) {
  std::unique_ptr<Kernel> k;
  dispatch_numeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    k = std::make_unique<EinsumKernel<T>>(plan, where);
  });
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
