// ConvInteger and QLinearConv with a constant W on the exact int8 GEMM
// (kernels/i8_gemm/i8_gemm.h): W is packed per group as B
// [C/group * kernel taps, M/group]; with W an initializer the panels come
// from the session's preparer (the i8_gemm_b family's i8_conv_w entry, or
// i8_conv_w_grouped for group > 1, mapped in place, or a miss packed now),
// else they are packed at plan time into kernel-owned memory reserved against
// the budget. Per image, group and block of output points an im2col A (padded
// taps hold x_zero_point, so they contribute (xz - xz)(w - wz) = 0, as in the
// loops) runs against it with za = x_zero_point, zb = w_zero_point (per tensor
// or per output channel). The products are exact, so the int32 block is
// bitwise the direct loops' (mod 2^32); ConvInteger writes it transposed into
// NCHW, QLinearConv first requantizes its rows (B added, one multiplier per
// output channel: kernels/vec_math/vec_requant.h, the loops' expression) and
// writes the bytes transposed. With one input channel per group (depthwise)
// each output plane accumulates its taps directly instead (PlaneConvInteger),
// QLinearConv's a chunk of an output row at a time, requantized from L1.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/i8_gemm/i8_gemm.h"
#include "kernels/vec_math/vec_requant.h"
#include "pack/i8_gemm_b_format.h"
#include "runtime/kernel.h"
#include "runtime/memory_account.h"
#include "runtime/ops/quant/integer_conv.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {
namespace {

int32_t load8(int32_t t, const void* p, int64_t i) { return load_int8_operand(t, p, i); }

struct AlignedFree {
  void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

uint64_t round64(uint64_t n) { return (n + 63) / 64 * 64; }

// Bytes of im2col A, or of its int32 product, a block of output points may
// take: the scratch stays a few MiB, in L2/L3, whatever the map's size.
constexpr uint64_t kBlockBytes = uint64_t(2) << 20;

// Output points of a depthwise QLinearConv row accumulated in int32 before
// they are requantized (a stack buffer, in L1).
constexpr int64_t kPlaneChunk = 256;

// The geometry as 3 spatial dims (1-D and 2-D convs lead with 1s).
struct Dims3 {
  int64_t in[3], k[3], out[3], stride[3], dil[3], pad[3];
  explicit Dims3(const IntConvGeom& g) {
    const size_t lead = 3 - g.in.size();
    for (size_t d = 0; d < 3; ++d) {
      const bool real = d >= lead;
      in[d] = real ? g.in[d - lead] : 1;
      k[d] = real ? g.kernel[d - lead] : 1;
      out[d] = real ? g.out[d - lead] : 1;
      stride[d] = real ? g.stride[d - lead] : 1;
      dil[d] = real ? g.dilation[d - lead] : 1;
      pad[d] = real ? g.pad_begin[d - lead] : 0;
    }
  }
};

// src [rows, mg] (row stride mg) to Y's planes: output channel j's points
// r0.. are a row of `plane` elements from yg; channels [j0, j1).
template <typename T>
void store_transposed(const T* src, int64_t rows, int64_t mg, T* yg, uint64_t plane, int64_t r0,
                      int64_t j0, int64_t j1) {
  // Tiles of 16 points: their 16 rows of src stay in L1 over the channels.
  for (int64_t t0 = 0; t0 < rows; t0 += 16) {
    const int64_t t1 = std::min<int64_t>(rows, t0 + 16);
    for (int64_t j = j0; j < j1; ++j) {
      T* dst = yg + uint64_t(j) * plane + uint64_t(r0);
      const T* s = src + j;
      for (int64_t r = t0; r < t1; ++r) dst[r] = s[r * mg];
    }
  }
}

// ConvInteger / QLinearConv with a constant W on the int8 GEMM.
class GemmConvInteger final : public Kernel {
 public:
  GemmConvInteger(const IntConvGeom& g, const IntConvOperands& op,
                  std::shared_ptr<const uint8_t> packed, std::shared_ptr<MemoryReservation> r)
      : g_(g),
        op_(op),
        packed_(std::move(packed)),
        reserved_(std::move(r)),
        kernels_(kernels::i8_gemm_select(device::host_cpu_features())),
        requant_(kernels::vec::host_requant_kernels()) {
    const Dims3 d3(g);
    for (size_t d = 0; d < 3; ++d) {
      in_[d] = d3.in[d];
      k_[d] = d3.k[d];
      out_[d] = d3.out[d];
      stride_[d] = d3.stride[d];
      dil_[d] = d3.dil[d];
      pad_[d] = d3.pad[d];
    }
    cg_ = g.c / g.group;
    mg_ = g.m / g.group;
    // The session checked the sizes of X, W and the output: these products are
    // of one tensor's dims each.
    ksz_ = k_[0] * k_[1] * k_[2];        // dims-lint: ok (W's dims)
    osz_ = out_[0] * out_[1] * out_[2];  // dims-lint: ok (the output's dims)
    isz_ = in_[0] * in_[1] * in_[2];     // dims-lint: ok (X's dims)
    shape_ = kernels::I8GemmShape{cg_ * ksz_, mg_, op.wt == kInt8};  // dims-lint: ok (W's dims)
    const uint64_t row_bytes = std::max<uint64_t>(uint64_t(shape_.K), uint64_t(mg_) * 4);
    block_ = std::min<int64_t>(osz_, std::max<int64_t>(64, int64_t(kBlockBytes / row_bytes)));
  }

