// One pass over a tensor for a chain of float elementwise kernels (Mul/Add by
// a per-channel constant, Clip, HardSigmoid, ...), as CNN exporters emit them
// after every convolution: PaddleOCR's PP-LCNetV3 follows each Conv with a
// learnable affine Mul + Add, a decomposed hard-swish (Add, Clip, Mul, Div)
// and another affine pair, eight full passes over a feature map that a fused
// kernel makes one. The tensor is split into tiles small enough to stay in L1;
// each instruction runs the same vector function as the unfused kernel on the
// same operands, so the result is bitwise equal (docs/runtime.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_math.h"
#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

// Where an instruction reads or writes, within the current tile.
struct FusedOperand {
  enum Kind : uint8_t {
    kTemp,    // a scratch tile (a value no other step reads)
    kStored,  // io.out[index] (a value read after the chain or a graph output)
    kFull,    // io.in[index], same shape as the chain
    kRow,     // io.in[index], one value per row (per channel)
    kScalar,  // io.in[index], one value
  };
  Kind kind = kTemp;
  int index = 0;
  bool per_batch = false;  // kRow: one value per (batch, channel), else per channel
};

struct FusedInstr {
  PointwiseDesc op;  // bounds_from_inputs already resolved into p0 / p1
  FusedOperand a, b, dst;
};

// The chain's shape seen as [rows, row_len]: rows = batch x channels for a
// tensor of rank >= 3 whose spatial size is large enough to tile, else one row.
struct FusedPointwise {
  int64_t rows = 1;
  int64_t row_len = 0;
  int64_t channels = 1;
  int temps = 0;
  std::vector<FusedInstr> program;
};

// Scratch tiles a fused kernel may use at once.
constexpr int kMaxFusedTemps = 8;

// How operand `shape` reads against the chain's shape `out` (laid out as
// `layout`): kFull, kRow, kScalar, or false when the fused kernel cannot read it.
bool classify_operand(const Shape& shape, const Shape& out, const FusedPointwise& layout,
                      FusedOperand& operand);
// rows / row_len / channels for a chain of shape `out`.
FusedPointwise fused_layout(const Shape& out);

std::unique_ptr<Kernel> make_fused_pointwise_kernel(FusedPointwise chain);

// A chain's program bound to the host's vector functions: what the fused
// kernel runs per tile, and what a producer kernel runs on its own output as
// an epilogue (OutputEpilogue).
class FusedProgram {
 public:
  explicit FusedProgram(FusedPointwise chain);
  const FusedPointwise& chain() const { return c_; }
  // Elements [base, base + len) of the chain's row `row` (base counts from the
  // tensor's start and the span stays inside the row), in tiles of at most
  // 512 floats with the scratch tiles on the stack. Elementwise, so where a
  // span starts changes no bit.
  void run_span(const KernelIO& io, int64_t row, int64_t base, int64_t len) const;

 private:
  FusedPointwise c_;
  kernels::vec::BinaryFn binary_;
  kernels::vec::ActFn act_;
};

// A fused elementwise chain that a producer (Conv) runs on each finished run
// of its output while it is in cache (docs/runtime.md, "Conv epilogue"). The
// producer writes its result into io.out[raw] (one of the chain's stored
// values, written by the chain no earlier than the chain's last read of the
// producer's value), then runs `chain` over the run: the chain reads the
// producer's value as kStored `raw`, and its other operands at io.in indices
// past the producer's own inputs.
struct OutputEpilogue {
  FusedPointwise chain;
  int raw = 0;
};

}  // namespace onnx_prepack::runtime
