// com.microsoft::MatMulNBits as ONNX Runtime defines it: Y = A dequant(B)^T
// (+ bias), B holding `bits`-bit codes of the N x K weight in blocks of
// `block_size` along K with a scale (and zero point) per block. B, scales and
// zero points must be constant: they are packed once, at plan time, into the
// panel records of kernels/q4_gemm/q4_gemm.h. accuracy_level 4 quantizes A to
// int8 per block (integer dot products); every other level computes in float.
#include <cstring>
#include <memory>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/q4_gemm/q4_gemm.h"
#include "pack/q_gemm_b.h"
#include "runtime/kernel.h"
#include "runtime/ops/quant/quant_ops.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {
namespace {

struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

// A float copy of a float or float16 constant.
std::vector<float> widen(const Tensor& t) {
  std::vector<float> out(size_t(t.numel()));
  if (t.dtype == kFloat) {
    std::memcpy(out.data(), t.data, out.size() * 4);
  } else {
    const auto* h = t.as<const uint16_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = half_to_float(h[i]);
  }
  return out;
}

class MatMulNBitsKernel final : public Kernel {
 public:
  MatMulNBitsKernel(kernels::QGemmShape shape, int level, std::shared_ptr<const uint8_t> packed,
                    kernels::QGemmKernels fns, int64_t rows, bool half, bool has_bias,
                    std::vector<float> bias)
      : shape_(shape),
        level_(level),
        packed_(std::move(packed)),
        fns_(fns),
        rows_(rows),
        half_(half),
        has_bias_(has_bias),
        bias_(std::move(bias)) {}

  // FLOAT16 A and Y are widened to float for the kernels: [rows, K] and [rows, N].
  uint64_t scalar_rows_bytes() const {
    return saturating_mul(
        uint64_t(rows_),
        saturating_mul(saturating_add(uint64_t(shape_.K), uint64_t(shape_.N)), sizeof(float)));
  }
  uint64_t scratch_bytes() const override { return half_ ? scalar_rows_bytes() : 0; }