  static uint64_t packed_bytes(const kernels::I8GemmShape& s, int64_t groups) {
    return saturating_mul(uint64_t(s.packed_bytes()), uint64_t(groups));
  }

  // Workspace slot 0: im2col A, the GEMM's scratch, the int32 block and the
  // zero points as int32; QLinearConv's multipliers and requantized block.
  uint64_t scratch_bytes() const override {
    uint64_t b = col_bytes();
    b = saturating_add(b, kernels::i8_gemm_scratch_bytes(shape_, block_));
    b = saturating_add(b, block32_bytes());
    b = saturating_add(b, round64(uint64_t(g_.m) * 4));
    if (op_.requant) {
      b = saturating_add(b, round64(uint64_t(g_.m) * 4));
      b = saturating_add(b, round64(saturating_mul(uint64_t(block_), uint64_t(mg_))));
    }
    return b;
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
    int32_t* zb = cblock + block32_bytes() / 4;
    const int32_t xz = op_.xz >= 0 ? load8(op_.xt, io.in[size_t(op_.xz)], 0) : 0;
    for (int64_t m = 0; m < op_.wzn; ++m) zb[m] = load8(op_.wt, io.in[size_t(op_.wz)], m);
    // QLinearConv's multipliers and requantized block follow the zero points.
    float* mult = nullptr;
    uint8_t* qblock = nullptr;
    int32_t yz = 0;
    const int32_t* bias = nullptr;
    if (op_.requant) {
      mult = reinterpret_cast<float*>(zb + round64(uint64_t(g_.m) * 4) / 4);
      qblock = reinterpret_cast<uint8_t*>(mult + round64(uint64_t(g_.m) * 4) / 4);
      for (int64_t m = 0; m < g_.m; ++m) mult[m] = int_conv_multiplier(op_, io, m);
      yz = load8(op_.yt, io.in[size_t(op_.yz)], 0);
      if (op_.bias >= 0) bias = static_cast<const int32_t*>(io.in[size_t(op_.bias)]);
    }
    const auto* x = static_cast<const uint8_t*>(io.in[0]);
    const uint64_t pb = shape_.packed_bytes();
    const size_t workers = io.pool ? io.pool->size() : 1;
    for (int64_t n = 0; n < g_.batch; ++n) {
      for (int64_t grp = 0; grp < g_.group; ++grp) {
        const uint8_t* xg = x + uint64_t(n * g_.c + grp * cg_) * uint64_t(isz_);
        const uint64_t y_at = uint64_t(n * g_.m + grp * mg_) * uint64_t(osz_);
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
          a.a_signed = op_.xt == kInt8;
          a.za = &xz;
          if (op_.wzn > 0) {
            a.zb = zb + (op_.wzn == 1 ? 0 : grp * mg_);
            a.zb_n = op_.wzn == 1 ? 1 : mg_;
          }
          a.ldc = size_t(mg_);
          if (ep_) {  // the fused Cast -> Mul [-> Add] [-> Relu] (kernel.h): float out
            const auto* scale = static_cast<const float*>(io.in[4]);
            a.scale = scale + (ep_->scale_n == 1 ? 0 : grp * mg_);
            a.scale_n = ep_->scale_n == 1 ? 1 : mg_;
            if (ep_->bias_n > 0) {
              a.bias = static_cast<const float*>(io.in[5]) + (ep_->bias_n == 1 ? 0 : grp * mg_);
              a.bias_n = ep_->bias_n == 1 ? 1 : mg_;
            }
            a.bias_first = ep_->bias_first;
            a.relu = ep_->relu;
            a.cf = reinterpret_cast<float*>(cblock);  // the int32 block's bytes
          } else {
            a.c = cblock;
          }
          kernels::i8_gemm(kernels_, shape_, packed_.get() + uint64_t(grp) * pb, a, gemm_scratch,
                           io.pool);
          // C [rows, mg] (requantized row by row for QLinearConv) to Y's planes.
          const int64_t jparts = split ? std::min<int64_t>(parts, mg_) : 1;
          auto store = [&](size_t part, size_t) {
            const int64_t j0 = mg_ * int64_t(part) / jparts, j1 = mg_ * int64_t(part + 1) / jparts;
            if (ep_) {
              store_transposed(reinterpret_cast<const float*>(cblock), rows, mg_,
                               static_cast<float*>(io.out[0]) + y_at, uint64_t(osz_), r0, j0, j1);
            } else if (op_.requant) {
              store_transposed(qblock, rows, mg_, static_cast<uint8_t*>(io.out[0]) + y_at,
                               uint64_t(osz_), r0, j0, j1);
            } else {
              store_transposed(cblock, rows, mg_, static_cast<int32_t*>(io.out[0]) + y_at,
                               uint64_t(osz_), r0, j0, j1);
            }
          };
          if (op_.requant) {
            const int32_t* bg = bias ? bias + grp * mg_ : nullptr;
            const float* mg_mult = mult + grp * mg_;
            auto requant = [&](size_t part, size_t) {
              const int64_t a0 = rows * int64_t(part) / parts,
                            a1 = rows * int64_t(part + 1) / parts;
              for (int64_t r = a0; r < a1; ++r) {
                requant_.row(cblock + uint64_t(r) * uint64_t(mg_), bg, mg_mult, size_t(mg_), yz,
                             op_.yt == kInt8, qblock + uint64_t(r) * uint64_t(mg_));
              }
            };
            if (split) {
              io.pool->parallel_for(size_t(parts), requant);
            } else {
              requant(0, 0);
            }
          }
          if (jparts > 1) {
            io.pool->parallel_for(size_t(jparts), store);
          } else {
            store(0, 0);
          }
        }
      }
    }
  }

