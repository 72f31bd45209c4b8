// The int8 GEMM's other consumers with a constant 2-D B (packed through
// packed_i8_b, so the i8_gemm_b pack family's entries serve them):
//
//  - com.microsoft MatMulIntegerToFloat (A uint8/int8, B int8/uint8, a_scale,
//    b_scale, a_zero_point, b_zero_point, bias):
//      Y = float((A - za)(B - zb)) * (a_scale * b_scale[n]) + bias[n]
//  - com.microsoft DynamicQuantizeMatMul (A float, B, b_scale, b_zero_point,
//    bias): A quantized to uint8 per tensor as onnxruntime does it (the
//    DynamicQuantizeLinear range and quantize pass of vec_quant.h; a_scale 1
//    where the range is empty), then as above.
//  - the QDQ integer path's DynamicQuantizeMatMul (build_qdq_dynamic_quantize_matmul):
//    the same with A quantized per row of the [rows, K] product, each row its
//    own DynamicQuantizeLinear range, scale and zero point (the GEMM's per-row
//    zero points, the epilogue's per-row scale: the multiplier a_scale[r] *
//    b_scale[n] rounded first, as above), so a row's error follows its own
//    range, not the tensor's (docs/decisions.md, "QDQ units").
//
// onnxruntime's order: the multiplier a_scale * b_scale is one float product
// computed first, then MLAS's scale-bias output processor multiplies the
// converted int32 by it and adds the bias, one IEEE operation each, which is
// the i8_gemm float epilogue (bias after the product). a_scale and
// a_zero_point are per tensor; b_scale and b_zero_point per tensor or per
// column. A [..., M, K] is one product of numel / K rows.
//  - QLinearMatMul with a constant 2-D B: the int32 product on the same
//    kernel, then integer_matmul.cc's requantize loop (bitwise the loops).
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/vec_math/vec_quant.h"
#include "runtime/kernel.h"
#include "runtime/memory_account.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/quant/quant_ops.h"

namespace onnx_prepack::runtime {
namespace {

uint64_t round64(uint64_t n) { return (n + 63) / 64 * 64; }

bool is_8bit(int32_t t) { return t == kInt8 || t == kUint8; }

int32_t load8(bool is_signed, const void* p, int64_t i) {
  return is_signed ? int32_t(static_cast<const int8_t*>(p)[i])
                   : int32_t(static_cast<const uint8_t*>(p)[i]);
}

// DynamicQuantizeLinear's range of x[0, n) (linear_quant.cc's split): chunks reduced apart then
// combined in the minps / maxps order, the same values whatever the split (vec_quant.h).
void dynamic_range(const kernels::vec::QuantKernels& qk, const float* x, int64_t n,
                   base::ThreadPool* pool, float* lo, float* hi) {
  const size_t workers = pool ? pool->size() : 1;
  const int64_t chunks =
      workers > 1 ? std::min<int64_t>(int64_t(workers) * 4, (n + kMinChunk - 1) / kMinChunk) : 1;
  if (chunks <= 1) {
    qk.minmax(x, size_t(n), lo, hi);
    return;
  }
  std::vector<float> los(size_t(chunks), 0.0f), his(size_t(chunks), 0.0f);
  pool->parallel_for(size_t(chunks), [&](size_t c, size_t) {
    const int64_t b = n * int64_t(c) / chunks, e = n * int64_t(c + 1) / chunks;
    qk.minmax(x + b, size_t(e - b), &los[c], &his[c]);
  });
  for (int64_t c = 0; c < chunks; ++c) {
    *lo = los[size_t(c)] < *lo ? los[size_t(c)] : *lo;
    *hi = his[size_t(c)] > *hi ? his[size_t(c)] : *hi;
  }
}

enum class Op { kToFloat, kDynamic, kDynamicRows, kQLinear };

// Input positions of each operator (-1: none).
struct Inputs {
  int a_scale = -1, a_zp = -1, b_scale = -1, b_zp = -1, bias = -1;
};

struct Desc {
  Op op = Op::kToFloat;
  Inputs in;
  int64_t rows = 0, m = 0, k = 0, n = 0;  // rows = batches * m
  bool a_signed = false, b_signed = false, y_signed = false;
  int64_t as_n = 0, za_n = 0, bs_n = 0, zb_n = 0, bias_n = 0;  // 0: absent
};

class PackedIntegerGemm final : public Kernel {
 public:
  PackedIntegerGemm(const Desc& d, PackedI8B b)
      : d_(d),
        shape_{d.k, d.n, d.b_signed},
        b_(std::move(b)),
        kernels_(kernels::i8_gemm_select(device::host_cpu_features())) {}

