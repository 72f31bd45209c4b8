// The Einsum plan: an equation over any number of operands evaluated as a
// sequence of small steps whose cost is polynomial in the sizes, instead of
// one loop over every subscript at once (exponential in their number).
//
// 1. Each operand's subscripts that no other operand and not the output name
//    are summed away first (a repeated subscript is read as a diagonal: its
//    strides are summed, no copy).
// 2. The operands are then contracted two at a time, greedily: each round
//    takes the pair whose result is smallest (then the cheapest). A pairwise
//    contraction is a batched matrix product: batch subscripts (in both and
//    needed later), M (left only), N (right only), K (in both, not needed
//    later). Operands are copied to contiguous [batch, M, K] x [batch, K, N]
//    only when their layout is not already that.
// 3. The last result is permuted to the output's order (or written there
//    directly when its order already is the output's).
//
// The plan is pure data, built once at plan time (the planner gives every
// value a static shape); einsum_kernel.h runs it. docs/operators-tensor.md.
#pragma once

#include <cstdint>
#include <vector>

namespace onnx_prepack::runtime::tensor_family {

// One operand as the plan reads it: each subscript id once, with its element
// stride in the operand's buffer (a repeated subscript's strides summed: the
// diagonal; a broadcast ellipsis dimension of size 1 left out).
struct EinsumOperand {
  std::vector<int> ids;
  std::vector<int64_t> strides;
};

// The equation with its sizes: `dims` per subscript id.
struct EinsumProblem {
  std::vector<int64_t> dims;
  std::vector<EinsumOperand> operands;
  std::vector<int> out_ids;  // the output's subscripts, in order
};

// Where a step reads: input `input` of the node, or scratch buffer `buffer`.
struct EinsumSource {
  int input = -1;
  int buffer = -1;
};

// An odometer walk (last dimension fastest) over a source: each dimension's
// size and its element stride in the source.
struct EinsumWalk {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
};

struct EinsumStep {
  enum Kind { kReduce, kContract };
  Kind kind = kReduce;
  int dst = -1;  // scratch buffer written, or -1: the node's output
  // kReduce: dst (contiguous over `kept`) = the sum over `summed` of `src`.
  EinsumSource src;
  EinsumWalk kept, summed;
  // kContract: dst [batch, m, n] = sum over k of A [batch, m, k] x B [batch, k, n].
  // A is `left` when `a_copy` is -1 (already contiguous), else scratch buffer
  // `a_copy` filled from `left` by `a_walk`; B likewise, and with `b_nk` it is
  // read as [batch, n, k] (a contiguous transposed operand, no copy).
  EinsumSource left, right;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  EinsumWalk a_walk, b_walk;
  int a_copy = -1, b_copy = -1;
  bool b_nk = false;
  bool gemm = false;  // float products on the GEMM kernels; otherwise a loop
};

struct EinsumPlan {
  std::vector<std::vector<int64_t>> buffer_shapes;  // per scratch buffer
  std::vector<int> buffer_last_use;                 // the step after which each buffer is freed
  std::vector<EinsumStep> steps;
  std::vector<std::vector<int>> step_frees;  // per step, the buffers freed after it
  // Scalar steps (sums, copies, loop products): what the work bound counts.
  // The GEMM products are not counted, as for MatMul (docs/runtime.md).
  uint64_t loop_steps = 0;
  uint64_t peak_scratch_elems = 0;  // the most scratch elements live at once
};

// Plans `p`. `float_gemm`: products may run on the float GEMM kernels (the
// element type is float). Counts saturate; the builder checks them against
// the budgets.
EinsumPlan plan_einsum(const EinsumProblem& p, bool float_gemm);

}  // namespace onnx_prepack::runtime::tensor_family
