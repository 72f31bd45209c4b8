// MatMul (numpy semantics, batched with broadcasting) and Gemm. A constant 2-D
// float B that is an initializer goes through the session's WeightPreparer.
// double and the 32/64-bit integers go to matmul_typed.cc.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/linalg/gemm.h"
#include "runtime/ops/linalg/linalg_ops.h"
#include "runtime/ops/linalg/matmul_geometry.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {
namespace {

bool is_half_float(int32_t dt) { return dt == kFloat16 || dt == kBfloat16; }

// Asks the preparer for B when it is a named constant initializer.
Result<std::shared_ptr<const PreparedB>> prepared_b(BuildContext& ctx, int index, bool transposed) {
  const ValueDesc& b = ctx.input(index);
  if (b.value == nullptr || b.shape.size() != 2 || b.dtype != kFloat) {
    return std::shared_ptr<const PreparedB>();
  }
  if (ctx.weights() != nullptr && b.is_initializer) {
    OP_ASSIGN_OR_RETURN(PreparedPack r, ctx.prepare_weight(index));
    const int64_t k = transposed ? b.shape[1] : b.shape[0],
                  n = transposed ? b.shape[0] : b.shape[1];
    auto prepared = packed_b(r, k, n);
    if (!prepared.ok()) return prepared.status().with_context(ctx.where());
    return prepared;
  }
  return std::shared_ptr<const PreparedB>();
}

// A MatMul whose B is one prepared matrix (A's batch rows folded into M); with
// bias_n > 0 it adds io.in[2] (bias_n = 1 or n floats) as the product is stored
// (Kernel::with_column_bias).
class PreparedMatMulKernel final : public Kernel {
 public:
  PreparedMatMulKernel(std::shared_ptr<const PreparedB> b, int64_t rows, int64_t k, int64_t n,
                       int64_t bias_n = 0)
      : b_(std::move(b)), rows_(rows), k_(k), n_(n), bias_n_(bias_n) {}
  void run(const KernelIO& io) const override {
    const float* bias = bias_n_ > 0 ? static_cast<const float*>(io.in[2]) : nullptr;
    b_->multiply(rows_, static_cast<const float*>(io.in[0]), k_, static_cast<float*>(io.out[0]), n_,
                 false, io.pool, io.workspace, bias, bias_n_ == 1 ? 0 : 1);
  }
  std::unique_ptr<Kernel> with_column_bias(int64_t bias_n) const override {
    if (bias_n_ > 0 || (bias_n != 1 && bias_n != n_)) return nullptr;
    return std::make_unique<PreparedMatMulKernel>(b_, rows_, k_, n_, bias_n);
  }

 private:
  std::shared_ptr<const PreparedB> b_;
  int64_t rows_, k_, n_, bias_n_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> build_matmul(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* a, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* b, ctx.require_input(1));
  // double, integers, and the shape checks of 16-bit floats (matmul_typed.cc).
  if (matmul_typed_dtype(a->dtype) || is_half_float(a->dtype)) return build_matmul_typed(ctx);
  if (a->dtype != kFloat || b->dtype != kFloat) return ctx.error(linalg_type_error(*a, *b));
  OP_ASSIGN_OR_RETURN(const MatMulGeometry g, matmul_geometry(ctx, a->shape, b->shape));
  const int64_t m = g.m, k = g.k, n = g.n, batches = g.batches;
  ctx.set_output(0, kFloat, g.out);

