// ConvInteger and QLinearConv: convolution of 8-bit operands less their zero
// points into int32 (NCHW, 1 to 3 spatial dims, groups, pads, strides,
// dilations, auto_pad), QLinearConv then requantizing with bias like
// QLinearMatMul. ConvInteger with a constant W runs on the exact int8 GEMM
// (kernels/i8_gemm/i8_gemm.h): W is packed per group as B
// [C/group * kernel taps, M/group]; with one group and W an initializer the
// panels come from the session's preparer (the i8_gemm_b family's
// i8_conv_w entry, mapped in place, or a miss packed now and written back),
// else they are packed at plan time into kernel-owned memory reserved against
// the budget. Per image, group and block of output points an im2col A (padded
// taps hold x_zero_point, so they contribute (xz - xz)(w - wz) = 0, as in the
// loops) runs against it with za = x_zero_point, zb = w_zero_point (per tensor
// or per output channel); the int32 block is written transposed into NCHW. The
// products are exact, so it is bitwise the direct loops' (mod 2^32). With one
// input channel per group (depthwise) each output plane accumulates its taps
// directly instead (PlaneConvInteger). Other ConvInteger (W a graph input)
// and QLinearConv run the direct loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/i8_gemm/i8_gemm.h"
#include "runtime/kernel.h"
#include "runtime/memory_account.h"
#include "runtime/ops/quant/quant_ops.h"
#include "runtime/weights.h"
#include "runtime/work_budget.h"

