// The activation functions of RNN, GRU and LSTM, by the names the operators'
// `activations` attribute uses, with their alpha/beta parameters.
#pragma once

#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

struct RnnActivation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus,
  };
  Kind kind = Kind::kTanh;
  float alpha = 0, beta = 0;
  float operator()(float x) const;
};

// The activations of every direction: `per_direction` functions each (f, g, h
// in the operator's order), `defaults` when the attribute is absent. The
// alpha/beta lists are consumed in order by the functions that take them; the
// defaults are those of the same-named ONNX operators. One direction's list is
// used for both directions of a bidirectional layer.
Result<std::vector<RnnActivation>> parse_rnn_activations(const BuildContext& ctx,
                                                         const std::vector<std::string>& defaults,
                                                         int directions);

}  // namespace onnx_prepack::runtime