  // ConvInteger's sums with a float epilogue per output channel (the scale
  // and bias one value or M), written as float planes: the GEMM's epilogue on
  // each block, bitwise the Cast -> Mul [-> Add] [-> Relu] chain run apart.
  std::unique_ptr<Kernel> with_float_epilogue(const IntegerMatMulEpilogue& e) const override {
    if (op_.requant || (e.scale_n != 1 && e.scale_n != g_.m) || (e.bias_n > 1 && e.bias_n != g_.m))
      return nullptr;
    auto k = std::make_unique<GemmConvInteger>(*this);  // shares the packed W
    k->ep_ = e;
    return k;
  }

 private:
  uint64_t block32_bytes() const {
    return round64(saturating_mul(uint64_t(block_), uint64_t(mg_) * 4));
  }
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

  IntConvGeom g_;
  IntConvOperands op_;
  std::shared_ptr<const uint8_t> packed_;
  std::shared_ptr<MemoryReservation> reserved_;
  kernels::I8GemmKernels kernels_;
  kernels::vec::RequantKernels requant_;
  kernels::I8GemmShape shape_;
  int64_t in_[3], k_[3], out_[3], stride_[3], dil_[3], pad_[3];
  int64_t cg_ = 0, mg_ = 0, ksz_ = 0, osz_ = 0, isz_ = 0, block_ = 0;
  std::optional<IntegerMatMulEpilogue> ep_;  // set: the fused float epilogue (ConvInteger)
};

// A constant W with one input channel per group (depthwise, with or without a
// channel multiplier): a GEMM of K = kernel taps and N = M / group would waste
// most of its 16-column panels, so each output plane accumulates its taps
// directly, a row of output points at a time: the sums of the loops in another
// order, exact in uint32 (mod 2^32 as the loops'). QLinearConv accumulates a
// chunk of a row on the stack and requantizes it from there.
class PlaneConvInteger final : public Kernel {
 public:
  PlaneConvInteger(const IntConvGeom& g, const IntConvOperands& op, std::vector<int32_t> w,
                   MemoryReservation r)
      : g_(g),
        op_(op),
        d_(g),
        w_(std::move(w)),
        reserved_(std::make_shared<MemoryReservation>(std::move(r))),
        requant_(kernels::vec::host_requant_kernels()) {}