namespace onnx_prepack::runtime {
namespace {

int32_t load8(int32_t t, const void* p, int64_t i) {
  return t == kInt8 ? int32_t(static_cast<const int8_t*>(p)[i])
                    : int32_t(static_cast<const uint8_t*>(p)[i]);
}

struct ConvGeom {
  int64_t batch = 0, c = 0, m = 0, group = 1;
  Shape in, kernel, out, stride, dilation, pad_begin;
  // in and kernel are dims of X and W; out is the output, checked by the
  // session before a kernel runs.
  int64_t in_size() const { return shape_numel(in); }          // dims-lint: ok (X's dims)
  int64_t out_size() const { return shape_numel(out); }        // dims-lint: ok (output)
  int64_t kernel_size() const { return shape_numel(kernel); }  // dims-lint: ok (W's dims)
};

Result<ConvGeom> conv_geometry(const BuildContext& ctx, const Shape& x, const Shape& w) {
  ConvGeom g;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    return ctx.error("x " + shape_string(x) + " and w " + shape_string(w) +
                     " must both be N, C and 1 to 3 spatial dims");
  }
  const size_t sd = x.size() - 2;
  g.batch = x[0];
  g.c = x[1];
  g.m = w[0];
  g.group = ctx.attr_int("group", 1);
  if (g.group <= 0 || g.c % g.group != 0 || g.m % g.group != 0 || w[1] * g.group != g.c) {
    return ctx.error("group " + std::to_string(g.group) + " does not fit " + std::to_string(g.c) +
                     " input and " + std::to_string(g.m) + " output channels (w " +
                     shape_string(w) + ")");
  }
  g.in.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  // kernel_shape, when given, must be W's spatial dims (as for Conv, conv/conv.cc).
  if (auto ks = ctx.attr_ints("kernel_shape"); ks && !ks->empty() && *ks != g.kernel) {
    return ctx.error("kernel_shape " + shape_string(*ks) + " does not match w " + shape_string(w));
  }
  g.stride = ctx.attr_ints("strides").value_or(Shape(sd, 1));
  g.dilation = ctx.attr_ints("dilations").value_or(Shape(sd, 1));
  Shape pads = ctx.attr_ints("pads").value_or(Shape(2 * sd, 0));
  if (g.stride.size() != sd || g.dilation.size() != sd || pads.size() != 2 * sd) {
    return ctx.error("strides, dilations and pads must match " + std::to_string(sd) +
                     " spatial dims");
  }
  for (size_t i = 0; i < pads.size(); ++i) {
    if (pads[i] < 0)
      return ctx.error("pads[" + std::to_string(i) + "] = " + std::to_string(pads[i]) +
                       " is negative");
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  g.pad_begin.resize(sd);
  g.out.resize(sd);
  for (size_t d = 0; d < sd; ++d) {
    if (g.stride[d] <= 0 || g.dilation[d] <= 0 || g.kernel[d] <= 0) {
      return ctx.error("strides, dilations and kernel dims must be positive");
    }
    // Attributes may be near 2^63: the window extent and the padded input are
    // overflow-checked; once they fit, every run-time position does too.
    const std::string dim = "spatial dim " + std::to_string(d) + ": ";
    const std::optional<int64_t> reach = checked_mul(g.kernel[d] - 1, g.dilation[d]);
    const std::optional<int64_t> ext = reach ? checked_add(*reach, 1) : std::nullopt;
    if (!ext) {
      return ctx.error(dim + "kernel " + std::to_string(g.kernel[d]) + " with dilation " +
                       std::to_string(g.dilation[d]) + " overflows int64");
    }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[d] = g.in[d] / g.stride[d] + (g.in[d] % g.stride[d] != 0);
      // (out - 1) * stride <= in: only adding the extent can overflow.
      const std::optional<int64_t> end = checked_add((g.out[d] - 1) * g.stride[d], *ext);
      if (!end) return ctx.error(dim + "the SAME padding overflows int64");
      const int64_t total = std::max<int64_t>(0, *end - g.in[d]);
      g.pad_begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      const int64_t b = auto_pad == "VALID" ? 0 : pads[d],
                    e = auto_pad == "VALID" ? 0 : pads[d + sd];
      g.pad_begin[d] = b;
      const std::optional<int64_t> in_b = checked_add(g.in[d], b);
      const std::optional<int64_t> padded = in_b ? checked_add(*in_b, e) : std::nullopt;
      if (!padded) {
        return ctx.error(dim + "input " + std::to_string(g.in[d]) + " with pads " +
                         std::to_string(b) + " / " + std::to_string(e) + " overflows int64");
      }
      const int64_t span = *padded - *ext;
      if (span < 0) return ctx.error("kernel is larger than the padded input");
      g.out[d] = span / g.stride[d] + 1;
    }
  }
  // The direct loop visits every (output point, input channel of its group,
  // kernel tap): a large padding on a small X makes that hours of work.
  uint64_t steps = saturating_mul(uint64_t(g.batch), uint64_t(g.m));
  for (int64_t o : g.out) steps = saturating_mul(steps, uint64_t(o));
  steps = saturating_mul(steps, uint64_t(g.c / g.group));
  for (int64_t k : g.kernel) steps = saturating_mul(steps, uint64_t(k));
  if (steps > kMaxOperatorSteps) {
    return ctx.error("output " + shape_string(Shape{g.batch, g.m}) + " x " + shape_string(g.out) +
                     " with " + std::to_string(g.c / g.group) + " channels per group and kernel " +
                     shape_string(g.kernel) + " takes " + std::to_string(steps) +
                     " steps, over the work bound of 2^32");
  }
  return g;
}

// acc[n][m][out...] = sum over the window of (x - xz)(w - wz[m]).
void conv_int(const ConvGeom& g, int32_t xt, const void* x, int32_t xz, int32_t wt, const void* w,
              const void* wz, int64_t wz_n, std::vector<int32_t>& acc) {
  const size_t sd = g.in.size();
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const int64_t osz = g.out_size(), isz = g.in_size(), ksz = g.kernel_size();
  acc.assign(size_t(g.batch * g.m * osz), 0);
  std::vector<int64_t> oc(sd), kc(sd);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.m; ++m) {
      const int64_t grp = m / mg;
      const int32_t zw = wz ? load8(wt, wz, wz_n == 1 ? 0 : m) : 0;
      int32_t* out = acc.data() + (n * g.m + m) * osz;
      for (int64_t o = 0; o < osz; ++o) {
        for (size_t d = sd, r = size_t(o); d-- > 0;) {
          oc[d] = int64_t(r) % g.out[d];
          r /= size_t(g.out[d]);
        }
        int32_t sum = 0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t c = grp * cg + ci;
          for (int64_t k = 0; k < ksz; ++k) {
            int64_t r = k, off = 0;
            bool inside = true;
            for (size_t d = sd; d-- > 0;) {
              kc[d] = r % g.kernel[d];
              r /= g.kernel[d];
            }
            for (size_t d = 0; d < sd; ++d) {
              const int64_t pos = oc[d] * g.stride[d] + kc[d] * g.dilation[d] - g.pad_begin[d];
              if (pos < 0 || pos >= g.in[d]) inside = false;
              off = off * g.in[d] + pos;
            }
            if (!inside) continue;  // padding holds the zero point: contributes 0
            const int32_t xv = load8(xt, x, (n * g.c + c) * isz + off) - xz;
            sum += xv * (load8(wt, w, (m * cg + ci) * ksz + k) - zw);
          }
        }
        out[o] = sum;
      }
    }
  }
}

struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

uint64_t round64(uint64_t n) { return (n + 63) / 64 * 64; }

// Bytes of im2col A, or of its int32 product, a block of output points may
// take: the scratch stays a few MiB, in L2/L3, whatever the map's size.
constexpr uint64_t kBlockBytes = uint64_t(2) << 20;

// ConvInteger with a constant W on the int8 GEMM. The geometry as 3 spatial
// dims (1-D and 2-D convs lead with 1s).
class GemmConvInteger final : public Kernel {
 public:
  GemmConvInteger(const ConvGeom& g, int32_t xt, int32_t wt, bool has_xz, int64_t wzn,
                  std::shared_ptr<const uint8_t> packed, std::shared_ptr<MemoryReservation> r)
      : g_(g),
        xt_(xt),
        has_xz_(has_xz),
        wzn_(wzn),
        packed_(std::move(packed)),
        reserved_(std::move(r)),
        kernels_(kernels::i8_gemm_select(device::host_cpu_features())) {
    const size_t lead = 3 - g.in.size();
    for (size_t d = 0; d < 3; ++d) {
      const bool real = d >= lead;
      in_[d] = real ? g.in[d - lead] : 1;
      k_[d] = real ? g.kernel[d - lead] : 1;
      out_[d] = real ? g.out[d - lead] : 1;
      stride_[d] = real ? g.stride[d - lead] : 1;
      dil_[d] = real ? g.dilation[d - lead] : 1;
      pad_[d] = real ? g.pad_begin[d - lead] : 0;
    }
    cg_ = g.c / g.group;
    mg_ = g.m / g.group;
    // The session checked the sizes of X, W and the output: these products are
    // of one tensor's dims each.
    ksz_ = k_[0] * k_[1] * k_[2];        // dims-lint: ok (W's dims)
    osz_ = out_[0] * out_[1] * out_[2];  // dims-lint: ok (the output's dims)
    isz_ = in_[0] * in_[1] * in_[2];     // dims-lint: ok (X's dims)
    shape_ = kernels::I8GemmShape{cg_ * ksz_, mg_, wt == kInt8};  // dims-lint: ok (W's dims)
    const uint64_t row_bytes = std::max<uint64_t>(uint64_t(shape_.K), uint64_t(mg_) * 4);
    block_ = std::min<int64_t>(osz_, std::max<int64_t>(64, int64_t(kBlockBytes / row_bytes)));
  }

  static uint64_t packed_bytes(const kernels::I8GemmShape& s, int64_t groups) {
    return saturating_mul(uint64_t(s.packed_bytes()), uint64_t(groups));
  }

  // Workspace slot 0: im2col A, the GEMM's scratch, the int32 block and the
  // zero points as int32.
  uint64_t scratch_bytes() const override {
    uint64_t b = col_bytes();
    b = saturating_add(b, kernels::i8_gemm_scratch_bytes(shape_, block_));
    b = saturating_add(b, round64(saturating_mul(uint64_t(block_), uint64_t(mg_) * 4)));
    return saturating_add(b, round64(uint64_t(g_.m) * 4));
  }

