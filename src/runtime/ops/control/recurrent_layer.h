// The recurrent layer shared by RNN, GRU and LSTM: its description (filled by
// the builders in recurrent.cc from the node) and its kernel
// (recurrent_layer.cc). Computes in float: FLOAT16, BFLOAT16 and DOUBLE inputs
// are widened and the outputs rounded once.
#pragma once

#include <memory>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/control/rnn_activation.h"

namespace onnx_prepack::runtime {

enum class CellKind { kRnn, kGru, kLstm };

struct LayerSpec {
  CellKind cell = CellKind::kRnn;
  int gates = 1;  // rows of W per hidden unit: 1 (RNN), 3 (GRU), 4 (LSTM)
  int dirs = 1;
  bool reverse = false;  // direction "reverse"
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int layout = 0;
  bool clip_on = false;
  float clip = 0;
  bool linear_before_reset = false, input_forget = false;
  std::vector<RnnActivation> acts;
  int acts_per_dir = 1;
  int32_t dtype = kFloat;
  bool has_b = false, has_lens = false, has_h0 = false, has_c0 = false, has_p = false;
  int64_t gh() const { return gates * hidden; }
  // Columns of the per-step product H R^T (GRU's hidden gate is a product of its own).
  int64_t r_cols() const { return cell == CellKind::kGru ? 2 * hidden : gh(); }
};

// The kernel for `spec`. W and R (type spec.dtype, [dirs, gates * hidden,
// input or hidden]) are packed now when given (constants), at every run otherwise.
std::unique_ptr<Kernel> make_recurrent_kernel(LayerSpec spec, const Tensor* w, const Tensor* r);

}  // namespace onnx_prepack::runtime
