// MatMulInteger with a constant 2-D B on the int8 GEMM kernels
// (kernels/i8_gemm/i8_gemm.h): B's packed panels come from the session's
// preparer when B is an initializer (a compiled or cached entry of the
// i8_gemm_b pack family mapped in place, or a miss packed now and written
// back), else B is packed once, at plan time, into memory the kernel owns
// (reserved against the memory budget, like Resize's tables); a batched A is
// one [batches * m, K] product. The zero points keep
// integer_matmul.cc's meaning: A's per tensor or per row of each batch's m
// rows, B's per tensor or per column, read as the operands' types; the
// products are exact, so the output is bitwise the loops' (mod 2^32).
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/i8_gemm/i8_gemm.h"
#include "runtime/kernel.h"
#include "runtime/memory_account.h"
#include "runtime/ops/quant/quant_ops.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {
namespace {

struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

uint64_t round64(uint64_t n) { return (n + 63) / 64 * 64; }

// The zero point values as int32, read as the operand's type.
void widen_zero_points(const void* src, bool is_signed, int64_t n, int32_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = is_signed ? int32_t(static_cast<const int8_t*>(src)[i])
                       : int32_t(static_cast<const uint8_t*>(src)[i]);
  }
}

class PackedMatMulInteger final : public Kernel {
 public:
  PackedMatMulInteger(const PackedMatMulIntegerDesc& d, std::shared_ptr<const uint8_t> packed,
                      std::shared_ptr<MemoryReservation> reserved)
      : d_(d),
        shape_{d.k, d.n, d.b_signed},
        packed_(std::move(packed)),
        reserved_(std::move(reserved)),
        kernels_(kernels::i8_gemm_select(device::host_cpu_features())) {}

  // Workspace slot 0: the kernel's prepared A and the zero points as int32.
  uint64_t scratch_bytes() const override {
    return saturating_add(uint64_t(kernels::i8_gemm_scratch_bytes(shape_, d_.rows)), zp_bytes());
  }

  void run(const KernelIO& io) const override {
    if (d_.rows == 0 || d_.n == 0) return;
    const uint64_t gemm_bytes = kernels::i8_gemm_scratch_bytes(shape_, d_.rows);
    void* ws = io.workspace ? io.workspace->get(0, size_t(scratch_bytes())) : nullptr;
    std::vector<int32_t> own_zp;
    int32_t* zp = nullptr;
    if (ws != nullptr) {
      zp = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(ws) + gemm_bytes);
    } else {
      own_zp.resize(size_t(d_.za_n + d_.zb_n));
      zp = own_zp.data();
    }
    kernels::I8GemmArgs g;
    g.M = d_.rows;
    g.a = io.in[0];
    g.lda = size_t(d_.k);
    g.a_signed = d_.a_signed;
    if (d_.za_n > 0) {
      widen_zero_points(io.in[2], d_.a_signed, d_.za_n, zp);
      g.za = zp;
      g.za_n = d_.za_n;
    }
    if (d_.zb_n > 0) {
      widen_zero_points(io.in[3], d_.b_signed, d_.zb_n, zp + d_.za_n);
      g.zb = zp + d_.za_n;
      g.zb_n = d_.zb_n;
    }
    g.ldc = size_t(d_.n);
    if (ep_) {  // the fused Cast -> Mul [-> Add] [-> Relu] (kernel.h): float out
      g.scale = static_cast<const float*>(io.in[4]);
      g.scale_n = ep_->scale_n;
      g.bias = ep_->bias_n > 0 ? static_cast<const float*>(io.in[5]) : nullptr;
      g.bias_n = std::max<int64_t>(1, ep_->bias_n);
      g.bias_first = ep_->bias_first;
      g.relu = ep_->relu;
      g.cf = static_cast<float*>(io.out[0]);
    } else {
      g.c = static_cast<int32_t*>(io.out[0]);
    }
    kernels::i8_gemm(kernels_, shape_, packed_.get(), g, ws, io.pool);
  }

  std::unique_ptr<Kernel> with_float_epilogue(const IntegerMatMulEpilogue& e) const override {
    if ((e.scale_n != 1 && e.scale_n != d_.n) || (e.bias_n > 1 && e.bias_n != d_.n)) return nullptr;
    auto k = std::make_unique<PackedMatMulInteger>(*this);  // shares the packed B
    k->ep_ = e;
    return k;
  }

 private:
  uint64_t zp_bytes() const { return round64(uint64_t(d_.za_n + d_.zb_n) * 4); }

  PackedMatMulIntegerDesc d_;
  kernels::I8GemmShape shape_;
  std::shared_ptr<const uint8_t> packed_;
  std::shared_ptr<MemoryReservation> reserved_;
  kernels::I8GemmKernels kernels_;
  std::optional<IntegerMatMulEpilogue> ep_;  // set: the fused float epilogue
};

}  // namespace

Result<PackedI8B> packed_i8_b(const BuildContext& ctx, int index,
                              const kernels::I8GemmShape& shape) {
  const Tensor* b = ctx.input_value(index);
  if (b == nullptr || b->shape.size() != 2) return ctx.error("B must be a 2-D constant");
  const uint64_t bytes = shape.packed_bytes();
  if (ctx.weights() != nullptr && ctx.input(index).is_initializer) {
    OP_ASSIGN_OR_RETURN(PreparedPack got, ctx.prepare_weight(index, [&](std::span<uint8_t> out) {
      if (out.size() != bytes) return internal_error("packed int8 B size differs");
      kernels::i8_pack_b(shape, b->data, size_t(shape.N), out.data());
      return ok_status();
    }));
    // Empty: not prepared (an empty B); another size cannot come from the
    // family's checked entries, and is packed here rather than read.
    if (!got.bytes.empty() && got.bytes.size() == bytes) {
      return PackedI8B{std::shared_ptr<const uint8_t>(got.keep_alive, got.bytes.data()), nullptr};
    }
  }
  OP_ASSIGN_OR_RETURN(MemoryReservation r, reserve_memory(bytes, ctx.where() + ": packed int8 B"));
  std::shared_ptr<uint8_t> packed(
      static_cast<uint8_t*>(::operator new[](std::max<uint64_t>(bytes, 64), std::align_val_t(64))),
      AlignedFree());
  kernels::i8_pack_b(shape, b->data, size_t(shape.N), packed.get());
  return PackedI8B{std::move(packed), std::make_shared<MemoryReservation>(std::move(r))};
}

Result<std::unique_ptr<Kernel>> build_packed_matmul_integer(const BuildContext& ctx,
                                                            const PackedMatMulIntegerDesc& d) {
  OP_ASSIGN_OR_RETURN(PackedI8B b, packed_i8_b(ctx, 1, kernels::I8GemmShape{d.k, d.n, d.b_signed}));
  return std::unique_ptr<Kernel>(
      new PackedMatMulInteger(d, std::move(b.bytes), std::move(b.reserved)));
}

}  // namespace onnx_prepack::runtime