  void run(const KernelIO& io) const override {
    const uint64_t bytes = scratch_bytes();
    std::unique_ptr<uint8_t[], AlignedFree> owned;
    void* ws = io.workspace ? io.workspace->get(0, size_t(bytes)) : nullptr;
    if (ws == nullptr) {
      owned.reset(static_cast<uint8_t*>(::operator new[](size_t(bytes), std::align_val_t(64))));
      ws = owned.get();
    }
    auto* col = static_cast<uint8_t*>(ws);
    uint8_t* gemm_scratch = col + col_bytes();
    auto* cblock =
        reinterpret_cast<int32_t*>(gemm_scratch + kernels::i8_gemm_scratch_bytes(shape_, block_));
    int32_t* zb = cblock + round64(uint64_t(block_) * uint64_t(mg_) * 4) / 4;
    const int32_t xz = has_xz_ ? load8(xt_, io.in[2], 0) : 0;
    for (int64_t m = 0; m < wzn_; ++m) zb[m] = load8(shape_.b_signed ? kInt8 : kUint8, io.in[3], m);
    const auto* x = static_cast<const uint8_t*>(io.in[0]);
    auto* y = static_cast<int32_t*>(io.out[0]);
    const uint64_t pb = shape_.packed_bytes();
    const size_t workers = io.pool ? io.pool->size() : 1;
    for (int64_t n = 0; n < g_.batch; ++n) {
      for (int64_t grp = 0; grp < g_.group; ++grp) {
        const uint8_t* xg = x + uint64_t(n * g_.c + grp * cg_) * uint64_t(isz_);
        int32_t* yg = y + uint64_t(n * g_.m + grp * mg_) * uint64_t(osz_);
        for (int64_t r0 = 0; r0 < osz_; r0 += block_) {
          const int64_t rows = std::min(block_, osz_ - r0);
          // im2col, then the product, then the transposed write: each split
          // over the pool when the block is large enough to pay for it.
          const bool split = workers > 1 && rows * shape_.K >= 32768;
          const int64_t parts = split ? int64_t(workers) * 4 : 1;
          auto fill = [&](size_t part, size_t) {
            const int64_t a = rows * int64_t(part) / parts, b = rows * int64_t(part + 1) / parts;
            im2col(xg, uint8_t(xz), r0 + a, r0 + b, col + uint64_t(a) * uint64_t(shape_.K));
          };
          if (split) {
            io.pool->parallel_for(size_t(parts), fill);
          } else {
            fill(0, 0);
          }
          kernels::I8GemmArgs a;
          a.M = rows;
          a.a = col;
          a.lda = size_t(shape_.K);
          a.a_signed = xt_ == kInt8;
          a.za = &xz;
          if (wzn_ > 0) {
            a.zb = zb + (wzn_ == 1 ? 0 : grp * mg_);
            a.zb_n = wzn_ == 1 ? 1 : mg_;
          }
          a.c = cblock;
          a.ldc = size_t(mg_);
          kernels::i8_gemm(kernels_, shape_, packed_.get() + uint64_t(grp) * pb, a, gemm_scratch,
                           io.pool);
          // C [rows, mg] to Y's planes: output channel j's points r0.. are a row.
          const int64_t mg = mg_;
          const int64_t jparts = split ? std::min<int64_t>(parts, mg_) : 1;
          auto store = [&](size_t part, size_t) {
            const int64_t j0 = mg_ * int64_t(part) / jparts, j1 = mg_ * int64_t(part + 1) / jparts;
            // Tiles of 16 points: their 16 rows of C stay in L1 over the channels.
            for (int64_t t0 = 0; t0 < rows; t0 += 16) {
              const int64_t t1 = std::min<int64_t>(rows, t0 + 16);
              for (int64_t j = j0; j < j1; ++j) {
                int32_t* dst = yg + uint64_t(j) * uint64_t(osz_) + uint64_t(r0);
                const int32_t* src = cblock + j;
                for (int64_t r = t0; r < t1; ++r) dst[r] = src[r * mg];
              }
            }
          };
          if (jparts > 1) {
            io.pool->parallel_for(size_t(jparts), store);
          } else {
            store(0, 0);
          }
        }
      }
    }
  }

 private:
  // im2col A of a block.
  uint64_t col_bytes() const { return round64(uint64_t(block_) * uint64_t(shape_.K)); }

  // Rows [o0, o1) of im2col A for the group whose first input channel is at
  // xg: row o holds, for each channel and kernel tap (W's order), X at the tap
  // or `pad` outside X. Runs of output points on one output row are filled
  // tap row by tap row (each X row read along W once).
  void im2col(const uint8_t* xg, uint8_t pad, int64_t o0, int64_t o1, uint8_t* dst) const {
    const int64_t OW = out_[2], OH = out_[1];
    for (int64_t o = o0; o < o1;) {
      const int64_t ow = o % OW, oh = (o / OW) % OH, od = o / (OW * OH);
      const int64_t n = std::min(OW - ow, o1 - o);
      im2col_run(xg, pad, od, oh, ow, n, dst);
      dst += uint64_t(n) * uint64_t(shape_.K);
      o += n;
    }
  }