  void run(const KernelIO& io) const override {
    const int32_t xz = op_.xz >= 0 ? load8(op_.xt, io.in[size_t(op_.xz)], 0) : 0;
    const int64_t planes = g_.batch * g_.m;  // dims-lint: ok (the output's dims)
    auto one = [&](size_t i, size_t) {
      const int64_t n = int64_t(i) / g_.m, m = int64_t(i) % g_.m;
      const int32_t zw =
          op_.wzn > 0 ? load8(op_.wt, io.in[size_t(op_.wz)], op_.wzn == 1 ? 0 : m) : 0;
      const int64_t c = m / (g_.m / g_.group);
      if (op_.xt == kInt8) {
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
    const int64_t OD = d_.out[0], OH = d_.out[1], OW = d_.out[2];
    const int64_t isz = g_.in_size(), osz = g_.out_size();
    const T* xp = x + uint64_t(n * g_.c + c) * uint64_t(isz);
    const uint64_t y_at = uint64_t(n * g_.m + m) * uint64_t(osz);
    const int32_t* wm = w_.data() + uint64_t(m) * uint64_t(d_.k[0] * d_.k[1] * d_.k[2]);
    if (!op_.requant) {
      auto* yp = reinterpret_cast<uint32_t*>(static_cast<int32_t*>(io.out[0]) + y_at);
      for (int64_t od = 0; od < OD; ++od) {
        for (int64_t oh = 0; oh < OH; ++oh) {
          uint32_t* yr = yp + uint64_t(od * OH + oh) * uint64_t(OW);
          std::fill(yr, yr + OW, 0u);
          accumulate(xp, od, oh, 0, OW, wm, zw, xz, yr);
        }
      }
      return;
    }
    // QLinearConv: the sums plus B, then requant_value with this channel's multiplier.
    const float mult = int_conv_multiplier(op_, io, m);
    const int32_t yz = load8(op_.yt, io.in[size_t(op_.yz)], 0);
    const uint32_t b =
        op_.bias >= 0 ? uint32_t(static_cast<const int32_t*>(io.in[size_t(op_.bias)])[m]) : 0u;
    float mults[kPlaneChunk];
    std::fill(mults, mults + kPlaneChunk, mult);
    uint32_t acc[kPlaneChunk];
    uint8_t* yp = static_cast<uint8_t*>(io.out[0]) + y_at;
    for (int64_t od = 0; od < OD; ++od) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        uint8_t* yr = yp + uint64_t(od * OH + oh) * uint64_t(OW);
        for (int64_t c0 = 0; c0 < OW; c0 += kPlaneChunk) {
          const int64_t c1 = std::min(OW, c0 + kPlaneChunk);
          std::fill(acc, acc + (c1 - c0), b);
          accumulate(xp, od, oh, c0, c1, wm, zw, xz, acc);
          requant_.row(reinterpret_cast<const int32_t*>(acc), nullptr, mults, size_t(c1 - c0), yz,
                       op_.yt == kInt8, yr + c0);
        }
      }
    }
  }

