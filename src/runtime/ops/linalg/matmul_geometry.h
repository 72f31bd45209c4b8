// The geometry of a numpy-style matrix product, one definition for every
// operator that has it (MatMul of every type, MatMulInteger, QLinearMatMul):
// a 1-D A gains a leading 1 and a 1-D B a trailing 1 (dropped again from Y),
// the batch dimensions broadcast, and each output batch reads one m x k
// matrix of A and one k x n matrix of B.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

struct MatMulGeometry {
  int64_t m = 0, k = 0, n = 0;
  int64_t batches = 1;     // the product of `batch`
  Shape batch;             // the broadcast batch dimensions
  Shape a_batch, b_batch;  // A's and B's own batch dimensions (after the 1-D promotion)
  Shape out;               // Y's shape

  // B is one matrix (no batch dimensions): A's batches are consecutive m x k
  // blocks, so the product is one of batches * m rows.
  bool b_is_matrix() const { return b_batch.empty(); }
  // Per output batch, the element offsets of its A and B matrices.
  void batch_offsets(std::vector<int64_t>& a_off, std::vector<int64_t>& b_off) const;
};

// The geometry of A x B, or the node's error: a rank-0 operand, inner
// dimensions that differ, batch dimensions that do not broadcast.
Result<MatMulGeometry> matmul_geometry(const BuildContext& ctx, const Shape& a, const Shape& b);

}  // namespace onnx_prepack::runtime
