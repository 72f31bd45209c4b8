// The greedy pairwise Einsum planner (einsum_plan.h).
#include "runtime/ops/tensor/einsum_plan.h"

#include <algorithm>
#include <limits>

#include "runtime/work_budget.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// Float products with fewer multiply-adds than this run as a loop: packing B
// for the GEMM kernels costs more than it saves on tiny matrices (an outer
// product, the 1 x 1 x 1 product of each element of a Hadamard product).
constexpr uint64_t kMinGemmMacs = 2048;

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

uint64_t elems_of(const std::vector<int64_t>& shape) {
  uint64_t e = 1;
  for (int64_t d : shape) e = saturating_mul(e, uint64_t(d));
  return e;
}

// An operand or intermediate still to be contracted.
struct Term {
  EinsumSource src;
  std::vector<int> ids;
  std::vector<int64_t> strides;
};

bool has(const Term& t, int id) { return std::find(t.ids.begin(), t.ids.end(), id) != t.ids.end(); }

int64_t stride_in(const Term& t, int id) {
  for (size_t j = 0; j < t.ids.size(); ++j) {
    if (t.ids[j] == id) return t.strides[j];
  }
  return 0;  // absent: a dimension of size 1 (or one the other operand broadcasts)
}

// True when the walk reads its source in order (dimensions of size 1 aside).
bool contiguous(const EinsumWalk& w) {
  int64_t s = 1;
  for (size_t j = w.dims.size(); j-- > 0;) {
    if (w.dims[j] != 1 && w.strides[j] != s) return false;
    s *= w.dims[j];
  }
  return true;
}

class Planner {
 public:
  Planner(const EinsumProblem& p, bool float_gemm) : p_(p), float_gemm_(float_gemm) {
    in_out_.assign(p.dims.size(), false);
    for (int id : p.out_ids) in_out_[size_t(id)] = true;
    live_count_.assign(p.dims.size(), 0);
  }

  EinsumPlan plan() {
    if (p_.operands.size() == 1) {
      plan_single();
    } else {
      reduce_lonely_subscripts();
      while (live_.size() > 1) {
        auto [i, j] = cheapest_pair();
        contract(i, j);
      }
      if (live_[0].src.input >= 0 || live_[0].src.buffer >= 0) {
        const Term& t = live_[0];
        add_reduce(t, p_.out_ids, {}, -1);
      }
    }
    finish();
    return std::move(plan_);
  }

 private:
  uint64_t size_of(const std::vector<int>& ids) const {
    uint64_t s = 1;
    for (int id : ids) s = saturating_mul(s, uint64_t(p_.dims[size_t(id)]));
    return s;
  }

  EinsumWalk walk(const Term& t, const std::vector<int>& ids) const {
    EinsumWalk w;
    for (int id : ids) {
      w.dims.push_back(p_.dims[size_t(id)]);
      w.strides.push_back(stride_in(t, id));
    }
    return w;
  }

  int new_buffer(const std::vector<int>& ids) {
    std::vector<int64_t> shape;
    for (int id : ids) shape.push_back(p_.dims[size_t(id)]);
    plan_.buffer_shapes.push_back(shape);
    plan_.buffer_last_use.push_back(-1);
    return int(plan_.buffer_shapes.size()) - 1;
  }

  // The step about to be added reads `s`.
  void read(const EinsumSource& s) {
    if (s.buffer >= 0) plan_.buffer_last_use[size_t(s.buffer)] = int(plan_.steps.size());
  }

  // An intermediate's term: contiguous in `ids` order.
  Term buffer_term(int buffer, const std::vector<int>& ids) const {
    Term t;
    t.src.buffer = buffer;
    t.ids = ids;
    t.strides.assign(ids.size(), 0);
    int64_t s = 1;
    for (size_t j = ids.size(); j-- > 0;) {
      t.strides[j] = s;
      s *= p_.dims[size_t(ids[j])];
    }
    return t;
  }

  // dst (-1: the output) over `kept` = the sum over `summed` of `t`.
  void add_reduce(const Term& t, const std::vector<int>& kept, const std::vector<int>& summed,
                  int dst) {
    EinsumStep s;
    s.kind = EinsumStep::kReduce;
    s.dst = dst;
    s.src = t.src;
    s.kept = walk(t, kept);
    s.summed = walk(t, summed);
    read(t.src);
    plan_.loop_steps =
        saturating_add(plan_.loop_steps, saturating_mul(size_of(kept), size_of(summed)));
    plan_.steps.push_back(std::move(s));
  }

