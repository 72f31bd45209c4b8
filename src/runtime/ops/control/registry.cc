// The control family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder.
#include "runtime/kernel.h"
#include "runtime/ops/control/control_ops.h"

namespace onnx_prepack::runtime {

namespace {

constexpr OpEntry kOps[] = {
    {"If", build_if},   {"Loop", build_loop}, {"Scan", build_scan},
    {"RNN", build_rnn}, {"GRU", build_gru},   {"LSTM", build_lstm},
};

}  // namespace

std::span<const OpEntry> control_ops() { return kOps; }

Result<const onnx::GraphProto*> graph_attr(const BuildContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.attr(name);
  if (a == nullptr || !a->has_g())
    return ctx.error(std::string("attribute '") + name + "' (a graph) is required");
  return &a->g();
}

}  // namespace onnx_prepack::runtime