  // B is one 2-D matrix (no batch dims): A's batch rows fold into M.
  if (g.b_is_matrix()) {
    const int64_t rows = batches * m;  // dims-lint: ok (A's dims)
    OP_ASSIGN_OR_RETURN(auto prep, b->shape.size() == 1 ? Result<std::shared_ptr<const PreparedB>>(
                                                              std::shared_ptr<const PreparedB>())
                                                        : prepared_b(ctx, 1, false));
    if (prep) return std::unique_ptr<Kernel>(new PreparedMatMulKernel(prep, rows, k, n));
    return std::unique_ptr<Kernel>(new FnKernel([rows, k, n](const KernelIO& io) {
      gemm_f32(size_t(rows), size_t(n), size_t(k), static_cast<const float*>(io.in[0]), size_t(k),
               static_cast<const float*>(io.in[1]), kernels::PackSourceLayout::kKN,
               static_cast<float*>(io.out[0]), size_t(n), false, io.workspace, 0, io.pool);
    }));
  }
  // Batched: per output batch, offsets into A and B.
  std::vector<int64_t> a_off, b_off;
  g.batch_offsets(a_off, b_off);
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const float* ap = static_cast<const float*>(io.in[0]);
    const float* bp = static_cast<const float*>(io.in[1]);
    float* op = static_cast<float*>(io.out[0]);
    const auto kn = kernels::PackSourceLayout::kKN;
    // Many small products (attention heads): one per task, each packing its B
    // into its worker's scratch. The product does not depend on the split.
    if (io.pool && io.pool->size() > 1 && batches >= int64_t(io.pool->size()) &&
        double(m) * double(n) * double(k) < 4e6) {
      if (io.workspace) io.workspace->reserve_workers(io.pool->size());
      io.pool->parallel_for(size_t(batches), [&](size_t i, size_t worker) {
        gemm_f32(size_t(m), size_t(n), size_t(k), ap + a_off[i], size_t(k), bp + b_off[i], kn,
                 op + int64_t(i) * m * n, size_t(n), false, io.workspace, worker, nullptr);
      });
    } else {
      for (int64_t i = 0; i < batches; ++i) {
        gemm_f32(size_t(m), size_t(n), size_t(k), ap + a_off[size_t(i)], size_t(k),
                 bp + b_off[size_t(i)], kn, op + i * m * n, size_t(n), false, io.workspace, 0,
                 io.pool);
      }
    }
  }));
}

Result<std::unique_ptr<Kernel>> build_gemm(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* a, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* b, ctx.require_input(1));
  if (matmul_typed_dtype(a->dtype) || is_half_float(a->dtype)) return build_gemm_typed(ctx);
  if (a->dtype != kFloat || b->dtype != kFloat) return ctx.error(linalg_type_error(*a, *b));
  if (a->shape.size() != 2 || b->shape.size() != 2) return ctx.error("A and B must be 2-D");
  bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  float alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
  int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
  int64_t kb = tb ? b->shape[1] : b->shape[0], n = tb ? b->shape[0] : b->shape[1];
  if (k != kb) {
    return ctx.error("inner dimensions differ: A " + shape_string(a->shape) + ", B " +
                     shape_string(b->shape) + " (transA " + std::to_string(ta) + ", transB " +
                     std::to_string(tb) + ")");
  }
  Shape out{m, n};
  bool has_c = ctx.has_input(2);
  BroadcastPlan cplan;
  if (has_c) {
    const ValueDesc& c = ctx.input(2);
    if (c.dtype != kFloat) return ctx.error("C must be float");
    auto r = broadcast_shapes(c.shape, out);
    if (!r.ok() || *r != out) {
      return ctx.error("C " + shape_string(c.shape) + " does not broadcast to " +
                       shape_string(out));
    }
    cplan = make_broadcast_plan({c.shape}, out);
  }
  ctx.set_output(0, kFloat, out);
  OP_ASSIGN_OR_RETURN(auto prep, prepared_b(ctx, 1, tb));
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    const float* ap = static_cast<const float*>(io.in[0]);
    float* y = static_cast<float*>(io.out[0]);
    std::vector<float> at;
    if (ta) {  // [K, M] -> [M, K]
      at.resize(size_t(m * k));
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < m; ++j) at[size_t(j * k + i)] = ap[i * m + j];
      }
      ap = at.data();
    }
    if (prep) {
      prep->multiply(m, ap, k, y, n, false, io.pool, io.workspace);
    } else {  // B packed now, straight from [K, N] or [N, K]
      gemm_f32(size_t(m), size_t(n), size_t(k), ap, size_t(k), static_cast<const float*>(io.in[1]),
               tb ? kernels::PackSourceLayout::kNK : kernels::PackSourceLayout::kKN, y, size_t(n),
               false, io.workspace, 0, io.pool);
    }
    if (alpha != 1.0f) {
      for (int64_t i = 0; i < m * n; ++i) y[i] *= alpha;
    }
    if (has_c && beta != 0.0f) {
      const float* c = static_cast<const float*>(io.in[2]);
      int64_t rows = cplan.outer_count();
      int64_t off[1];
      for (int64_t r = 0; r < rows; ++r) {
        cplan.offsets(r, off);
        float* yr = y + r * cplan.inner;
        const float* cr = c + off[0];
        if (cplan.inner_stride[0] == 1) {
          for (int64_t j = 0; j < cplan.inner; ++j) yr[j] += beta * cr[j];
        } else {
          for (int64_t j = 0; j < cplan.inner; ++j) yr[j] += beta * cr[0];
        }
      }
    }
  }));
}

}  // namespace onnx_prepack::runtime
