// MatMulInteger (int32 products of 8-bit operands less their zero points) and
// QLinearMatMul (the same, requantized to the output's scale and zero point),
// numpy-batched with broadcasting. Zero points and scales are per tensor, per
// row of A or per column of B, as the operators allow.
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/linalg/matmul_geometry.h"
#include "runtime/ops/quant/quant_ops.h"

namespace onnx_prepack::runtime {
namespace {

bool is_8bit(int32_t t) { return t == kInt8 || t == kUint8; }

int32_t load8(int32_t t, const void* p, int64_t i) {
  return t == kInt8 ? int32_t(static_cast<const int8_t*>(p)[i])
                    : int32_t(static_cast<const uint8_t*>(p)[i]);
}

// The batched product's geometry (matmul_geometry.h) with its batch offsets.
struct MatMulPlan {
  int64_t m = 0, k = 0, n = 0, batches = 1;
  std::vector<int64_t> a_off, b_off;  // element offsets per output batch
  Shape out;
};

Result<MatMulPlan> plan_matmul(const BuildContext& ctx, const Shape& as, const Shape& bs) {
  OP_ASSIGN_OR_RETURN(const MatMulGeometry g, matmul_geometry(ctx, as, bs));
  MatMulPlan p;
  p.m = g.m;
  p.k = g.k;
  p.n = g.n;
  p.batches = g.batches;
  p.out = g.out;
  g.batch_offsets(p.a_off, p.b_off);
  return p;
}

// A per-tensor or per-row/column parameter of `count` entries.
Status check_param(const BuildContext& ctx, int i, int64_t count, const char* what) {
  if (!ctx.has_input(i)) return Status();
  const int64_t n = checked_numel(ctx.input(i).shape);
  if (n != 1 && n != count) {
    return ctx.error(std::string(what) + " " + shape_string(ctx.input(i).shape) +
                     " must hold 1 or " + std::to_string(count) + " values");
  }
  return Status();
}

// acc[b][m][n] = sum_k (A - azp) (B - bzp) for every output batch.
void integer_products(const MatMulPlan& p, int32_t at, const void* a, const void* azp,
                      int64_t azp_n, int32_t bt, const void* b, const void* bzp, int64_t bzp_n,
                      std::vector<int32_t>& acc) {
  acc.assign(size_t(p.batches * p.m * p.n), 0);
  std::vector<int32_t> arow(size_t(p.k));
  for (int64_t bi = 0; bi < p.batches; ++bi) {
    for (int64_t i = 0; i < p.m; ++i) {
      const int32_t za = azp ? load8(at, azp, azp_n == 1 ? 0 : i) : 0;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        arow[size_t(kk)] = load8(at, a, p.a_off[size_t(bi)] + i * p.k + kk) - za;
      }
      int32_t* out = acc.data() + (bi * p.m + i) * p.n;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const int32_t av = arow[size_t(kk)];
        const int64_t brow = p.b_off[size_t(bi)] + kk * p.n;
        for (int64_t j = 0; j < p.n; ++j) {
          const int32_t zb = bzp ? load8(bt, bzp, bzp_n == 1 ? 0 : j) : 0;
          out[j] += av * (load8(bt, b, brow + j) - zb);
        }
      }
    }
  }
}

Result<std::unique_ptr<Kernel>> build_mmi(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* a, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* b, ctx.require_input(1));
  if (!is_8bit(a->dtype) || !is_8bit(b->dtype)) return ctx.error("A and B must be int8 or uint8");
  OP_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(ctx, a->shape, b->shape));
  OP_RETURN_IF_ERROR(check_param(ctx, 2, p.m, "a_zero_point"));
  OP_RETURN_IF_ERROR(check_param(ctx, 3, p.n, "b_zero_point"));
  const int64_t azn = ctx.has_input(2) ? checked_numel(ctx.input(2).shape) : 0;
  const int64_t bzn = ctx.has_input(3) ? checked_numel(ctx.input(3).shape) : 0;
  ctx.set_output(0, kInt32, p.out);
  const int32_t at = a->dtype, bt = b->dtype;
  // A constant 2-D B: packed once for the int8 GEMM kernels. Its batch is A's alone (B has
  // none), so the batches are consecutive m x k blocks of A: one product of batches * m rows.
  if (ctx.input_value(1) != nullptr && b->shape.size() == 2) {
    OP_ASSIGN_OR_RETURN(const int64_t rows, checked_mul(p.batches, p.m, ctx.where() + ": A rows"));
    PackedMatMulIntegerDesc d;
    d.rows = rows;
    d.k = p.k;
    d.n = p.n;
    d.a_signed = at == kInt8;
    d.b_signed = bt == kInt8;
    d.za_n = azn;
    d.zb_n = bzn;
    return build_packed_matmul_integer(ctx, d);
  }
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<int32_t> acc;
    integer_products(p, at, io.in[0], azn ? io.in[2] : nullptr, azn, bt, io.in[1],
                     bzn ? io.in[3] : nullptr, bzn, acc);
    std::copy(acc.begin(), acc.end(), static_cast<int32_t*>(io.out[0]));
  }));
}

