// com.microsoft GatherBlockQuantized, as ONNX Runtime's CPU kernel: Gather of a block-quantized
// tensor along gather_axis, dequantized on the way: out = float(q - zero_point) * scale, one
// scale (and zero point) per block of block_size elements along quantize_axis.
// data INT4 / UINT4 (held widened, one element per byte: constants.h) with any axes, or UINT8
// holding 8 / bits elements per byte (low bits first) with gather_axis 0 and quantize_axis the
// last axis, whose logical size is the stored one times 8 / bits. Zero points: of data's type
// (UINT8: packed like data along quantize_axis); absent: 0 for INT4 / UINT4, 2^(bits-1) for
// UINT8. scales float or float16, the output of scales' type (float16 computed in float and
// rounded once). An index out of range fails the run (ONNX Runtime writes zeros).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/vec_math/vec_half.h"
#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/quant/quant_ops.h"

namespace onnx_prepack::runtime {
namespace {

constexpr int32_t kModelUint4 = 21, kModelInt4 = 22;  // TensorProto.DataType

}  // namespace

Result<std::unique_ptr<Kernel>> build_gather_block_quantized(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* data, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* idx, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(const ValueDesc* scales, ctx.require_input(2));
  if (ctx.input_count() > 4)
    return ctx.error(std::to_string(ctx.input_count()) + " inputs, at most 4");
  if (ctx.output_count() != 1) return ctx.error("one output expected");
  const bool four = data->model_dtype == kModelInt4 || data->model_dtype == kModelUint4;
  const bool packed = data->dtype == kUint8 && data->model_dtype == kUndefined;
  if (!four && !packed) {
    const int32_t t = data->model_dtype != kUndefined ? data->model_dtype : data->dtype;
    return ctx.error("data must be int4, uint4 or uint8, got " + dtype_name(t));
  }
  const bool signed4 = data->model_dtype == kModelInt4;
  if (idx->dtype != kInt32 && idx->dtype != kInt64)
    return ctx.error("indices must be int32 or int64, got " + dtype_name(idx->dtype));
  if (scales->dtype != kFloat && scales->dtype != kFloat16)
    return ctx.error("scales must be float or float16, got " + dtype_name(scales->dtype));
  const int64_t rank = int64_t(data->shape.size());
  if (rank == 0) return ctx.error("data must have rank >= 1");
  const int64_t bits = ctx.attr_int("bits", 4);
  if (packed ? (bits != 2 && bits != 4 && bits != 8) : bits != 4)
    return ctx.error("bits " + std::to_string(bits) + " is not supported for " +
                     (packed ? "uint8 data (2, 4 or 8)" : "int4/uint4 data (4)"));
  const int64_t block = ctx.attr_int("block_size", 128);
  if (block < 16 || (block & (block - 1)) != 0 || block > (int64_t(1) << 30))
    return ctx.error("block_size " + std::to_string(block) + " must be a power of 2, at least 16");
  OP_ASSIGN_OR_RETURN(int64_t gaxis, normalize_axis(ctx.attr_int("gather_axis", 0), rank, ctx));
  OP_ASSIGN_OR_RETURN(int64_t qaxis, normalize_axis(ctx.attr_int("quantize_axis", 1), rank, ctx));
  const int64_t comp = packed ? 8 / bits : 1;
  if (packed && (gaxis != 0 || qaxis != rank - 1 || gaxis == qaxis))
    return ctx.error("uint8 data needs gather_axis 0 and quantize_axis the last axis (" +
                     std::to_string(rank - 1) + "), distinct; got gather_axis " +
                     std::to_string(gaxis) + ", quantize_axis " + std::to_string(qaxis));
  // The logical data shape (UINT8: the last axis holds comp elements per byte).
  Shape dims = data->shape;
  if (comp > 1) {
    const Shape last{dims.back(), comp};
    OP_ASSIGN_OR_RETURN(dims.back(), checked_product(last, "data's last axis"));
  }
  const int64_t qdim = dims[size_t(qaxis)];
  const int64_t nblocks = (qdim + block - 1) / block;
  if (int64_t(scales->shape.size()) != rank)
    return ctx.error("scales " + shape_string(scales->shape) + " must have data's rank " +
                     std::to_string(rank));
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t want = i == qaxis ? nblocks : dims[size_t(i)];
    if (scales->shape[size_t(i)] != want)
      return ctx.error("scales " + shape_string(scales->shape) + " do not match data " +
                       shape_string(dims) + " with block_size " + std::to_string(block) +
                       " along quantize_axis " + std::to_string(qaxis) + ": dimension " +
                       std::to_string(i) + " should be " + std::to_string(want));
  }
  const bool has_zp = ctx.has_input(3);
  if (has_zp) {
    const ValueDesc& zp = ctx.input(3);
    if (zp.dtype != data->dtype || zp.model_dtype != data->model_dtype) {
      const int32_t t = zp.model_dtype != kUndefined ? zp.model_dtype : zp.dtype;
      const int32_t d = data->model_dtype != kUndefined ? data->model_dtype : data->dtype;
      return ctx.error("zero_points has type " + dtype_name(t) + ", data " + dtype_name(d));
    }
    bool ok = zp.shape.size() == scales->shape.size();
    for (size_t i = 0; ok && i < zp.shape.size(); ++i) {
      const int64_t s = scales->shape[i];
      ok = zp.shape[i] == (comp > 1 && int64_t(i) == qaxis ? (s + comp - 1) / comp : s);
    }
    if (!ok)
      return ctx.error("zero_points " + shape_string(zp.shape) + " do not match scales " +
                       shape_string(scales->shape) +
                       (comp > 1 ? " (packed " + std::to_string(comp) + " per byte)" : ""));
  }
  Shape out(dims.begin(), dims.begin() + gaxis);
  out.insert(out.end(), idx->shape.begin(), idx->shape.end());
  out.insert(out.end(), dims.begin() + gaxis + 1, dims.end());
  OP_ASSIGN_OR_RETURN(int64_t out_n, checked_product(out, "output"));
  ctx.set_output(0, scales->dtype, out);