  // Workspace slot 0: the kernel's scratch, then A quantized (DynamicQuantizeMatMul; per row:
  // and the rows' scales), the multipliers (or QLinearMatMul's int32 product) and the zero
  // points as int32 (A's: per row of A's M, or of every row quantized apart).
  uint64_t scratch_bytes() const override {
    uint64_t s = round64(kernels::i8_gemm_scratch_bytes(shape_, d_.rows));
    if (d_.op == Op::kDynamic || d_.op == Op::kDynamicRows) s += round64(uint64_t(d_.rows * d_.k));
    if (d_.op == Op::kDynamicRows) s += round64(uint64_t(d_.rows) * 4);
    if (d_.op == Op::kQLinear) {
      s += round64(uint64_t(d_.rows * d_.n) * 4);
    } else {
      s += round64(uint64_t(d_.n) * 4);
    }
    return s + round64(uint64_t(za_entries() + d_.n) * 4);
  }

  void run(const KernelIO& io) const override {
    if (d_.rows == 0 || d_.n == 0) return;
    const uint64_t gemm_bytes = round64(kernels::i8_gemm_scratch_bytes(shape_, d_.rows));
    const uint64_t total = scratch_bytes();
    void* ws = io.workspace ? io.workspace->get(0, size_t(total)) : nullptr;
    std::vector<uint64_t> own;  // no workspace: the kernel allocates its own scratch
    void* gemm_ws = ws;
    uint8_t* p = static_cast<uint8_t*>(ws) + gemm_bytes;
    if (ws == nullptr) {
      own.resize(size_t((total - gemm_bytes) / 8 + 8));
      p = reinterpret_cast<uint8_t*>(own.data());
    }
    kernels::I8GemmArgs g;
    g.M = d_.rows;
    g.lda = size_t(d_.k);
    g.ldc = size_t(d_.n);
    g.a = io.in[0];
    g.a_signed = d_.a_signed;
    float a_scale = 0;
    int32_t za = 0;
    uint8_t* a_rows = nullptr;  // kDynamicRows: A quantized, then each row's scale
    float* row_scale = nullptr;
    if (d_.op == Op::kDynamicRows) {
      a_rows = p;
      p += round64(uint64_t(d_.rows * d_.k));
      row_scale = reinterpret_cast<float*>(p);
      p += round64(uint64_t(d_.rows) * 4);
    } else if (d_.op == Op::kDynamic) {
      const kernels::vec::QuantKernels& qk = kernels::vec::host_quant_kernels();
      const float* x = static_cast<const float*>(io.in[0]);
      const size_t count = size_t(d_.rows * d_.k);
      float lo = 0, hi = 0;
      dynamic_range(qk, x, int64_t(count), io.pool, &lo, &hi);
      const kernels::vec::DynamicQuantParams q = kernels::vec::dynamic_quant_params(lo, hi);
      auto* aq = p;
      p += round64(count);
      parallel_range(io.pool, int64_t(count), kMinChunk, [&](int64_t b, int64_t e) {
        qk.quantize_u8(x + b, aq + b, size_t(e - b), q.scale, q.zp);
      });
      g.a = aq;
      g.a_signed = false;
      a_scale = hi == lo ? 1.0f : q.scale;  // onnxruntime's scale of an empty range
      za = int32_t(q.zp);
    } else if (d_.op == Op::kToFloat) {
      a_scale = *static_cast<const float*>(io.in[size_t(d_.in.a_scale)]);
    }
    float* mult = nullptr;
    int32_t* c = nullptr;
    if (d_.op == Op::kQLinear) {
      c = reinterpret_cast<int32_t*>(p);
      p += round64(uint64_t(d_.rows * d_.n) * 4);
    } else {
      mult = reinterpret_cast<float*>(p);
      p += round64(uint64_t(d_.n) * 4);
    }
    int32_t* zp = reinterpret_cast<int32_t*>(p);
    if (d_.op == Op::kDynamicRows) {
      quantize_rows(io, a_rows, row_scale, zp);
      g.a = a_rows;
      g.a_signed = false;
      g.za = zp;
      g.za_n = d_.rows;
    } else if (d_.op == Op::kDynamic) {
      zp[0] = za;
      g.za = zp;
      g.za_n = 1;
    } else if (d_.za_n > 0) {
      for (int64_t i = 0; i < d_.za_n; ++i)
        zp[i] = load8(d_.a_signed, io.in[size_t(d_.in.a_zp)], i);
      g.za = zp;
      g.za_n = d_.za_n;
    }
    if (d_.zb_n > 0) {
      for (int64_t j = 0; j < d_.zb_n; ++j) {
        zp[za_entries() + j] = load8(d_.b_signed, io.in[size_t(d_.in.b_zp)], j);
      }
      g.zb = zp + za_entries();
      g.zb_n = d_.zb_n;
    }
    if (d_.op == Op::kQLinear) {
      g.c = c;
      kernels::i8_gemm(kernels_, shape_, b_.bytes.get(), g, gemm_ws, io.pool);
      requantize(io, c);
      return;
    }
    const float* bs = static_cast<const float*>(io.in[size_t(d_.in.b_scale)]);
    if (d_.op == Op::kDynamicRows) {
      g.scale = bs;  // the kernel forms row_scale[r] * bs[n]
      g.row_scale = row_scale;
    } else {
      for (int64_t j = 0; j < d_.bs_n; ++j) mult[j] = a_scale * bs[j];
      g.scale = mult;
    }
    g.scale_n = d_.bs_n;
    if (d_.bias_n > 0) {
      g.bias = static_cast<const float*>(io.in[size_t(d_.in.bias)]);
      g.bias_n = d_.bias_n;
    }
    g.cf = static_cast<float*>(io.out[0]);
    kernels::i8_gemm(kernels_, shape_, b_.bytes.get(), g, gemm_ws, io.pool);
  }

