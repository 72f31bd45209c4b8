// Einsum: any equation (explicit or implicit output, "..." broadcasting,
// repeated subscripts for diagonals, sums over subscripts that leave the
// output). The builder parses the equation into subscript ids with their sizes
// and each operand's strides, plans it as sums and pairwise products
// (einsum_plan.h), checks the plan against the memory budget and the work
// bound, and returns the kernel that runs it (einsum_kernel.h).
#include <algorithm>
#include <map>

#include "runtime/ops/tensor/einsum_kernel.h"
#include "runtime/ops/tensor/einsum_plan.h"
#include "runtime/ops/tensor/tensor_ops.h"
#include "runtime/run_limits.h"
#include "runtime/work_budget.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// One operand's subscripts: letters, with -1 marking where "..." stands.
struct Term {
  std::vector<int> labels;  // 'a'..'z', 'A'..'Z' as chars; -1 for the ellipsis
  bool has_ellipsis = false;
};

Result<Term> parse_term(const BuildContext& ctx, const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (s.compare(i, 3, "...") != 0 || t.has_ellipsis)
        return ctx.error("equation term '" + s + "' has a malformed ellipsis");
      t.has_ellipsis = true;
      t.labels.push_back(-1);
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.labels.push_back(c);
    } else {
      return ctx.error("equation term '" + s + "' has the character '" + std::string(1, c) + "'");
    }
  }
  return t;
}

}  // namespace

