// Einsum: any equation (explicit or implicit output, "..." broadcasting,
// repeated subscripts for diagonals, sums over subscripts that leave the
// output). Two float operands whose summed subscripts are in both run as a
// batched matrix product (gemm_f32); any other form as one loop over the
// output's and the summed subscripts' index space, with each operand's offset
// kept incrementally.
#include <map>
#include <type_traits>

#include "runtime/ops/dispatch.h"
#include "runtime/ops/linalg/gemm.h"
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

// The loop: ids 0..E-1 are the ellipsis dims, the rest letters.
struct EinsumPlan {
  std::vector<int64_t> dims;                 // per id
  std::vector<std::vector<int64_t>> stride;  // per operand, per id (0: not used/broadcast)
  int64_t out_ids = 0;                       // ids [0, out_ids) are the output's, in order
  std::vector<int> order;                    // output ids first, then summed ids
};

// Copies the elements of `src` visited by an odometer over `dims` (with
// source strides `strides`, last fastest) to contiguous `dst`.
void gather_strided(const float* src, float* dst, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& strides) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  size_t r = dims.size();
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t e = 0; e < total; ++e) {
    dst[e] = src[off];
    for (size_t j = r; j-- > 0;) {
      if (++idx[j] < dims[j]) {
        off += strides[j];
        break;
      }
      idx[j] = 0;
      off -= (dims[j] - 1) * strides[j];
    }
  }
}