 private:
  // A's zero points held as int32: one per row quantized apart, else up to M.
  int64_t za_entries() const { return d_.op == Op::kDynamicRows ? d_.rows : d_.m; }

  // A [rows, K] to uint8, each row through DynamicQuantizeLinear's range and
  // quantize pass on its own (rows are independent: any split, the same bits).
  void quantize_rows(const KernelIO& io, uint8_t* aq, float* row_scale, int32_t* zp) const {
    const kernels::vec::QuantKernels& qk = kernels::vec::host_quant_kernels();
    const float* x = static_cast<const float*>(io.in[0]);
    const int64_t k = d_.k;
    const int64_t min_rows = std::max<int64_t>(1, kMinChunk / std::max<int64_t>(k, 1));
    parallel_range(io.pool, d_.rows, min_rows, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float* xr = x + r * k;
        float lo = 0, hi = 0;
        qk.minmax(xr, size_t(k), &lo, &hi);
        const kernels::vec::DynamicQuantParams q = kernels::vec::dynamic_quant_params(lo, hi);
        qk.quantize_u8(xr, aq + r * k, size_t(k), q.scale, q.zp);
        row_scale[r] = hi == lo ? 1.0f : q.scale;  // onnxruntime's scale of an empty range
        zp[r] = int32_t(q.zp);
      }
    });
  }