  // dst[ow - c0] += the taps of output points (od, oh, ow) for ow in [c0, c1).
  template <typename T>
  void accumulate(const T* xp, int64_t od, int64_t oh, int64_t c0, int64_t c1, const int32_t* wm,
                  int32_t zw, int32_t xz, uint32_t* dst) const {
    const int64_t ID = d_.in[0], IH = d_.in[1], IW = d_.in[2], KD = d_.k[0], KH = d_.k[1],
                  KW = d_.k[2];
    const int64_t SW = d_.stride[2], DW = d_.dil[2], PW = d_.pad[2];
    for (int64_t a = 0; a < KD; ++a) {
      const int64_t z = od * d_.stride[0] - d_.pad[0] + a * d_.dil[0];
      if (z < 0 || z >= ID) continue;  // padding: contributes 0
      for (int64_t b = 0; b < KH; ++b) {
        const int64_t yy = oh * d_.stride[1] - d_.pad[1] + b * d_.dil[1];
        if (yy < 0 || yy >= IH) continue;
        const T* xr = xp + uint64_t(z * IH + yy) * uint64_t(IW);
        for (int64_t t = 0; t < KW; ++t) {
          const uint32_t wv = uint32_t(wm[(a * KH + b) * KW + t] - zw);
          // The points whose tap lies inside X: 0 <= ow * SW - PW + t * DW < IW.
          const int64_t off = t * DW - PW;
          int64_t lo = off >= 0 ? 0 : (-off + SW - 1) / SW;
          int64_t hi = IW - 1 - off >= 0 ? std::min(c1, (IW - 1 - off) / SW + 1) : 0;
          lo = std::max(lo, c0);
          uint32_t* dr = dst - c0;
          if (SW == 1) {
            const T* xs = xr + off;
            for (int64_t ow = lo; ow < hi; ++ow) dr[ow] += uint32_t(int32_t(xs[ow]) - xz) * wv;
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) {
              dr[ow] += uint32_t(int32_t(xr[ow * SW + off]) - xz) * wv;
            }
          }
        }
      }
    }
  }

  IntConvGeom g_;
  IntConvOperands op_;
  Dims3 d_;
  std::vector<int32_t> w_;                       // W widened to int32, [M, kernel taps]
  std::shared_ptr<MemoryReservation> reserved_;  // w_'s bytes
  kernels::vec::RequantKernels requant_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> packed_int_conv(const BuildContext& ctx, const IntConvGeom& g,
                                                const IntConvOperands& op) {
  const Tensor* w = ctx.input_value(op.w);
  if (w == nullptr || g.batch <= 0 || g.c <= 0 || g.m <= 0 || g.out_size() <= 0 ||
      g.in_size() <= 0) {
    return std::unique_ptr<Kernel>();
  }
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const int32_t wt = op.wt;
  if (cg == 1) {
    const int64_t taps = g.m * g.kernel_size();  // dims-lint: ok (W's dims)
    OP_ASSIGN_OR_RETURN(MemoryReservation r,
                        reserve_memory(uint64_t(taps) * 4, ctx.where() + ": widened W"));
    std::vector<int32_t> wv(static_cast<size_t>(taps));
    for (int64_t i = 0; i < taps; ++i) wv[size_t(i)] = load8(wt, w->data, i);
    return std::unique_ptr<Kernel>(new PlaneConvInteger(g, op, std::move(wv), std::move(r)));
  }
  const kernels::I8GemmShape shape{cg * g.kernel_size(), mg,
                                   wt == kInt8};  // dims-lint: ok (W's dims)
  const auto* wb = static_cast<const uint8_t*>(w->data);
  if (ctx.weights() != nullptr && ctx.input(op.w).is_initializer) {
    // The i8_gemm_b family's i8_conv_w (group 1) or i8_conv_w_grouped entry: the groups'
    // panels one after another, as GemmConvInteger reads them, then W's dims.
    const uint64_t payload = pack::i8_conv_w_payload_bytes(shape, w->shape.size(), g.group);
    OP_ASSIGN_OR_RETURN(PreparedPack got, ctx.prepare_weight(op.w, [&](std::span<uint8_t> out) {
      return pack::i8_conv_w_pack(shape, {wb, size_t(shape_numel(w->shape))}, w->shape, out,
                                  g.group);
    }));
    // Empty: not prepared; another size cannot come from the family's checked
    // entries, and is packed here rather than read.
    if (!got.bytes.empty() && got.bytes.size() == payload) {
      return std::unique_ptr<Kernel>(new GemmConvInteger(
          g, op, std::shared_ptr<const uint8_t>(got.keep_alive, got.bytes.data()), nullptr));
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
  return std::unique_ptr<Kernel>(new GemmConvInteger(
      g, op, std::move(packed), std::make_shared<MemoryReservation>(std::move(r))));
}

}  // namespace onnx_prepack::runtime