  void run(const KernelIO& io) const override {
    const size_t K = size_t(shape_.K), N = size_t(shape_.N);
    const float* bias = nullptr;
    std::vector<float> bias_now;
    if (has_bias_) {
      if (!bias_.empty()) {
        bias = bias_.data();
      } else {  // bias fed at run time
        bias_now = widen(Tensor{half_ ? kFloat16 : kFloat, {int64_t(N)}, io.in[5]});
        bias = bias_now.data();
      }
    }
    if (!half_) {
      kernels::q_gemm(fns_, shape_, level_, packed_.get(), rows_,
                      static_cast<const float*>(io.in[0]), K, static_cast<float*>(io.out[0]), N,
                      bias, io.pool);
      return;
    }
    const auto* ah = static_cast<const uint16_t*>(io.in[0]);
    std::vector<float> a(size_t(rows_) * K), y(size_t(rows_) * N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = half_to_float(ah[i]);
    kernels::q_gemm(fns_, shape_, level_, packed_.get(), rows_, a.data(), K, y.data(), N, bias,
                    io.pool);
    auto* yh = static_cast<uint16_t*>(io.out[0]);
    for (size_t i = 0; i < y.size(); ++i) yh[i] = float_to_half(y[i]);
  }

 private:
  kernels::QGemmShape shape_;
  int level_;
  std::shared_ptr<const uint8_t> packed_;
  kernels::QGemmKernels fns_;
  int64_t rows_;
  bool half_;
  bool has_bias_;
  std::vector<float> bias_;
};

}  // namespace

Result<MatMulNBitsParams> matmul_nbits_params(const BuildContext& ctx) {
  MatMulNBitsParams p;
  p.shape.K = ctx.attr_int("K", -1);
  p.shape.N = ctx.attr_int("N", -1);
  const int64_t bits = ctx.attr_int("bits", 4);
  const int64_t block = ctx.attr_int("block_size", -1);
  p.level = int(ctx.attr_int("accuracy_level", 0));
  if (p.shape.K <= 0 || p.shape.N <= 0) return ctx.error("attributes K and N must be positive");
  if (bits != 4 && bits != 8) {
    return ctx.error("bits " + std::to_string(bits) + " is not supported (4 or 8)");
  }
  if (block < 16 || block > 256 || (block & (block - 1)) != 0) {
    return ctx.error("block_size " + std::to_string(block) + " must be a power of 2 in [16, 256]");
  }
  if (p.shape.K > (int64_t(1) << 40) || p.shape.N > (int64_t(1) << 40)) {
    return ctx.error("K or N too large");
  }
  p.shape.bits = int(bits);
  p.shape.block = int(block);
  return p;
}

Status check_matmul_nbits_sources(const BuildContext& ctx, const MatMulNBitsParams& p) {
  const kernels::QGemmShape& s = p.shape;
  const int64_t kb = s.k_blocks();
  const int64_t blob = int64_t(s.block) * s.bits / 8;
  const ValueDesc& b = ctx.input(1);
  if (b.dtype != kUint8 || b.shape != Shape{s.N, kb, blob}) {
    return ctx.error("B must be uint8 " + shape_string({s.N, kb, blob}) + ", got " +
                     dtype_name(b.dtype) + " " + shape_string(b.shape));
  }
  const ValueDesc& sc = ctx.input(2);
  if ((sc.dtype != kFloat && sc.dtype != kFloat16) || checked_numel(sc.shape) != s.N * kb) {
    return ctx.error("scales must hold N * k_blocks = " + std::to_string(s.N * kb) +
                     " float or float16 values, got " + dtype_name(sc.dtype) + " " +
                     shape_string(sc.shape));
  }
  if (ctx.has_input(3)) {
    const ValueDesc& zp = ctx.input(3);
    if (zp.dtype == kUint8) {
      const int64_t want = s.N * ((kb * s.bits + 7) / 8);
      if (checked_numel(zp.shape) != want) {
        return ctx.error("packed uint8 zero_points must hold " + std::to_string(want) +
                         " bytes, got " + shape_string(zp.shape));
      }
    } else if (zp.dtype == kFloat || zp.dtype == kFloat16) {
      if (checked_numel(zp.shape) != s.N * kb) {
        return ctx.error("zero_points must hold N * k_blocks values, got " +
                         shape_string(zp.shape));
      }
    } else {
      return ctx.error("zero_points of type " + dtype_name(zp.dtype) + " are not supported");
    }
  }
  return Status();
}

void fill_matmul_nbits(const BuildContext& ctx, const MatMulNBitsParams& p, uint8_t* out) {
  std::vector<float> scales = widen(*ctx.input_value(2));
  std::vector<float> zp_float;
  kernels::QWeightSource src;
  src.b = ctx.input_value(1)->as<const uint8_t>();
  src.scales = scales.data();
  if (ctx.has_input(3)) {
    const Tensor& zp = *ctx.input_value(3);
    if (zp.dtype == kUint8) {
      src.zp_packed = zp.as<const uint8_t>();
    } else {
      zp_float = widen(zp);
      src.zp_float = zp_float.data();
    }
  }
  kernels::q_pack_weights(p.shape, src, out);
}

Result<std::shared_ptr<const uint8_t>> pack_matmul_nbits(const BuildContext& ctx,
                                                         const MatMulNBitsParams& p) {
  // Initializers go through the session's preparer (a compiled entry checked
  // with its lineage, or packed now); anything else is packed here.
  const bool initializers = ctx.input(1).is_initializer && ctx.input(2).is_initializer &&
                            (!ctx.has_input(3) || ctx.input(3).is_initializer);
  if (ctx.weights() != nullptr && initializers) {
    const uint64_t bytes = pack::q_gemm_b_payload_bytes(p.shape);
    auto got = ctx.prepare_weight(1, [&](std::span<uint8_t> out) {
      if (out.size() != bytes) return internal_error("MatMulNBits pack size differs");
      fill_matmul_nbits(ctx, p, out.data());
      return ok_status();
    });
    if (!got.ok()) return got.status();
    if (!got->bytes.empty() && got->bytes.size() == bytes) {
      return std::shared_ptr<const uint8_t>(got->keep_alive, got->bytes.data());
    }
  }
  const size_t bytes = p.shape.packed_bytes();
  std::shared_ptr<uint8_t> packed(
      static_cast<uint8_t*>(::operator new[](bytes, std::align_val_t(64))), AlignedFree());
  fill_matmul_nbits(ctx, p, packed.get());
  return std::shared_ptr<const uint8_t>(packed);
}

Result<std::unique_ptr<Kernel>> build_matmul_nbits(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(MatMulNBitsParams p, matmul_nbits_params(ctx));
  OP_ASSIGN_OR_RETURN(const ValueDesc* a, ctx.require_input(0));
  OP_RETURN_IF_ERROR(ctx.require_input(1).status());
  OP_RETURN_IF_ERROR(ctx.require_input(2).status());
  if (ctx.has_input(4)) {
    return ctx.error("g_idx (act-order GPTQ) is not supported; re-export without g_idx");
  }
  if (a->dtype != kFloat && a->dtype != kFloat16) {
    return ctx.error("A must be float or float16, got " + dtype_name(a->dtype));
  }
  if (a->shape.empty() || a->shape.back() != p.shape.K) {
    return ctx.error("A " + shape_string(a->shape) +
                     " must end in K = " + std::to_string(p.shape.K));
  }
  OP_RETURN_IF_ERROR(check_matmul_nbits_sources(ctx, p));
  // One type parameter (T1) binds A, the scales and float zero points (ORT's schema).
  if (ctx.input(2).dtype != a->dtype) {
    return ctx.error("scales must have A's type " + dtype_name(a->dtype) + ", got " +
                     dtype_name(ctx.input(2).dtype));
  }
  if (ctx.has_input(3) && ctx.input(3).dtype != kUint8 && ctx.input(3).dtype != a->dtype) {
    return ctx.error("float zero_points must have A's type " + dtype_name(a->dtype) + ", got " +
                     dtype_name(ctx.input(3).dtype));
  }
  for (int i = 1; i <= 3; ++i) {
    if (ctx.has_input(i) && ctx.input_value(i) == nullptr) {
      return ctx.error("input " + std::to_string(i) + " ('" + ctx.input(i).name +
                       "') must be a constant initializer");
    }
  }
  const bool has_bias = ctx.has_input(5);
  std::vector<float> bias;
  if (has_bias) {
    const ValueDesc& bd = ctx.input(5);
    if (bd.dtype != a->dtype || checked_numel(bd.shape) != p.shape.N) {
      return ctx.error("bias must be " + dtype_name(a->dtype) + " [N], got " +
                       dtype_name(bd.dtype) + " " + shape_string(bd.shape));
    }
    if (bd.value) bias = widen(*bd.value);
  }
  Shape out = a->shape;
  out.back() = p.shape.N;
  ctx.set_output(0, a->dtype, out);
  const int64_t rows = shape_numel(a->shape) / p.shape.K;
  OP_ASSIGN_OR_RETURN(auto packed, pack_matmul_nbits(ctx, p));
  // Like ONNX Runtime: int8 A only with integer zero points (or none).
  const bool float_zp = ctx.has_input(3) && ctx.input(3).dtype != kUint8;
  const int level = p.level == 4 && !float_zp ? 4 : 0;
  return std::unique_ptr<Kernel>(new MatMulNBitsKernel(
      p.shape, level, std::move(packed), kernels::q_gemm_select(device::host_cpu_features()), rows,
      a->dtype == kFloat16, has_bias, std::move(bias)));
}

}  // namespace onnx_prepack::runtime