  // Points (od, oh, ow0 .. ow0 + n - 1) of one output row into n rows of A.
  void im2col_run(const uint8_t* xg, uint8_t pad, int64_t od, int64_t oh, int64_t ow0, int64_t n,
                  uint8_t* dst) const {
    // Locals: the byte stores below may alias any member.
    const int64_t ID = in_[0], IH = in_[1], IW = in_[2], KD = k_[0], KH = k_[1], KW = k_[2];
    const int64_t SW = stride_[2], DW = dil_[2], PW = pad_[2];
    const int64_t plane = isz_, cg = cg_, K = shape_.K;
    const int64_t z0 = od * stride_[0] - pad_[0], y0 = oh * stride_[1] - pad_[1];
    // [lo, hi): the points whose taps along W all lie inside X.
    const int64_t last = (KW - 1) * DW;
    int64_t lo = (PW + SW - 1) / SW,
            hi = IW - 1 + PW - last >= 0 ? (IW - 1 + PW - last) / SW + 1 : 0;
    lo = std::clamp<int64_t>(lo, ow0, ow0 + n);
    hi = std::clamp<int64_t>(hi, lo, ow0 + n);
    int64_t tap = 0;  // the offset of this tap row in a row of A
    for (int64_t ci = 0; ci < cg; ++ci) {
      const uint8_t* xc = xg + uint64_t(ci) * uint64_t(plane);
      for (int64_t a = 0; a < KD; ++a) {
        const int64_t z = z0 + a * dil_[0];
        for (int64_t b = 0; b < KH; ++b, tap += KW) {
          const int64_t yy = y0 + b * dil_[1];
          uint8_t* d = dst + tap;
          if (z < 0 || z >= ID || yy < 0 || yy >= IH) {
            for (int64_t p = 0; p < n; ++p, d += K) std::memset(d, pad, size_t(KW));
            continue;
          }
          const int64_t rowoff = (z * IH + yy) * IW;
          const uint8_t* row = xc + rowoff;
          auto edge = [&](int64_t ow) {
            for (int64_t c = 0; c < KW; ++c) {
              const int64_t xx = ow * SW - PW + c * DW;
              d[c] = xx >= 0 && xx < IW ? row[xx] : pad;
            }
            d += K;
          };
          for (int64_t ow = ow0; ow < lo; ++ow) edge(ow);
          if (DW == 1 && KW <= 8 && tap + 8 <= K) {
            // One 8-byte move per point when X has the bytes: the tail lands on
            // this row's next taps, written after (never on another row).
            int64_t ow = lo;
            for (; ow < hi && rowoff + ow * SW - PW + 8 <= plane; ++ow, d += K) {
              std::memcpy(d, row + (ow * SW - PW), 8);
            }
            for (; ow < hi; ++ow, d += K) std::memcpy(d, row + (ow * SW - PW), size_t(KW));
          } else if (DW == 1) {
            for (int64_t ow = lo; ow < hi; ++ow, d += K) {
              std::memcpy(d, row + (ow * SW - PW), size_t(KW));
            }
          } else {
            for (int64_t ow = lo; ow < hi; ++ow, d += K) {
              for (int64_t c = 0; c < KW; ++c) d[c] = row[ow * SW - PW + c * DW];
            }
          }
          for (int64_t ow = hi; ow < ow0 + n; ++ow) edge(ow);
        }
      }
    }
  }

  ConvGeom g_;
  int32_t xt_;
  bool has_xz_;
  int64_t wzn_;
  std::shared_ptr<const uint8_t> packed_;
  std::shared_ptr<MemoryReservation> reserved_;
  kernels::I8GemmKernels kernels_;
  kernels::I8GemmShape shape_;
  int64_t in_[3], k_[3], out_[3], stride_[3], dil_[3], pad_[3];
  int64_t cg_ = 0, mg_ = 0, ksz_ = 0, osz_ = 0, isz_ = 0, block_ = 0;
};

// ConvInteger with a constant W and one input channel per group (depthwise,
// with or without a channel multiplier): a GEMM of K = kernel taps and N =
// M / group would waste most of its 16-column panels, so each output plane
// accumulates its taps directly, a row of output points at a time: the sums
// of the loops in another order, exact in uint32 (mod 2^32 as the loops').
class PlaneConvInteger final : public Kernel {
 public:
  PlaneConvInteger(const ConvGeom& g, int32_t xt, int32_t wt, bool has_xz, int64_t wzn,
                   std::vector<int32_t> w, MemoryReservation r)
      : g_(g),
        xt_(xt),
        wt_(wt),
        has_xz_(has_xz),
        wzn_(wzn),
        w_(std::move(w)),
        reserved_(std::make_shared<MemoryReservation>(std::move(r))) {
    const size_t lead = 3 - g.in.size();
    for (size_t d = 0; d < 3; ++d) {
      const bool real = d >= lead;
      in_[d] = real ? g.in[d - lead] : 1;
      k_[d] = real ? g.kernel[d - lead] : 1;
      out_[d] = real ? g.out[d - lead] : 1;
      stride_[d] = real ? g.stride[d - lead] : 1;
      dil_[d] = real ? g.dilation[d - lead] : 1;
      pad_[d] = real ? g.pad_begin[d - lead] : 0;
    }
  }

