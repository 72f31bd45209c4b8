// RNN, GRU and LSTM builders: every direction, activations with alpha/beta,
// clip, layout 0 and 1, sequence_lens, initial states, LSTM peepholes and
// input_forget, GRU linear_before_reset. The kernel is recurrent_layer.cc's.
#include <string>
#include <vector>

#include "runtime/ops/control/control_ops.h"
#include "runtime/ops/control/recurrent_layer.h"

namespace onnx_prepack::runtime {

namespace {

Result<std::unique_ptr<Kernel>> build_recurrent(BuildContext& ctx, CellKind cell) {
  LayerSpec s;
  s.cell = cell;
  s.gates = cell == CellKind::kRnn ? 1 : cell == CellKind::kGru ? 3 : 4;
  s.acts_per_dir = s.gates == 4 ? 3 : s.gates == 3 ? 2 : 1;
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* w, ctx.require_input(1));
  OP_ASSIGN_OR_RETURN(const ValueDesc* r, ctx.require_input(2));
  s.dtype = x->dtype;
  if (s.dtype != kFloat && s.dtype != kFloat16 && s.dtype != kBfloat16 && s.dtype != kDouble) {
    return ctx.error("type " + dtype_name(s.dtype) + " is not supported (float types only)");
  }
  for (int i : {1, 2, 3, 5, 6, 7}) {
    if (ctx.has_input(i) && ctx.input(i).dtype != s.dtype) {
      return ctx.error("input " + std::to_string(i) + " is " + dtype_name(ctx.input(i).dtype) +
                       ", X is " + dtype_name(s.dtype));
    }
  }
  std::string direction = ctx.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ctx.error("direction '" + direction + "' is not forward, reverse or bidirectional");
  }
  s.dirs = direction == "bidirectional" ? 2 : 1;
  s.reverse = direction == "reverse";
  s.layout = int(ctx.attr_int("layout", 0));
  if (s.layout != 0 && s.layout != 1) return ctx.error("layout must be 0 or 1");
  if (x->shape.size() != 3 || w->shape.size() != 3 || r->shape.size() != 3) {
    return ctx.error("X, W and R must be 3-D, got " + shape_string(x->shape) + ", " +
                     shape_string(w->shape) + ", " + shape_string(r->shape));
  }
  s.seq = s.layout == 0 ? x->shape[0] : x->shape[1];
  s.batch = s.layout == 0 ? x->shape[1] : x->shape[0];
  s.input = x->shape[2];
  s.hidden = r->shape[2];
  int64_t hidden_attr = ctx.attr_int("hidden_size", s.hidden);
  const int64_t g = s.gates;
  // gates * hidden (W, R) and B's 2 * gates * hidden must fit int64: an empty
  // R ([1, 0, 2^62]) has a hidden size no tensor could hold.
  if (!checked_mul(s.hidden, 2 * g)) {
    return ctx.error("hidden size " + std::to_string(s.hidden) + " (R " + shape_string(r->shape) +
                     ") times " + std::to_string(2 * g) + " gate rows overflows int64");
  }
  if (hidden_attr != s.hidden || w->shape != Shape{s.dirs, g * s.hidden, s.input} ||
      r->shape != Shape{s.dirs, g * s.hidden, s.hidden}) {
    return ctx.error("W " + shape_string(w->shape) + " and R " + shape_string(r->shape) +
                     " do not fit X " + shape_string(x->shape) + ", hidden_size " +
                     std::to_string(hidden_attr) + " and " + std::to_string(s.dirs) +
                     " direction(s)");
  }
  auto check = [&](int i, const Shape& want, int32_t dtype, const char* what) -> Status {
    if (!ctx.has_input(i)) return ok_status();
    if (ctx.input(i).shape != want || ctx.input(i).dtype != dtype) {
      return ctx.error(std::string(what) + " is " + dtype_name(ctx.input(i).dtype) +
                       shape_string(ctx.input(i).shape) + ", expected " + dtype_name(dtype) +
                       shape_string(want));
    }
    return ok_status();
  };
  const Shape state =
      s.layout == 0 ? Shape{s.dirs, s.batch, s.hidden} : Shape{s.batch, s.dirs, s.hidden};
  OP_RETURN_IF_ERROR(check(3, {s.dirs, 2 * g * s.hidden}, s.dtype, "B"));
  OP_RETURN_IF_ERROR(check(4, {s.batch}, kInt32, "sequence_lens"));
  OP_RETURN_IF_ERROR(check(5, state, s.dtype, "initial_h"));
  s.has_b = ctx.has_input(3);
  s.has_lens = ctx.has_input(4);
  s.has_h0 = ctx.has_input(5);
  if (cell == CellKind::kLstm) {
    OP_RETURN_IF_ERROR(check(6, state, s.dtype, "initial_c"));
    OP_RETURN_IF_ERROR(check(7, {s.dirs, 3 * s.hidden}, s.dtype, "P"));
    s.has_c0 = ctx.has_input(6);
    s.has_p = ctx.has_input(7);
    s.input_forget = ctx.attr_int("input_forget", 0) != 0;
  }
  s.linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;
  if (const auto* a = ctx.typed_attr("clip", onnx::AttributeProto::FLOAT)) {
    s.clip_on = true;
    s.clip = a->f();
  }
  std::vector<std::string> defaults = cell == CellKind::kRnn ? std::vector<std::string>{"Tanh"}
                                      : cell == CellKind::kGru
                                          ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  OP_ASSIGN_OR_RETURN(s.acts, parse_rnn_activations(ctx, defaults, s.dirs));
  const Shape y = s.layout == 0 ? Shape{s.seq, s.dirs, s.batch, s.hidden}
                                : Shape{s.batch, s.seq, s.dirs, s.hidden};
  if (checked_numel(y) < 0 || checked_numel(Shape{s.seq, s.batch, g * s.hidden}) < 0 ||
      checked_numel(Shape{s.dirs, g * s.hidden, s.input}) < 0) {
    return ctx.error("sizes overflow");
  }
  ctx.set_output(0, s.dtype, y);
  ctx.set_output(1, s.dtype, state);
  if (cell == CellKind::kLstm) ctx.set_output(2, s.dtype, state);
  return make_recurrent_kernel(std::move(s), w->value && r->value ? w->value : nullptr,
                               w->value && r->value ? r->value : nullptr);
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_rnn(BuildContext& ctx) {
  return build_recurrent(ctx, CellKind::kRnn);
}
Result<std::unique_ptr<Kernel>> build_gru(BuildContext& ctx) {
  return build_recurrent(ctx, CellKind::kGru);
}
Result<std::unique_ptr<Kernel>> build_lstm(BuildContext& ctx) {
  return build_recurrent(ctx, CellKind::kLstm);
}

}  // namespace onnx_prepack::runtime