  // One operand: its sums, diagonals and permutation in one reduction
  // straight into the output.
  void plan_single() {
    const EinsumOperand& op = p_.operands[0];
    Term t{EinsumSource{0, -1}, op.ids, op.strides};
    std::vector<int> summed;
    for (int id : op.ids) {
      if (!in_out_[size_t(id)]) summed.push_back(id);
    }
    add_reduce(t, p_.out_ids, summed, -1);
  }

  // Step 1: a subscript that only one operand names, and not the output, is
  // summed in that operand before any product.
  void reduce_lonely_subscripts() {
    std::vector<int> count(p_.dims.size(), 0);
    for (const auto& op : p_.operands) {
      for (int id : op.ids) ++count[size_t(id)];
    }
    for (size_t i = 0; i < p_.operands.size(); ++i) {
      const EinsumOperand& op = p_.operands[i];
      Term t{EinsumSource{int(i), -1}, op.ids, op.strides};
      std::vector<int> kept, summed;
      for (int id : op.ids) {
        (count[size_t(id)] == 1 && !in_out_[size_t(id)] ? summed : kept).push_back(id);
      }
      if (!summed.empty()) {
        int b = new_buffer(kept);
        add_reduce(t, kept, summed, b);
        t = buffer_term(b, kept);
      }
      for (int id : t.ids) ++live_count_[size_t(id)];
      live_.push_back(std::move(t));
    }
  }

  // Whether `id` is still needed once terms i and j are contracted.
  bool needed_after(size_t i, size_t j, int id) const {
    int others = live_count_[size_t(id)] - int(has(live_[i], id)) - int(has(live_[j], id));
    return in_out_[size_t(id)] || others > 0;
  }

  // Step 2's greedy choice: the pair with the smallest result, then the fewest
  // multiply-adds, then the first.
  std::pair<size_t, size_t> cheapest_pair() const {
    std::pair<size_t, size_t> best{0, 1};
    uint64_t best_size = std::numeric_limits<uint64_t>::max(), best_cost = best_size;
    for (size_t i = 0; i < live_.size(); ++i) {
      for (size_t j = i + 1; j < live_.size(); ++j) {
        uint64_t size = 1, cost = 1;
        auto visit = [&](int id) {
          uint64_t d = uint64_t(p_.dims[size_t(id)]);
          cost = saturating_mul(cost, d);
          if (needed_after(i, j, id)) size = saturating_mul(size, d);
        };
        for (int id : live_[i].ids) visit(id);
        for (int id : live_[j].ids) {
          if (!has(live_[i], id)) visit(id);
        }
        if (size < best_size || (size == best_size && cost < best_cost)) {
          best = {i, j};
          best_size = size;
          best_cost = cost;
        }
      }
    }
    return best;
  }

  // Position of `id` in the output (for ordering the last product's result).
  size_t out_pos(int id) const {
    return size_t(std::find(p_.out_ids.begin(), p_.out_ids.end(), id) - p_.out_ids.begin());
  }