Result<std::unique_ptr<Kernel>> build_qlmm(BuildContext& ctx) {
  for (int i = 0; i < 8; ++i) OP_RETURN_IF_ERROR(ctx.require_input(i).status());
  const ValueDesc &a = ctx.input(0), &b = ctx.input(3);
  if (!is_8bit(a.dtype) || !is_8bit(b.dtype) || !is_8bit(ctx.input(7).dtype)) {
    return ctx.error("a, b and y must be int8 or uint8");
  }
  for (int i : {1, 4, 6}) {
    if (ctx.input(i).dtype != kFloat) return ctx.error("scales must be float");
  }
  OP_ASSIGN_OR_RETURN(MatMulPlan p, plan_matmul(ctx, a.shape, b.shape));
  OP_RETURN_IF_ERROR(check_param(ctx, 1, p.m, "a_scale"));
  OP_RETURN_IF_ERROR(check_param(ctx, 2, p.m, "a_zero_point"));
  OP_RETURN_IF_ERROR(check_param(ctx, 4, p.n, "b_scale"));
  OP_RETURN_IF_ERROR(check_param(ctx, 5, p.n, "b_zero_point"));
  OP_RETURN_IF_ERROR(check_param(ctx, 6, 1, "y_scale"));
  OP_RETURN_IF_ERROR(check_param(ctx, 7, 1, "y_zero_point"));
  const int64_t asn = checked_numel(ctx.input(1).shape), azn = checked_numel(ctx.input(2).shape);
  const int64_t bsn = checked_numel(ctx.input(4).shape), bzn = checked_numel(ctx.input(5).shape);
  const int32_t at = a.dtype, bt = b.dtype, yt = ctx.input(7).dtype;
  ctx.set_output(0, yt, p.out);
  // A constant 2-D b: the int32 product on the packed int8 GEMM (exact, so bitwise these
  // loops' acc), then this requantize loop's expression (integer_matmul_float.cc).
  if (ctx.input_value(3) != nullptr && b.shape.size() == 2) {
    return build_packed_qlinear_matmul(ctx, asn, azn, bsn, bzn);
  }
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<int32_t> acc;
    integer_products(p, at, io.in[0], io.in[2], azn, bt, io.in[3], io.in[5], bzn, acc);
    const float* as = static_cast<const float*>(io.in[1]);
    const float* bs = static_cast<const float*>(io.in[4]);
    const float ys = *static_cast<const float*>(io.in[6]);
    const int32_t yz = load8(yt, io.in[7], 0);
    const int32_t lo = yt == kInt8 ? -128 : 0, hi = yt == kInt8 ? 127 : 255;
    for (int64_t bi = 0; bi < p.batches; ++bi) {
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          const int64_t o = (bi * p.m + i) * p.n + j;
          const float mult = as[asn == 1 ? 0 : i] * bs[bsn == 1 ? 0 : j] / ys;
          const float v = std::nearbyint(float(acc[size_t(o)]) * mult) + float(yz);
          const int32_t q = int32_t(std::clamp(v, float(lo), float(hi)));
          if (yt == kInt8) {
            static_cast<int8_t*>(io.out[0])[o] = int8_t(q);
          } else {
            static_cast<uint8_t*>(io.out[0])[o] = uint8_t(q);
          }
        }
      }
    }
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_matmul_integer(BuildContext& ctx) { return build_mmi(ctx); }
Result<std::unique_ptr<Kernel>> build_qlinear_matmul(BuildContext& ctx) { return build_qlmm(ctx); }

}  // namespace onnx_prepack::runtime