BuildResult build_einsum(BuildContext& ctx) {
  std::string eq;
  for (char c : ctx.attr_string("equation", "")) {
    if (c != ' ') eq += c;
  }
  if (eq.empty()) return ctx.error("equation is required");
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t p = 0;
  while (true) {
    size_t comma = lhs.find(',', p);
    terms.push_back(lhs.substr(p, comma == std::string::npos ? std::string::npos : comma - p));
    if (comma == std::string::npos) break;
    p = comma + 1;
  }
  int n = ctx.input_count();
  if (int(terms.size()) != n)
    return ctx.error("equation has " + std::to_string(terms.size()) + " terms for " +
                     std::to_string(n) + " inputs");
  int32_t dt = kUndefined;
  std::vector<Term> in_terms;
  int64_t ell = 0;  // ellipsis rank (the largest)
  std::vector<int64_t> ell_rank(size_t(n), 0);
  for (int i = 0; i < n; ++i) {
    OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(i));
    if (i == 0) dt = x->dtype;
    if (x->dtype != dt) return ctx.error("inputs must have one type");
    OP_ASSIGN_OR_RETURN(Term t, parse_term(ctx, terms[size_t(i)]));
    int64_t letters = int64_t(t.labels.size()) - (t.has_ellipsis ? 1 : 0);
    int64_t rank = int64_t(x->shape.size());
    if (t.has_ellipsis ? rank < letters : rank != letters)
      return ctx.error("term '" + terms[size_t(i)] + "' does not match input " + std::to_string(i) +
                       " " + shape_string(x->shape));
    ell_rank[size_t(i)] = t.has_ellipsis ? rank - letters : 0;
    ell = std::max(ell, ell_rank[size_t(i)]);
    in_terms.push_back(t);
  }
  if (dt != kFloat && dt != kDouble && dt != kInt32 && dt != kInt64 && dt != kUint32 &&
      dt != kUint64)
    return ctx.error("type " + dtype_name(dt) + " is not supported");
  // Ids: ellipsis dims 0..ell-1, then one per letter.
  std::map<int, int> letter_id;
  std::map<int, int> letter_count;
  for (const auto& t : in_terms) {
    for (int l : t.labels) {
      if (l < 0) continue;
      ++letter_count[l];
      if (!letter_id.count(l)) letter_id[l] = 0;
    }
  }
  int next = int(ell);
  for (auto& [l, id] : letter_id) id = next++;
  int ids = next;
  EinsumProblem prob;
  prob.dims.assign(size_t(ids), 1);
  std::vector<bool> dim_set(size_t(ids), false);
  for (int i = 0; i < n; ++i) {
    const Shape& shape = ctx.input(i).shape;
    std::vector<int64_t> st = strides_of(shape);
    EinsumOperand op;
    size_t axis = 0;
    auto bind = [&](int id, size_t ax) -> Status {
      int64_t d = shape[ax];
      if (id < int(ell) && d == 1) return ok_status();  // a broadcast ellipsis dim: not read
      if (dim_set[size_t(id)] && prob.dims[size_t(id)] != d) {
        return ctx.error("subscript dimension " + std::to_string(d) + " of input " +
                         std::to_string(i) + " does not match " +
                         std::to_string(prob.dims[size_t(id)]));
      }
      prob.dims[size_t(id)] = d;
      dim_set[size_t(id)] = true;
      // A repeated subscript walks the diagonal: its strides add up.
      auto at = std::find(op.ids.begin(), op.ids.end(), id);
      if (at == op.ids.end()) {
        op.ids.push_back(id);
        op.strides.push_back(st[ax]);
      } else {
        op.strides[size_t(at - op.ids.begin())] += st[ax];
      }
      return ok_status();
    };
    for (int l : in_terms[size_t(i)].labels) {
      if (l < 0) {
        int64_t e = ell_rank[size_t(i)];
        for (int64_t k = 0; k < e; ++k) OP_RETURN_IF_ERROR(bind(int(ell - e + k), axis++));
      } else {
        OP_RETURN_IF_ERROR(bind(letter_id[l], axis++));
      }
    }
    prob.operands.push_back(std::move(op));
  }
  // Output ids.
  std::vector<int>& out_ids = prob.out_ids;
  if (arrow != std::string::npos) {
    OP_ASSIGN_OR_RETURN(Term t, parse_term(ctx, eq.substr(arrow + 2)));
    std::vector<bool> used(size_t(ids), false);
    for (int l : t.labels) {
      if (l < 0) {
        for (int k = 0; k < int(ell); ++k) out_ids.push_back(k);
      } else {
        if (!letter_id.count(l))
          return ctx.error("output subscript '" + std::string(1, char(l)) +
                           "' is not in any input");
        if (used[size_t(letter_id[l])])
          return ctx.error("output subscript '" + std::string(1, char(l)) + "' is repeated");
        used[size_t(letter_id[l])] = true;
        out_ids.push_back(letter_id[l]);
      }
    }
  } else {
    for (int k = 0; k < int(ell); ++k) out_ids.push_back(k);
    for (const auto& [l, id] : letter_id) {  // std::map: alphabetical (upper case first)
      if (letter_count[l] == 1) out_ids.push_back(id);
    }
  }
  Shape out;
  for (int id : out_ids) out.push_back(prob.dims[size_t(id)]);
  OP_RETURN_IF_ERROR(checked_tensor_bytes(dt, out, ctx.where() + ": Einsum output").status());
  ctx.set_output(0, dt, out);
  auto plan = std::make_shared<EinsumPlan>(plan_einsum(prob, dt == kFloat));
  // A node of thousands of operands has an equation of as many terms: errors
  // quote its start.
  const std::string shown = eq.size() > 120 ? eq.substr(0, 120) + "..." : eq;
  // Every intermediate within the memory budget, alone and all live at once.
  for (const auto& shape : plan->buffer_shapes) {
    OP_RETURN_IF_ERROR(
        checked_tensor_bytes(dt, shape, ctx.where() + ": Einsum intermediate").status());
  }
  const uint64_t peak = saturating_mul(plan->peak_scratch_elems, dtype_size(dt));
  if (peak > memory_budget_bytes()) {
    return resource_exhausted(ctx.where() + ": equation '" + shown + "' needs " +
                              std::to_string(peak) + " bytes of intermediates at once, over " +
                              "the memory budget of " + std::to_string(memory_budget_bytes()) +
                              " bytes");
  }
  if (plan->loop_steps > kMaxOperatorSteps) {
    return ctx.error("equation '" + shown + "' takes " + std::to_string(plan->loop_steps) +
                     " scalar steps in its pairwise plan, more than the work bound of 2^32");
  }
  return make_einsum_kernel(dt, std::move(plan), ctx.where());
}

}  // namespace onnx_prepack::runtime::tensor_family