  void contract(size_t i, size_t j) {
    const Term& l = live_[i];
    const Term& r = live_[j];
    const bool last = live_.size() == 2;
    std::vector<int> batch, m_ids, n_ids, k_ids;
    // A subscript of one side that is not needed later would also be summed
    // here as K with stride 0 on the other side; step 1 leaves none.
    for (int id : l.ids) {
      bool keep = needed_after(i, j, id);
      (has(r, id) ? (keep ? batch : k_ids) : (keep ? m_ids : k_ids)).push_back(id);
    }
    for (int id : r.ids) {
      if (!has(l, id)) (needed_after(i, j, id) ? n_ids : k_ids).push_back(id);
    }
    if (last) {
      // The output's order within each group, so that the product can often
      // be written to the output as it is.
      auto by_out = [&](int a, int b) { return out_pos(a) < out_pos(b); };
      std::sort(batch.begin(), batch.end(), by_out);
      std::sort(m_ids.begin(), m_ids.end(), by_out);
      std::sort(n_ids.begin(), n_ids.end(), by_out);
    }
    auto cat = [](std::initializer_list<const std::vector<int>*> parts) {
      std::vector<int> v;
      for (const auto* part : parts) v.insert(v.end(), part->begin(), part->end());
      return v;
    };
    EinsumStep s;
    s.kind = EinsumStep::kContract;
    s.left = l.src;
    s.right = r.src;
    s.batch = int64_t(size_of(batch));
    s.m = int64_t(size_of(m_ids));
    s.n = int64_t(size_of(n_ids));
    s.k = int64_t(size_of(k_ids));
    const uint64_t per_batch = saturating_mul(size_of(m_ids), size_of(cat({&n_ids, &k_ids})));
    const uint64_t macs = saturating_mul(uint64_t(s.batch), per_batch);
    s.gemm = float_gemm_ && s.k >= 2 && per_batch >= kMinGemmMacs;
    uint64_t copies = 0;
    s.a_walk = walk(l, cat({&batch, &m_ids, &k_ids}));
    if (!contiguous(s.a_walk)) {
      s.a_copy = new_buffer(cat({&batch, &m_ids, &k_ids}));
      copies += size_of(cat({&batch, &m_ids, &k_ids}));
    }
    s.b_walk = walk(r, cat({&batch, &k_ids, &n_ids}));
    if (!contiguous(s.b_walk)) {
      EinsumWalk nk = walk(r, cat({&batch, &n_ids, &k_ids}));
      if (contiguous(nk)) {
        s.b_nk = true;
        s.b_walk = nk;
      } else {
        s.b_copy = new_buffer(cat({&batch, &k_ids, &n_ids}));
        copies += size_of(cat({&batch, &k_ids, &n_ids}));
      }
    }
    if (s.a_copy >= 0) plan_.buffer_last_use[size_t(s.a_copy)] = int(plan_.steps.size());
    if (s.b_copy >= 0) plan_.buffer_last_use[size_t(s.b_copy)] = int(plan_.steps.size());
    const std::vector<int> result = cat({&batch, &m_ids, &n_ids});
    bool in_output_order = last;
    for (size_t q = 1; q < result.size() && in_output_order; ++q) {
      in_output_order = out_pos(result[q - 1]) < out_pos(result[q]);
    }
    s.dst = in_output_order ? -1 : new_buffer(result);
    read(l.src);
    read(r.src);
    plan_.loop_steps = saturating_add(plan_.loop_steps, copies);
    if (s.gemm) {
      plan_.gemm_macs = saturating_add(plan_.gemm_macs, macs);
    } else {
      plan_.loop_steps = saturating_add(plan_.loop_steps, macs);
    }
    const int dst = s.dst;
    plan_.steps.push_back(std::move(s));
    Term t;
    if (dst >= 0) {
      t = buffer_term(dst, result);
    } else {
      t.ids = result;  // the output: nothing left to do
    }
    for (int id : live_[i].ids) --live_count_[size_t(id)];
    for (int id : live_[j].ids) --live_count_[size_t(id)];
    for (int id : t.ids) ++live_count_[size_t(id)];
    live_.erase(live_.begin() + std::ptrdiff_t(j));  // j > i: erase it first
    live_.erase(live_.begin() + std::ptrdiff_t(i));
    live_.push_back(std::move(t));
  }

  // The most scratch live at once: buffers exist from the step that first
  // writes them to the step that last reads them.
  void finish() {
    const size_t nb = plan_.buffer_shapes.size();
    std::vector<int> first(nb, -1);
    for (size_t s = 0; s < plan_.steps.size(); ++s) {
      const EinsumStep& st = plan_.steps[s];
      for (int b : {st.dst, st.a_copy, st.b_copy}) {
        if (b >= 0 && first[size_t(b)] < 0) first[size_t(b)] = int(s);
      }
    }
    // Saturated counts stay saturated: any of them is over every budget.
    uint64_t live = 0;
    for (size_t s = 0; s < plan_.steps.size(); ++s) {
      for (size_t b = 0; b < nb; ++b) {
        if (first[b] == int(s)) live = saturating_add(live, elems_of(plan_.buffer_shapes[b]));
      }
      plan_.peak_scratch_elems = std::max(plan_.peak_scratch_elems, live);
      for (size_t b = 0; b < nb; ++b) {
        if (plan_.buffer_last_use[b] == int(s) && live != std::numeric_limits<uint64_t>::max())
          live -= elems_of(plan_.buffer_shapes[b]);
      }
    }
  }

  const EinsumProblem& p_;
  bool float_gemm_;
  std::vector<bool> in_out_;
  std::vector<int> live_count_;  // live terms naming each id
  std::vector<Term> live_;
  EinsumPlan plan_;
};

}  // namespace

EinsumPlan plan_einsum(const EinsumProblem& p, bool float_gemm) {
  return Planner(p, float_gemm).plan();
}

}  // namespace onnx_prepack::runtime::tensor_family
