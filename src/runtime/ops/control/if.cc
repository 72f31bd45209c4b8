// If: runs then_branch or else_branch. A condition known at plan time plans
// only its branch; otherwise both are planned and must give the same output
// types and shapes (else the condition's value is needed to plan). A branch
// that cannot be planned for the fed shapes fails the run only if taken.
#include <algorithm>
#include <cstring>

#include "runtime/ops/control/control_ops.h"
#include "runtime/run_limits.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"

namespace onnx_prepack::runtime {

namespace {

Status check_branch_outputs(const BuildContext& ctx, const Subgraph& g, const char* which) {
  if (int(g.outputs().size()) != ctx.output_count()) {
    return ctx.error(std::string(which) + " has " + std::to_string(g.outputs().size()) +
                     " outputs, the node " + std::to_string(ctx.output_count()));
  }
  return ok_status();
}

std::string type_string(const Session::PlannedOutput& o) {
  return dtype_name(o.dtype) + shape_string(o.shape);
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_if(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* cond, ctx.require_input(0));
  if (cond->dtype != kBool || checked_numel(cond->shape) != 1) {
    return ctx.error("condition must be one bool, got " + dtype_name(cond->dtype) +
                     shape_string(cond->shape));
  }
  OP_ASSIGN_OR_RETURN(const onnx::GraphProto* then_g, graph_attr(ctx, "then_branch"));
  OP_ASSIGN_OR_RETURN(const onnx::GraphProto* else_g, graph_attr(ctx, "else_branch"));
  const int declared = ctx.input_count();
  // The branches must agree on each output's element type (ONNX Runtime
  // refuses the model otherwise), whichever the condition picks.
  for (int i = 0; i < std::min(then_g->output_size(), else_g->output_size()); ++i) {
    const auto& tt = then_g->output(i).type().tensor_type();
    const auto& et = else_g->output(i).type().tensor_type();
    if (tt.elem_type() != 0 && et.elem_type() != 0 && tt.elem_type() != et.elem_type()) {
      return ctx.error("output " + std::to_string(i) + " is declared " +
                       dtype_name(tt.elem_type()) + " in then_branch and " +
                       dtype_name(et.elem_type()) +
                       " in else_branch; the branches must yield one element type");
    }
  }

  if (const Tensor* v = ctx.input_value(0)) {
    bool c = *v->as<uint8_t>() != 0;
    OP_ASSIGN_OR_RETURN(std::unique_ptr<Subgraph> branch,
                        Subgraph::plan(ctx, c ? *then_g : *else_g, {}));
    OP_RETURN_IF_ERROR(check_branch_outputs(ctx, *branch, c ? "then_branch" : "else_branch"));
    bool all_known = true;
    for (const auto& o : branch->outputs()) all_known = all_known && o.value.has_value();
    for (int i = 0; i < ctx.output_count(); ++i) {
      const auto& o = branch->outputs()[size_t(i)];
      if (all_known) {
        ctx.set_output_value(i, *o.value);
      } else {
        ctx.set_output(i, o.dtype, o.shape);
      }
    }
    if (all_known) return std::unique_ptr<Kernel>();
    std::shared_ptr<Subgraph> g(std::move(branch));
    return std::unique_ptr<Kernel>(new FnKernel([g, declared](const KernelIO& io) {
      report_failure(io, g->run({}, io.in.subspan(size_t(declared)), io.out, io.limits));
    }));
  }

  auto then_r = Subgraph::plan(ctx, *then_g, {});
  auto else_r = Subgraph::plan(ctx, *else_g, {});
  if (!then_r.ok() && !else_r.ok()) return then_r.status();
  // A branch stopped by the run's deadline is not one that cannot be planned.
  for (const Status* st : {&then_r.status(), &else_r.status()}) {
    if (is_stop(*st)) return *st;
  }
  // A branch that needs a fed value to plan: the session pins the feeds and plans again.
  if (ctx.needed_unknown_value()) return (then_r.ok() ? else_r : then_r).status();
  if (!then_r.ok() || !else_r.ok()) {
    // A branch that cannot be planned for these shapes may be one the
    // condition never takes (Silero VAD's 8 kHz branch on 16 kHz-sized input):
    // plan the other, and fail the run only if the condition picks this one.
    const bool then_ok = then_r.ok();
    std::shared_ptr<Subgraph> ok_b(std::move(then_ok ? *then_r : *else_r));
    OP_RETURN_IF_ERROR(check_branch_outputs(ctx, *ok_b, then_ok ? "then_branch" : "else_branch"));
    for (int i = 0; i < ctx.output_count(); ++i) {
      const auto& o = ok_b->outputs()[size_t(i)];
      ctx.set_output(i, o.dtype, o.shape);
    }
    const Status why = (then_ok ? else_r : then_r)
                           .status()
                           .with_context(ctx.where() + ": the condition chose " +
                                         (then_ok ? "else_branch" : "then_branch") +
                                         ", which cannot run with these input shapes");
    return std::unique_ptr<Kernel>(new FnKernel([ok_b, then_ok, why, declared](const KernelIO& io) {
      const bool c = *static_cast<const uint8_t*>(io.in[0]) != 0;
      if (c != then_ok) return report_failure(io, why);
      report_failure(io, ok_b->run({}, io.in.subspan(size_t(declared)), io.out, io.limits));
    }));
  }
  std::unique_ptr<Subgraph> then_b = std::move(*then_r), else_b = std::move(*else_r);
  OP_RETURN_IF_ERROR(check_branch_outputs(ctx, *then_b, "then_branch"));
  OP_RETURN_IF_ERROR(check_branch_outputs(ctx, *else_b, "else_branch"));
  for (int i = 0; i < ctx.output_count(); ++i) {
    const auto& t = then_b->outputs()[size_t(i)];
    const auto& e = else_b->outputs()[size_t(i)];
    if (t.dtype != e.dtype) {
      return ctx.error("output " + std::to_string(i) + " is " + type_string(t) +
                       " in then_branch and " + type_string(e) +
                       " in else_branch; the branches must yield one element type");
    }
    if (t.shape != e.shape) {
      return ctx.needs_value("the condition (input 0 '" + cond->name +
                             "') must be known before running: output " + std::to_string(i) +
                             " is " + type_string(t) + " in then_branch and " + type_string(e) +
                             " in else_branch");
    }
    ctx.set_output(i, t.dtype, t.shape);
  }
  std::shared_ptr<Subgraph> tg(std::move(then_b)), eg(std::move(else_b));
  return std::unique_ptr<Kernel>(new FnKernel([tg, eg, declared](const KernelIO& io) {
    bool c = *static_cast<const uint8_t*>(io.in[0]) != 0;
    report_failure(io, (c ? tg : eg)->run({}, io.in.subspan(size_t(declared)), io.out, io.limits));
  }));
}

}  // namespace onnx_prepack::runtime