  void run(const KernelIO& io) const override {
    const int32_t xz = has_xz_ ? load8(xt_, io.in[2], 0) : 0;
    const int64_t planes = g_.batch * g_.m;  // dims-lint: ok (the output's dims)
    auto one = [&](size_t i, size_t) {
      const int64_t n = int64_t(i) / g_.m, m = int64_t(i) % g_.m;
      const int32_t zw = wzn_ > 0 ? load8(wt_, io.in[3], wzn_ == 1 ? 0 : m) : 0;
      const int64_t c = m / (g_.m / g_.group);
      if (xt_ == kInt8) {
        plane(static_cast<const int8_t*>(io.in[0]), n, c, m, xz, zw, io);
      } else {
        plane(static_cast<const uint8_t*>(io.in[0]), n, c, m, xz, zw, io);
      }
    };
    if (io.pool != nullptr && io.pool->size() > 1 && planes > 1) {
      io.pool->parallel_for(size_t(planes), one);
    } else {
      for (int64_t i = 0; i < planes; ++i) one(size_t(i), 0);
    }
  }

 private:
  template <typename T>
  void plane(const T* x, int64_t n, int64_t c, int64_t m, int32_t xz, int32_t zw,
             const KernelIO& io) const {
    const int64_t ID = in_[0], IH = in_[1], IW = in_[2], KD = k_[0], KH = k_[1], KW = k_[2];
    const int64_t OD = out_[0], OH = out_[1], OW = out_[2], SW = stride_[2], DW = dil_[2],
                  PW = pad_[2];
    const int64_t isz = g_.in_size(), osz = g_.out_size();
    const T* xp = x + uint64_t(n * g_.c + c) * uint64_t(isz);
    auto* yp = reinterpret_cast<uint32_t*>(static_cast<int32_t*>(io.out[0]) +
                                           uint64_t(n * g_.m + m) * uint64_t(osz));
    const int32_t* wm = w_.data() + uint64_t(m) * uint64_t(KD * KH * KW);
    std::fill(yp, yp + osz, 0u);
    for (int64_t od = 0; od < OD; ++od) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        uint32_t* yr = yp + uint64_t(od * OH + oh) * uint64_t(OW);
        for (int64_t a = 0; a < KD; ++a) {
          const int64_t z = od * stride_[0] - pad_[0] + a * dil_[0];
          if (z < 0 || z >= ID) continue;  // padding: contributes 0
          for (int64_t b = 0; b < KH; ++b) {
            const int64_t yy = oh * stride_[1] - pad_[1] + b * dil_[1];
            if (yy < 0 || yy >= IH) continue;
            const T* xr = xp + uint64_t(z * IH + yy) * uint64_t(IW);
            for (int64_t t = 0; t < KW; ++t) {
              const uint32_t wv = uint32_t(wm[(a * KH + b) * KW + t] - zw);
              // The points whose tap lies inside X: 0 <= ow * SW - PW + t * DW < IW.
              const int64_t off = t * DW - PW;
              const int64_t lo = off >= 0 ? 0 : (-off + SW - 1) / SW;
              const int64_t hi = IW - 1 - off >= 0 ? std::min(OW, (IW - 1 - off) / SW + 1) : 0;
              if (SW == 1) {
                const T* xs = xr + off;
                for (int64_t ow = lo; ow < hi; ++ow) {
                  yr[ow] += uint32_t(int32_t(xs[ow]) - xz) * wv;
                }
              } else {
                for (int64_t ow = lo; ow < hi; ++ow) {
                  yr[ow] += uint32_t(int32_t(xr[ow * SW + off]) - xz) * wv;
                }
              }
            }
          }
        }
      }
    }
  }

  ConvGeom g_;
  int32_t xt_, wt_;
  bool has_xz_;
  int64_t wzn_;
  std::vector<int32_t> w_;                       // W widened to int32, [M, kernel taps]
  std::shared_ptr<MemoryReservation> reserved_;  // w_'s bytes
  int64_t in_[3], k_[3], out_[3], stride_[3], dil_[3], pad_[3];
};