  // integer_matmul.cc's QLinearMatMul loop over the int32 product: the same expression.
  void requantize(const KernelIO& io, const int32_t* acc) const {
    const float* as = static_cast<const float*>(io.in[1]);
    const float* bs = static_cast<const float*>(io.in[4]);
    const float ys = *static_cast<const float*>(io.in[6]);
    const int32_t yz = load8(d_.y_signed, io.in[7], 0);
    const int32_t lo = d_.y_signed ? -128 : 0, hi = d_.y_signed ? 127 : 255;
    for (int64_t r = 0; r < d_.rows; ++r) {
      const int64_t i = r % d_.m;
      for (int64_t j = 0; j < d_.n; ++j) {
        const int64_t o = r * d_.n + j;
        const float mult = as[d_.as_n == 1 ? 0 : i] * bs[d_.bs_n == 1 ? 0 : j] / ys;
        const float v = std::nearbyint(float(acc[o]) * mult) + float(yz);
        const int32_t q = int32_t(std::clamp(v, float(lo), float(hi)));
        if (d_.y_signed) {
          static_cast<int8_t*>(io.out[0])[o] = int8_t(q);
        } else {
          static_cast<uint8_t*>(io.out[0])[o] = uint8_t(q);
        }
      }
    }
  }

  Desc d_;
  kernels::I8GemmShape shape_;
  PackedI8B b_;
  kernels::I8GemmKernels kernels_;
};

// Elements of optional input i (0: absent); an error unless 1 or `count` (count 1: per tensor).
Result<int64_t> param_count(const BuildContext& ctx, int i, int64_t count, const char* what) {
  if (!ctx.has_input(i)) return int64_t(0);
  const int64_t n = checked_numel(ctx.input(i).shape);
  if (n != 1 && n != count) {
    return ctx.error(std::string(what) + " " + shape_string(ctx.input(i).shape) + " must hold 1" +
                     (count != 1 ? " or " + std::to_string(count) : "") + " values");
  }
  return n;
}

// Geometry common to the three: A [..., M, K] (rank >= 1) x constant B [K, N].
Status plan(BuildContext& ctx, int b_index, Desc& d, Shape& out) {
  const ValueDesc& a = ctx.input(0);
  const ValueDesc& b = ctx.input(b_index);
  if (!is_8bit(b.dtype)) return ctx.error("B must be int8 or uint8");
  if (ctx.input_value(b_index) == nullptr || b.shape.size() != 2) {
    return ctx.error("B must be a 2-D constant");
  }
  if (a.shape.empty()) return ctx.error("A must have rank >= 1");
  d.k = a.shape.back();
  d.m = a.shape.size() >= 2 ? a.shape[a.shape.size() - 2] : 1;
  d.n = b.shape[1];
  if (b.shape[0] != d.k) {
    return ctx.error("inner dimensions differ: " + shape_string(a.shape) + " x " +
                     shape_string(b.shape));
  }
  const Shape lead(a.shape.begin(), a.shape.end() - 1);
  d.rows = checked_numel(lead);  // dims-lint: ok (A's shape was checked when planned)
  if (d.m == 0) d.m = 1;
  d.b_signed = b.dtype == kInt8;
  out.assign(a.shape.begin(), a.shape.end() - 1);
  out.push_back(d.n);
  return Status();
}

Result<std::unique_ptr<Kernel>> finish(const BuildContext& ctx, int b_index, const Desc& d) {
  OP_ASSIGN_OR_RETURN(PackedI8B b,
                      packed_i8_b(ctx, b_index, kernels::I8GemmShape{d.k, d.n, d.b_signed}));
  return std::unique_ptr<Kernel>(new PackedIntegerGemm(d, std::move(b)));
}