// Two float operands without diagonals, every summed subscript in both: a
// batched matrix product. A is gathered to [batch, M, K], B to [batch, K, N],
// each batch multiplied with gemm_f32 (ops/linalg/gemm.h), the result scattered to
// the output's order. Null when the equation has another form.
std::unique_ptr<Kernel> contraction_kernel(const EinsumPlan& plan,
                                           const std::vector<std::vector<int>>& uses,
                                           const std::vector<int>& out_ids) {
  size_t ids = plan.dims.size();
  std::vector<bool> in_out(ids, false);
  for (int id : out_ids) in_out[size_t(id)] = true;
  std::vector<int> batch, m_ids, n_ids, k_ids;
  for (int id : out_ids) {
    bool a = uses[0][size_t(id)] > 0, b = uses[1][size_t(id)] > 0;
    (a && b ? batch : a ? m_ids : n_ids).push_back(id);
  }
  for (size_t id = 0; id < ids; ++id) {
    if (in_out[id]) continue;
    bool a = uses[0][id] > 0, b = uses[1][id] > 0;
    if (!(a && b)) return nullptr;  // summed in one operand only
    k_ids.push_back(int(id));
  }
  auto size_of = [&](const std::vector<int>& v) {
    int64_t p = 1;
    for (int id : v) p *= plan.dims[size_t(id)];
    return p;
  };
  int64_t nb = size_of(batch), m = size_of(m_ids), nn = size_of(n_ids), kk = size_of(k_ids);
  auto order = [&](std::initializer_list<const std::vector<int>*> parts, int operand,
                   std::vector<int64_t>* dims, std::vector<int64_t>* strides) {
    for (const auto* part : parts) {
      for (int id : *part) {
        dims->push_back(plan.dims[size_t(id)]);
        strides->push_back(operand < 0 ? 0 : plan.stride[size_t(operand)][size_t(id)]);
      }
    }
  };
  std::vector<int64_t> a_dims, a_str, b_dims, b_str, c_dims, c_str;
  order({&batch, &m_ids, &k_ids}, 0, &a_dims, &a_str);
  order({&batch, &k_ids, &n_ids}, 1, &b_dims, &b_str);
  // Output strides of C's [batch, M, N] order.
  std::vector<int64_t> out_stride(ids, 0);
  int64_t s = 1;
  for (size_t j = out_ids.size(); j-- > 0;) {
    out_stride[size_t(out_ids[j])] = s;
    s *= plan.dims[size_t(out_ids[j])];
  }
  for (const auto* part : {&batch, &m_ids, &n_ids}) {
    for (int id : *part) {
      c_dims.push_back(plan.dims[size_t(id)]);
      c_str.push_back(out_stride[size_t(id)]);
    }
  }
  return std::make_unique<FnKernel>([=](const KernelIO& io) {
    float* out = static_cast<float*>(io.out[0]);
    int64_t total = nb * m * nn;
    if (total == 0) return;
    std::vector<float> a(static_cast<size_t>(nb * m * kk)), b(static_cast<size_t>(nb * kk * nn)),
        c(static_cast<size_t>(total));
    gather_strided(static_cast<const float*>(io.in[0]), a.data(), a_dims, a_str);
    gather_strided(static_cast<const float*>(io.in[1]), b.data(), b_dims, b_str);
    for (int64_t t = 0; t < nb; ++t) {
      float* ct = c.data() + t * m * nn;
      if (kk == 0) {
        std::fill(ct, ct + m * nn, 0.0f);
        continue;
      }
      gemm_f32(size_t(m), size_t(nn), size_t(kk), a.data() + t * m * kk, size_t(kk),
               b.data() + t * kk * nn, kernels::PackSourceLayout::kKN, ct, size_t(nn), false,
               io.workspace, 0, io.pool);
    }
    // Scatter C to the output order (the inverse of a strided gather).
    size_t r = c_dims.size();
    std::vector<int64_t> idx(r, 0);
    int64_t off = 0;
    for (int64_t e = 0; e < total; ++e) {
      out[off] = c[size_t(e)];
      for (size_t j = r; j-- > 0;) {
        if (++idx[j] < c_dims[j]) {
          off += c_str[j];
          break;
        }
        idx[j] = 0;
        off -= (c_dims[j] - 1) * c_str[j];
      }
    }
  });
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
  EinsumPlan plan;
  plan.dims.assign(size_t(ids), 1);
  std::vector<bool> dim_set(size_t(ids), false);
  plan.stride.assign(size_t(n), std::vector<int64_t>(size_t(ids), 0));
  // How often each operand names each id (a broadcast ellipsis dim counts).
  std::vector<std::vector<int>> uses(size_t(n), std::vector<int>(size_t(ids), 0));
  bool repeated = false;  // a subscript repeated within one operand (diagonal)
  for (int i = 0; i < n; ++i) {
    const Shape& shape = ctx.input(i).shape;
    std::vector<int64_t> st = strides_of(shape);
    size_t axis = 0;
    auto bind = [&](int id, size_t ax) -> Status {
      int64_t d = shape[ax];
      if (uses[size_t(i)][size_t(id)]++ > 0) repeated = true;
      if (id < int(ell) && d == 1) return ok_status();  // broadcast ellipsis dim: stride 0
      if (dim_set[size_t(id)] && plan.dims[size_t(id)] != d) {
        return ctx.error("subscript dimension " + std::to_string(d) + " of input " +
                         std::to_string(i) + " does not match " +
                         std::to_string(plan.dims[size_t(id)]));
      }
      plan.dims[size_t(id)] = d;
      dim_set[size_t(id)] = true;
      plan.stride[size_t(i)][size_t(id)] += st[ax];
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
  }
  // Output ids.
  std::vector<int> out_ids;
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
  std::vector<bool> in_out(size_t(ids), false);
  for (int id : out_ids) in_out[size_t(id)] = true;
  plan.order = out_ids;
  plan.out_ids = int64_t(out_ids.size());
  for (int id = 0; id < ids; ++id) {
    if (!in_out[size_t(id)]) plan.order.push_back(id);
  }
  Shape out;
  for (int id : out_ids) out.push_back(plan.dims[size_t(id)]);
  ctx.set_output(0, dt, out);
  if (n == 2 && dt == kFloat && !repeated) {
    if (auto k = contraction_kernel(plan, uses, out_ids)) return k;
  }
  // The direct loop visits every combination of subscripts: refuse what would
  // not finish rather than hang.
  // Each combination reads every operand: the bound counts those reads.
  uint64_t steps = uint64_t(n);
  for (int64_t d : plan.dims) steps = saturating_mul(steps, uint64_t(std::max<int64_t>(d, 1)));
  if (steps > kMaxOperatorSteps) {
    return ctx.error("equation '" + eq + "' takes more than the work bound of 2^32 operand " +
                     "reads in the direct loop");
  }
  std::unique_ptr<Kernel> k;
  dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double,
                                   std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
    k = std::make_unique<FnKernel>([plan, n, where = ctx.where()](const KernelIO& io) {
      size_t m = plan.order.size();
      int64_t out_count = 1, sum_count = 1;
      for (size_t j = 0; j < m; ++j) {
        (int64_t(j) < plan.out_ids ? out_count : sum_count) *= plan.dims[size_t(plan.order[j])];
      }
      T* o = static_cast<T*>(io.out[0]);
      if (out_count == 0) return;
      std::vector<int64_t> idx(m, 0), off(size_t(n), 0);
      std::vector<const T*> src(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) src[size_t(i)] = static_cast<const T*>(io.in[size_t(i)]);
      // Advances the odometer over order[from, to) by one; false when it wraps
      // (all of them back at 0).
      auto advance = [&](size_t from, size_t to) {
        for (size_t j = to; j-- > from;) {
          int id = plan.order[j];
          int64_t d = plan.dims[size_t(id)];
          if (++idx[j] < d) {
            for (int i = 0; i < n; ++i) off[size_t(i)] += plan.stride[size_t(i)][size_t(id)];
            return true;
          }
          idx[j] = 0;
          for (int i = 0; i < n; ++i)
            off[size_t(i)] -= (d - 1) * plan.stride[size_t(i)][size_t(id)];
        }
        return false;
      };
      size_t split = size_t(plan.out_ids);
      // Up to 2^32 combinations (seconds): with run limits the loop polls
      // them; without, it is compiled without the poll (which costs ~15% of
      // this loop).
      StepPoller poll(io.limits);
      auto combine = [&](auto polled) {
        for (int64_t e = 0; e < out_count; ++e) {
          Acc acc = 0;
          if (sum_count > 0) {
            do {
              if constexpr (decltype(polled)::value) {
                if (poll.charge(1)) return false;
              }
              Acc prod = 1;
              for (int i = 0; i < n; ++i) prod *= Acc(src[size_t(i)][off[size_t(i)]]);
              acc += prod;
            } while (advance(split, m));
          }
          o[e] = T(acc);
          advance(0, split);
        }
        return true;
      };
      const bool polled = io.limits != nullptr && io.limits->active();
      if (polled ? !combine(std::true_type{}) : !combine(std::false_type{}))
        report_failure(io, io.limits->stop_status(where));
    });
  });
  return k;
}

}  // namespace onnx_prepack::runtime::tensor_family