// The GEMM kernel for a constant W, or null when W is not constant or a dim is
// empty (the loops then).
Result<std::unique_ptr<Kernel>> gemm_conv_integer(const BuildContext& ctx, const ConvGeom& g,
                                                  int32_t xt, int32_t wt, bool has_xz,
                                                  int64_t wzn) {
  const Tensor* w = ctx.input_value(1);
  if (w == nullptr || g.batch <= 0 || g.c <= 0 || g.m <= 0 || g.out_size() <= 0 ||
      g.in_size() <= 0) {
    return std::unique_ptr<Kernel>();
  }
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  if (cg == 1) {
    const int64_t taps = g.m * g.kernel_size();  // dims-lint: ok (W's dims)
    OP_ASSIGN_OR_RETURN(MemoryReservation r,
                        reserve_memory(uint64_t(taps) * 4, ctx.where() + ": widened W"));
    std::vector<int32_t> wv(static_cast<size_t>(taps));
    for (int64_t i = 0; i < taps; ++i) wv[size_t(i)] = load8(wt, w->data, i);
    return std::unique_ptr<Kernel>(
        new PlaneConvInteger(g, xt, wt, has_xz, wzn, std::move(wv), std::move(r)));
  }
  const kernels::I8GemmShape shape{cg * g.kernel_size(), mg,
                                   wt == kInt8};  // dims-lint: ok (W's dims)
  const auto* wb = static_cast<const uint8_t*>(w->data);
  if (g.group == 1 && ctx.weights() != nullptr && ctx.input(1).is_initializer) {
    // The i8_gemm_b family's i8_conv_w entry: the panels, then W's dims.
    const uint64_t panels = shape.packed_bytes();
    const uint64_t dims_bytes = uint64_t(w->shape.size()) * 8;
    OP_ASSIGN_OR_RETURN(PreparedPack got, ctx.prepare_weight(1, [&](std::span<uint8_t> out) {
      if (out.size() != panels + dims_bytes) return internal_error("packed int8 W size differs");
      kernels::i8_pack_b(shape, wb, size_t(shape.K), out.data(), /*transposed=*/true);
      for (size_t i = 0; i < w->shape.size(); ++i) {
        const int64_t d = w->shape[i];
        std::memcpy(out.data() + panels + i * 8, &d, 8);
      }
      return ok_status();
    }));
    // Empty: not prepared; another size cannot come from the family's checked
    // entries, and is packed here rather than read.
    if (!got.bytes.empty() && got.bytes.size() == panels + dims_bytes) {
      return std::unique_ptr<Kernel>(new GemmConvInteger(
          g, xt, wt, has_xz, wzn, std::shared_ptr<const uint8_t>(got.keep_alive, got.bytes.data()),
          nullptr));
    }
  }
  const uint64_t bytes = GemmConvInteger::packed_bytes(shape, g.group);
  OP_ASSIGN_OR_RETURN(MemoryReservation r, reserve_memory(bytes, ctx.where() + ": packed int8 W"));
  std::shared_ptr<uint8_t> packed(
      static_cast<uint8_t*>(::operator new[](std::max<uint64_t>(bytes, 64), std::align_val_t(64))),
      AlignedFree());
  for (int64_t grp = 0; grp < g.group; ++grp) {
    kernels::i8_pack_b(shape, wb + uint64_t(grp * mg) * uint64_t(shape.K), size_t(shape.K),
                       packed.get() + uint64_t(grp) * shape.packed_bytes(), /*transposed=*/true);
  }
  return std::unique_ptr<Kernel>(
      new GemmConvInteger(g, xt, wt, has_xz, wzn, std::move(packed),
                          std::make_shared<MemoryReservation>(std::move(r))));
}

Status check_count(const BuildContext& ctx, int i, int64_t allowed, const char* what) {
  if (!ctx.has_input(i)) return Status();
  const int64_t n = checked_numel(ctx.input(i).shape);
  if (n != 1 && n != allowed) {
    return ctx.error(std::string(what) + " must hold 1 or " + std::to_string(allowed) +
                     " values, got " + shape_string(ctx.input(i).shape));
  }
  return Status();
}