  int64_t gather_m = 1, gather_block = 1, quant_n = 1;
  for (int64_t i = 0; i < gaxis; ++i) gather_m *= dims[size_t(i)];
  for (int64_t i = gaxis + 1; i < rank; ++i) gather_block *= dims[size_t(i)];
  for (int64_t i = qaxis + 1; i < rank; ++i) quant_n *= dims[size_t(i)];
  const int64_t gdim = dims[size_t(gaxis)];
  const int64_t nidx = shape_numel(idx->shape);
  const bool idx64 = idx->dtype == kInt64, half = scales->dtype == kFloat16;
  const int64_t quant_full = qdim * quant_n, scale_full = nblocks * quant_n;
  const int64_t zp_row = (nblocks + comp - 1) / comp;  // packed zero points per row (UINT8)
  const int32_t default_zp = packed ? int32_t(1) << (bits - 1) : 0;
  const std::string where = ctx.where();
  return std::unique_ptr<Kernel>(new FnKernel(
      [=](const KernelIO& io) {
        auto index = [&](int64_t j) {
          return idx64 ? static_cast<const int64_t*>(io.in[1])[j]
                       : int64_t(static_cast<const int32_t*>(io.in[1])[j]);
        };
        for (int64_t j = 0; j < nidx; ++j) {
          const int64_t i = index(j);
          if (i < -gdim || i >= gdim)
            return report_failure(
                io, invalid_argument(where + ": index " + std::to_string(i) +
                                     " is out of range for gather_axis " + std::to_string(gaxis) +
                                     " of size " + std::to_string(gdim)));
        }
        // An empty output (a zero dim, perhaps beside huge ones) has nothing to dequantize.
        if (out_n == 0) return;
        const uint8_t* d = static_cast<const uint8_t*>(io.in[0]);
        const uint8_t* z = has_zp ? static_cast<const uint8_t*>(io.in[3]) : nullptr;
        const float* sf = static_cast<const float*>(io.in[2]);
        const uint16_t* sh = static_cast<const uint16_t*>(io.in[2]);
        const auto& hc = kernels::vec::host_half_convert();
        auto value = [&](int64_t e) -> int32_t {
          if (!packed) return signed4 ? int32_t(int8_t(d[e])) : int32_t(d[e]);
          if (bits == 8) return d[e];
          if (bits == 4) return (d[e >> 1] >> (4 * (e & 1))) & 0x0F;
          return (d[e >> 2] >> (2 * (e & 3))) & 0x03;
        };
        auto zero = [&](int64_t s) -> int32_t {
          if (z == nullptr) return default_zp;
          if (!packed) return signed4 ? int32_t(int8_t(z[s])) : int32_t(z[s]);
          if (bits == 8) return z[s];
          const int64_t row = s / scale_full, q = s % scale_full;
          const int64_t per = 8 / bits;
          const uint8_t byte = z[row * zp_row + q / per];
          return (byte >> (bits * (q % per))) & ((1 << bits) - 1);
        };
        parallel_range(
            io.pool, gather_m * nidx,
            std::max<int64_t>(1, 16384 / std::max<int64_t>(gather_block, 1)),
            [&](int64_t b0, int64_t b1) {
              std::vector<float> tmp(half ? size_t(gather_block) : 0);
              for (int64_t b = b0; b < b1; ++b) {
                const int64_t m = b / nidx;
                int64_t i = index(b % nidx);
                if (i < 0) i += gdim;
                const int64_t base = (m * gdim + i) * gather_block;
                float* o = half ? tmp.data() : static_cast<float*>(io.out[0]) + b * gather_block;
                for (int64_t k = 0; k < gather_block; ++k) {
                  const int64_t e = base + k;
                  const int64_t x = e / quant_full, y = e % quant_full / quant_n, w = e % quant_n;
                  const int64_t s = x * scale_full + y / block * quant_n + w;
                  float sc;
                  if (half)
                    hc.f16_to_f32(sh + s, &sc, 1);
                  else
                    sc = sf[s];
                  o[k] = float(value(e) - zero(s)) * sc;
                }
                if (half)
                  hc.f32_to_f16(tmp.data(), static_cast<uint16_t*>(io.out[0]) + b * gather_block,
                                size_t(gather_block));
              }
            });
      },
      FnKernel::ChecksInputValues{}));
}

}  // namespace onnx_prepack::runtime