Status check_float(const BuildContext& ctx, int i, const char* what) {
  if (i >= 0 && ctx.has_input(i) && ctx.input(i).dtype != kFloat) {
    return ctx.error(std::string(what) + " must be float");
  }
  return Status();
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_matmul_integer_to_float(BuildContext& ctx) {
  for (int i : {0, 1, 2, 3}) OP_RETURN_IF_ERROR(ctx.require_input(i).status());
  Desc d;
  d.op = Op::kToFloat;
  d.in.a_scale = 2;
  d.in.b_scale = 3;
  d.in.a_zp = 4;
  d.in.b_zp = 5;
  d.in.bias = 6;
  if (!is_8bit(ctx.input(0).dtype)) return ctx.error("A must be int8 or uint8");
  d.a_signed = ctx.input(0).dtype == kInt8;
  Shape out;
  OP_RETURN_IF_ERROR(plan(ctx, 1, d, out));
  OP_RETURN_IF_ERROR(check_float(ctx, 2, "a_scale"));
  OP_RETURN_IF_ERROR(check_float(ctx, 3, "b_scale"));
  OP_RETURN_IF_ERROR(check_float(ctx, 6, "bias"));
  if (ctx.has_input(4) && ctx.input(4).dtype != ctx.input(0).dtype) {
    return ctx.error("a_zero_point must have A's type");
  }
  if (ctx.has_input(5) && ctx.input(5).dtype != ctx.input(1).dtype) {
    return ctx.error("b_zero_point must have B's type");
  }
  OP_ASSIGN_OR_RETURN(d.as_n, param_count(ctx, 2, 1, "a_scale"));
  OP_ASSIGN_OR_RETURN(d.za_n, param_count(ctx, 4, 1, "a_zero_point"));
  OP_ASSIGN_OR_RETURN(d.bs_n, param_count(ctx, 3, d.n, "b_scale"));
  OP_ASSIGN_OR_RETURN(d.zb_n, param_count(ctx, 5, d.n, "b_zero_point"));
  OP_ASSIGN_OR_RETURN(d.bias_n, param_count(ctx, 6, d.n, "bias"));
  if (d.bias_n == 1 && d.n != 1) return ctx.error("bias must hold N values");
  ctx.set_output(0, kFloat, out);
  return finish(ctx, 1, d);
}

namespace {

Result<std::unique_ptr<Kernel>> dynamic_quantize_matmul(BuildContext& ctx, Op op) {
  for (int i : {0, 1, 2}) OP_RETURN_IF_ERROR(ctx.require_input(i).status());
  Desc d;
  d.op = op;
  d.in.b_scale = 2;
  d.in.b_zp = 3;
  d.in.bias = 4;
  if (ctx.input(0).dtype != kFloat) return ctx.error("A must be float");
  Shape out;
  OP_RETURN_IF_ERROR(plan(ctx, 1, d, out));
  OP_RETURN_IF_ERROR(check_float(ctx, 2, "b_scale"));
  OP_RETURN_IF_ERROR(check_float(ctx, 4, "bias"));
  if (ctx.has_input(3) && ctx.input(3).dtype != ctx.input(1).dtype) {
    return ctx.error("b_zero_point must have B's type");
  }
  OP_ASSIGN_OR_RETURN(d.bs_n, param_count(ctx, 2, d.n, "b_scale"));
  OP_ASSIGN_OR_RETURN(d.zb_n, param_count(ctx, 3, d.n, "b_zero_point"));
  OP_ASSIGN_OR_RETURN(d.bias_n, param_count(ctx, 4, d.n, "bias"));
  if (d.bias_n == 1 && d.n != 1) return ctx.error("bias must hold N values");
  ctx.set_output(0, kFloat, out);
  return finish(ctx, 1, d);
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_dynamic_quantize_matmul(BuildContext& ctx) {
  return dynamic_quantize_matmul(ctx, Op::kDynamic);
}

Result<std::unique_ptr<Kernel>> build_qdq_dynamic_quantize_matmul(BuildContext& ctx) {
  return dynamic_quantize_matmul(ctx, Op::kDynamicRows);
}

Result<std::unique_ptr<Kernel>> build_packed_qlinear_matmul(BuildContext& ctx, int64_t as_n,
                                                            int64_t za_n, int64_t bs_n,
                                                            int64_t zb_n) {
  Desc d;
  d.op = Op::kQLinear;
  d.in.a_scale = 1;
  d.in.a_zp = 2;
  d.in.b_scale = 4;
  d.in.b_zp = 5;
  d.a_signed = ctx.input(0).dtype == kInt8;
  d.y_signed = ctx.input(7).dtype == kInt8;
  Shape out;
  OP_RETURN_IF_ERROR(plan(ctx, 3, d, out));
  d.as_n = as_n;
  d.za_n = za_n;
  d.bs_n = bs_n;
  d.zb_n = zb_n;
  return finish(ctx, 3, d);
}

}  // namespace onnx_prepack::runtime
