// Builders of the control family (registry.cc lists them): If, Loop, Scan run
// subgraphs (runtime/subgraph.h); RNN, GRU, LSTM are the recurrent layers.
#pragma once

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

Result<std::unique_ptr<Kernel>> build_if(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_loop(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_scan(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_rnn(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_gru(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_lstm(BuildContext& ctx);

// The subgraph attribute `name` of the node, or an error naming it.
Result<const onnx::GraphProto*> graph_attr(const BuildContext& ctx, const char* name);

}  // namespace onnx_prepack::runtime