Shape out_shape(const ConvGeom& g) {
  Shape s{g.batch, g.m};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

Result<std::unique_ptr<Kernel>> build_ci(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* w, ctx.require_input(1));
  if ((x->dtype != kInt8 && x->dtype != kUint8) || (w->dtype != kInt8 && w->dtype != kUint8)) {
    return ctx.error("x and w must be int8 or uint8");
  }
  OP_ASSIGN_OR_RETURN(ConvGeom g, conv_geometry(ctx, x->shape, w->shape));
  OP_RETURN_IF_ERROR(check_count(ctx, 2, 1, "x_zero_point"));
  OP_RETURN_IF_ERROR(check_count(ctx, 3, g.m, "w_zero_point"));
  const bool has_xz = ctx.has_input(2);
  const int64_t wzn = ctx.has_input(3) ? checked_numel(ctx.input(3).shape) : 0;
  ctx.set_output(0, kInt32, out_shape(g));
  const int32_t xt = x->dtype, wt = w->dtype;
  OP_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> fast, gemm_conv_integer(ctx, g, xt, wt, has_xz, wzn));
  if (fast) return fast;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<int32_t> acc;
    const int32_t xz = has_xz ? load8(xt, io.in[2], 0) : 0;
    conv_int(g, xt, io.in[0], xz, wt, io.in[1], wzn ? io.in[3] : nullptr, wzn, acc);
    std::copy(acc.begin(), acc.end(), static_cast<int32_t*>(io.out[0]));
  }));
}

Result<std::unique_ptr<Kernel>> build_qlc(BuildContext& ctx) {
  for (int i = 0; i < 8; ++i) OP_RETURN_IF_ERROR(ctx.require_input(i).status());
  const ValueDesc &x = ctx.input(0), &w = ctx.input(3);
  const int32_t yt = ctx.input(7).dtype;
  for (int32_t t : {x.dtype, w.dtype, yt}) {
    if (t != kInt8 && t != kUint8) return ctx.error("x, w and y must be int8 or uint8");
  }
  for (int i : {1, 4, 6}) {
    if (ctx.input(i).dtype != kFloat) return ctx.error("scales must be float");
  }
  OP_ASSIGN_OR_RETURN(ConvGeom g, conv_geometry(ctx, x.shape, w.shape));
  OP_RETURN_IF_ERROR(check_count(ctx, 1, 1, "x_scale"));
  OP_RETURN_IF_ERROR(check_count(ctx, 2, 1, "x_zero_point"));
  OP_RETURN_IF_ERROR(check_count(ctx, 4, g.m, "w_scale"));
  OP_RETURN_IF_ERROR(check_count(ctx, 5, g.m, "w_zero_point"));
  OP_RETURN_IF_ERROR(check_count(ctx, 6, 1, "y_scale"));
  OP_RETURN_IF_ERROR(check_count(ctx, 7, 1, "y_zero_point"));
  const bool has_b = ctx.has_input(8);
  if (has_b && (ctx.input(8).dtype != kInt32 || checked_numel(ctx.input(8).shape) != g.m)) {
    return ctx.error("B must be int32 [M]");
  }
  const int64_t wsn = checked_numel(ctx.input(4).shape), wzn = checked_numel(ctx.input(5).shape);
  ctx.set_output(0, yt, out_shape(g));
  const int32_t xt = x.dtype, wt = w.dtype;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<int32_t> acc;
    conv_int(g, xt, io.in[0], load8(xt, io.in[2], 0), wt, io.in[3], io.in[5], wzn, acc);
    const float xs = *static_cast<const float*>(io.in[1]);
    const float* ws = static_cast<const float*>(io.in[4]);
    const float ys = *static_cast<const float*>(io.in[6]);
    const int32_t yz = load8(yt, io.in[7], 0);
    const int32_t* bias = has_b ? static_cast<const int32_t*>(io.in[8]) : nullptr;
    const int32_t lo = yt == kInt8 ? -128 : 0, hi = yt == kInt8 ? 127 : 255;
    const int64_t osz = g.out_size();
    for (int64_t i = 0; i < int64_t(acc.size()); ++i) {
      const int64_t m = (i / osz) % g.m;
      const float mult = xs * ws[wsn == 1 ? 0 : m] / ys;
      const int32_t a = acc[size_t(i)] + (bias ? bias[m] : 0);
      const float v = std::nearbyint(float(a) * mult) + float(yz);
      const int32_t q = int32_t(std::clamp(v, float(lo), float(hi)));
      if (yt == kInt8) {
        static_cast<int8_t*>(io.out[0])[i] = int8_t(q);
      } else {
        static_cast<uint8_t*>(io.out[0])[i] = uint8_t(q);
      }
    }
  }));
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_conv_integer(BuildContext& ctx) { return build_ci(ctx); }
Result<std::unique_ptr<Kernel>> build_qlinear_conv(BuildContext& ctx) { return build_qlc(ctx); }

}  // namespace onnx_prepack::runtime
