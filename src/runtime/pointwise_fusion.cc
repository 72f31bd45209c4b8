#include "runtime/pointwise_fusion.h"

#include <algorithm>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_math.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {
namespace {

// Floats per tile: kMaxFusedTemps tiles (16 KiB) and the streamed operands stay in L1.
constexpr int64_t kTile = 512;
// Spatial sizes below this are not split into rows: a row per channel would be
// a tile of a few floats, all call overhead.
constexpr int64_t kMinRowLen = 64;

class FusedPointwiseKernel final : public Kernel {
 public:
  explicit FusedPointwiseKernel(FusedPointwise chain) : p_(std::move(chain)) {}

  void run(const KernelIO& io) const override {
    const FusedPointwise& c = p_.chain();
    const int64_t per_row = (c.row_len + kTile - 1) / kTile;
    const int64_t tasks = c.rows * per_row;
    parallel_range(io.pool, tasks, std::max<int64_t>(1, 16384 / kTile),
                   [&](int64_t t0, int64_t t1) {
                     for (int64_t t = t0; t < t1; ++t) {
                       const int64_t row = t / per_row, at = (t % per_row) * kTile;
                       p_.run_span(io, row, row * c.row_len + at, std::min(kTile, c.row_len - at));
                     }
                   });
  }

  const FusedPointwise* fused_pointwise() const override { return &p_.chain(); }

 private:
  FusedProgram p_;
};

struct Ref {
  const float* p;
  size_t stride;
};

Ref read_operand(const KernelIO& io, const FusedPointwise& c, float (*scratch)[kTile],
                 const FusedOperand& o, int64_t row, int64_t base) {
  switch (o.kind) {
    case FusedOperand::kTemp:
      return {scratch[o.index], 1};
    case FusedOperand::kStored:
      return {static_cast<const float*>(io.out[size_t(o.index)]) + base, 1};
    case FusedOperand::kFull:
      return {static_cast<const float*>(io.in[size_t(o.index)]) + base, 1};
    case FusedOperand::kRow:
      return {static_cast<const float*>(io.in[size_t(o.index)]) +
                  (o.per_batch ? row : row % c.channels),
              0};
    case FusedOperand::kScalar:
      break;
  }
  return {static_cast<const float*>(io.in[size_t(o.index)]), 0};
}

}  // namespace

FusedProgram::FusedProgram(FusedPointwise chain)
    : c_(std::move(chain)),
      binary_(kernels::vec::host_vec_kernels().binary),
      act_(kernels::vec::host_act_kernel()) {}

void FusedProgram::run_span(const KernelIO& io, int64_t row, int64_t base, int64_t len) const {
  alignas(64) float scratch[kMaxFusedTemps][kTile];
  for (int64_t at = 0; at < len; at += kTile) {
    const int64_t b = base + at, n = std::min(kTile, len - at);
    for (const FusedInstr& ins : c_.program) {
      float* dst = ins.dst.kind == FusedOperand::kTemp
                       ? scratch[ins.dst.index]
                       : static_cast<float*>(io.out[size_t(ins.dst.index)]) + b;
      const Ref a = read_operand(io, c_, scratch, ins.a, row, b);
      if (ins.op.kind == PointwiseDesc::kBinary) {
        const Ref r = read_operand(io, c_, scratch, ins.b, row, b);
        binary_(ins.op.op, a.p, a.stride, r.p, r.stride, dst, size_t(n));
      } else {
        act_(ins.op.op, a.p, dst, size_t(n), ins.op.p0, ins.op.p1);
      }
    }
  }
}

FusedPointwise fused_layout(const Shape& out) {
  FusedPointwise f;
  const int64_t n = shape_numel(out);
  f.row_len = n;
  if (out.size() >= 3) {
    int64_t spatial = 1;
    for (size_t i = 2; i < out.size(); ++i) spatial *= out[i];
    if (spatial >= kMinRowLen) {
      f.rows = out[0] * out[1];
      f.row_len = spatial;
      f.channels = out[1];
    }
  }
  return f;
}

bool classify_operand(const Shape& shape, const Shape& out, const FusedPointwise& layout,
                      FusedOperand& operand) {
  if (shape.size() > out.size()) return false;
  if (shape_numel(shape) == 1) {
    operand.kind = FusedOperand::kScalar;
    return true;
  }
  Shape padded(out.size() - shape.size(), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  if (padded == out) {
    operand.kind = FusedOperand::kFull;
    return true;
  }
  if (layout.rows <= 1 || padded[1] != out[1]) return false;
  for (size_t i = 2; i < padded.size(); ++i) {
    if (padded[i] != 1) return false;
  }
  if (padded[0] != 1 && padded[0] != out[0]) return false;
  operand.kind = FusedOperand::kRow;
  operand.per_batch = padded[0] != 1;
  return true;
}

std::unique_ptr<Kernel> make_fused_pointwise_kernel(FusedPointwise chain) {
  return std::make_unique<FusedPointwiseKernel>(std::move(chain));
}

}  // namespace onnx_prepack::runtime
