// The greedy pairwise Einsum planner (einsum_plan.h).
#include "runtime/ops/tensor/einsum_plan.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "runtime/checked_math.h"
#include "runtime/work_budget.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

// Float products with fewer multiply-adds than this run as a loop: packing B
// for the GEMM kernels costs more than it saves on tiny matrices (an outer
// product, the 1 x 1 x 1 product of each element of a Hadamard product).
constexpr uint64_t kMinGemmMacs = 2048;

// Up to this many live terms the greedy choice looks at every pair (cubic in
// the count over the whole plan, so only while it is small); beyond it, at up
// to this many partners of the first live term, found through the lists of
// terms naming each of its subscripts, each list read for at most kMaxScan
// entries: bounded work per step.
constexpr size_t kFullSearchTerms = 64;
constexpr size_t kMaxScan = 1024;

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
// Counts saturate: a walk past 2^63 elements is refused by the budgets.
bool contiguous(const EinsumWalk& w) {
  uint64_t s = 1;
  for (size_t j = w.dims.size(); j-- > 0;) {
    if (w.dims[j] != 1 && uint64_t(w.strides[j]) != s) return false;
    s = saturating_mul(s, uint64_t(w.dims[j]));
  }
  return true;
}

class Planner {
 public:
  Planner(const EinsumProblem& p, bool float_gemm) : p_(p), float_gemm_(float_gemm) {
    in_out_.assign(p.dims.size(), false);
    for (int id : p.out_ids) in_out_[size_t(id)] = true;
    live_count_.assign(p.dims.size(), 0);
    id_terms_.assign(p.dims.size(), {});
    id_head_.assign(p.dims.size(), 0);
  }

  EinsumPlan plan() {
    if (p_.operands.size() == 1) {
      plan_single();
    } else {
      reduce_lonely_subscripts();
      while (alive_count_ > 1) {
        auto [i, j] = cheapest_pair();
        contract(i, j);
      }
      const Term& t = terms_[first_alive()];
      if (t.src.input >= 0 || t.src.buffer >= 0) add_reduce(t, p_.out_ids, {}, -1);
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

  // An intermediate's term: contiguous in `ids` order. Strides saturate
  // below 2^63 (such a buffer is refused by the budgets before any run).
  Term buffer_term(int buffer, const std::vector<int>& ids) const {
    Term t;
    t.src.buffer = buffer;
    t.ids = ids;
    t.strides.assign(ids.size(), 0);
    uint64_t s = 1;
    for (size_t j = ids.size(); j-- > 0;) {
      t.strides[j] = int64_t(std::min<uint64_t>(s, uint64_t(INT64_MAX)));
      s = saturating_mul(s, uint64_t(p_.dims[size_t(ids[j])]));
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
      add_term(std::move(t));
    }
  }

  void add_term(Term t) {
    const size_t slot = terms_.size();
    for (int id : t.ids) {
      ++live_count_[size_t(id)];
      id_terms_[size_t(id)].push_back(slot);
    }
    terms_.push_back(std::move(t));
    alive_.push_back(true);
    seen_.push_back(0);
    ++alive_count_;
  }

  void retire(size_t slot) {
    for (int id : terms_[slot].ids) --live_count_[size_t(id)];
    alive_[slot] = false;
    --alive_count_;
  }

  size_t first_alive() {
    while (!alive_[first_alive_]) ++first_alive_;
    return first_alive_;
  }

  // Whether `id` is still needed once terms i and j are contracted.
  bool needed_after(size_t i, size_t j, int id) const {
    int others = live_count_[size_t(id)] - int(has(terms_[i], id)) - int(has(terms_[j], id));
    return in_out_[size_t(id)] || others > 0;
  }

  // The pair's result size and multiply-adds.
  std::pair<uint64_t, uint64_t> score(size_t i, size_t j) const {
    uint64_t size = 1, cost = 1;
    auto visit = [&](int id) {
      uint64_t d = uint64_t(p_.dims[size_t(id)]);
      cost = saturating_mul(cost, d);
      if (needed_after(i, j, id)) size = saturating_mul(size, d);
    };
    for (int id : terms_[i].ids) visit(id);
    for (int id : terms_[j].ids) {
      if (!has(terms_[i], id)) visit(id);
    }
    return {size, cost};
  }

  // Up to kFullSearchTerms live partners of `i` that share a subscript with
  // it, else the next live term. Each subscript's list is read from its first
  // live entry and for at most kMaxScan entries: bounded work per step.
  std::vector<size_t> partners(size_t i) {
    std::vector<size_t> out;
    ++stamp_;
    seen_[i] = stamp_;
    for (int id : terms_[i].ids) {
      const auto& list = id_terms_[size_t(id)];
      size_t& head = id_head_[size_t(id)];
      while (head < list.size() && !alive_[list[head]]) ++head;
      for (size_t q = head; q < list.size() && q < head + kMaxScan; ++q) {
        const size_t t = list[q];
        if (out.size() == kFullSearchTerms) return out;
        if (alive_[t] && seen_[t] != stamp_) {
          seen_[t] = stamp_;
          out.push_back(t);
        }
      }
    }
    if (out.empty()) {
      size_t t = i + 1;
      while (!alive_[t]) ++t;
      out.push_back(t);
    }
    return out;
  }

  // Step 2's greedy choice: the pair with the smallest result, then the fewest
  // multiply-adds, then the first. Past kFullSearchTerms live terms only the
  // first live term's partners are looked at, so that planning stays linear in
  // the operand count (a node may have thousands of inputs).
  std::pair<size_t, size_t> cheapest_pair() {
    std::pair<size_t, size_t> best{0, 0};
    std::pair<uint64_t, uint64_t> best_score{std::numeric_limits<uint64_t>::max(),
                                             std::numeric_limits<uint64_t>::max()};
    auto consider = [&](size_t i, size_t j) {
      auto sc = score(i, j);
      if (best.first == best.second || sc < best_score) {
        best = {std::min(i, j), std::max(i, j)};
        best_score = sc;
      }
    };
    if (alive_count_ > kFullSearchTerms) {
      const size_t i = first_alive();
      for (size_t j : partners(i)) consider(i, j);
      return best;
    }
    std::vector<size_t> live;
    for (size_t t = first_alive(); t < terms_.size(); ++t) {
      if (alive_[t]) live.push_back(t);
    }
    for (size_t a = 0; a < live.size(); ++a) {
      for (size_t b = a + 1; b < live.size(); ++b) consider(live[a], live[b]);
    }
    return best;
  }

  // Position of `id` in the output (for ordering the last product's result).
  size_t out_pos(int id) const {
    return size_t(std::find(p_.out_ids.begin(), p_.out_ids.end(), id) - p_.out_ids.begin());
  }

  static std::vector<int> cat(std::initializer_list<const std::vector<int>*> parts) {
    std::vector<int> v;
    for (const auto* part : parts) v.insert(v.end(), part->begin(), part->end());
    return v;
  }

  // A product with terms l and r as left and right operands.
  struct Orientation {
    size_t l = 0, r = 0;
    std::vector<int> batch, m_ids, n_ids, k_ids;
    EinsumWalk a_walk, b_walk;
    bool a_copy = false, b_copy = false, b_nk = false, to_output = false;
    uint64_t moved = 0;  // elements copied before the product or permuted after it
  };

  Orientation orient(size_t l, size_t r, bool last) const {
    Orientation o;
    o.l = l;
    o.r = r;
    const Term& lt = terms_[l];
    const Term& rt = terms_[r];
    // A subscript of one side that is not needed later would also be summed
    // here as K with stride 0 on the other side; step 1 leaves none.
    for (int id : lt.ids) {
      bool keep = needed_after(l, r, id);
      (has(rt, id) ? (keep ? o.batch : o.k_ids) : (keep ? o.m_ids : o.k_ids)).push_back(id);
    }
    for (int id : rt.ids) {
      if (!has(lt, id)) (needed_after(l, r, id) ? o.n_ids : o.k_ids).push_back(id);
    }
    if (last) {
      // The output's order within each group, so that the product can often
      // be written to the output as it is.
      auto by_out = [&](int a, int b) { return out_pos(a) < out_pos(b); };
      std::sort(o.batch.begin(), o.batch.end(), by_out);
      std::sort(o.m_ids.begin(), o.m_ids.end(), by_out);
      std::sort(o.n_ids.begin(), o.n_ids.end(), by_out);
    }
    const std::vector<int> a_ids = cat({&o.batch, &o.m_ids, &o.k_ids});
    o.a_walk = walk(lt, a_ids);
    if (!contiguous(o.a_walk)) {
      o.a_copy = true;
      o.moved = saturating_add(o.moved, size_of(a_ids));
    }
    const std::vector<int> b_ids = cat({&o.batch, &o.k_ids, &o.n_ids});
    o.b_walk = walk(rt, b_ids);
    if (!contiguous(o.b_walk)) {
      EinsumWalk nk = walk(rt, cat({&o.batch, &o.n_ids, &o.k_ids}));
      if (contiguous(nk)) {
        o.b_nk = true;
        o.b_walk = nk;
      } else {
        o.b_copy = true;
        o.moved = saturating_add(o.moved, size_of(b_ids));
      }
    }
    const std::vector<int> result = cat({&o.batch, &o.m_ids, &o.n_ids});
    o.to_output = last;
    for (size_t q = 1; q < result.size() && o.to_output; ++q) {
      o.to_output = out_pos(result[q - 1]) < out_pos(result[q]);
    }
    if (last && !o.to_output) o.moved = saturating_add(o.moved, size_of(result));
    return o;
  }

  void contract(size_t i, size_t j) {
    const bool last = alive_count_ == 2;
    // Either term may be the left operand: the one that moves less data.
    Orientation o = orient(i, j, last);
    Orientation swapped = orient(j, i, last);
    if (swapped.moved < o.moved) o = std::move(swapped);
    EinsumStep s;
    s.kind = EinsumStep::kContract;
    s.left = terms_[o.l].src;
    s.right = terms_[o.r].src;
    s.batch = int64_t(size_of(o.batch));
    s.m = int64_t(size_of(o.m_ids));
    s.n = int64_t(size_of(o.n_ids));
    s.k = int64_t(size_of(o.k_ids));
    const uint64_t per_batch = saturating_mul(size_of(o.m_ids), size_of(cat({&o.n_ids, &o.k_ids})));
    const uint64_t macs = saturating_mul(uint64_t(s.batch), per_batch);
    s.gemm = float_gemm_ && s.k >= 2 && per_batch >= kMinGemmMacs;
    s.a_walk = o.a_walk;
    s.b_walk = o.b_walk;
    s.b_nk = o.b_nk;
    if (o.a_copy) s.a_copy = new_buffer(cat({&o.batch, &o.m_ids, &o.k_ids}));
    if (o.b_copy) s.b_copy = new_buffer(cat({&o.batch, &o.k_ids, &o.n_ids}));
    if (s.a_copy >= 0) plan_.buffer_last_use[size_t(s.a_copy)] = int(plan_.steps.size());
    if (s.b_copy >= 0) plan_.buffer_last_use[size_t(s.b_copy)] = int(plan_.steps.size());
    const std::vector<int> result = cat({&o.batch, &o.m_ids, &o.n_ids});
    s.dst = o.to_output ? -1 : new_buffer(result);
    read(s.left);
    read(s.right);
    // Copies count as loop work; a permute after the last product is counted
    // by its own step.
    uint64_t copies = 0;
    if (o.a_copy) copies = saturating_add(copies, size_of(cat({&o.batch, &o.m_ids, &o.k_ids})));
    if (o.b_copy) copies = saturating_add(copies, size_of(cat({&o.batch, &o.k_ids, &o.n_ids})));
    plan_.loop_steps = saturating_add(plan_.loop_steps, copies);
    if (!s.gemm) plan_.loop_steps = saturating_add(plan_.loop_steps, macs);
    const int dst = s.dst;
    plan_.steps.push_back(std::move(s));
    Term t;
    if (dst >= 0) {
      t = buffer_term(dst, result);
    } else {
      t.ids = result;  // the output: nothing left to do
    }
    retire(i);
    retire(j);
    add_term(std::move(t));
  }

  // The most scratch live at once: buffers exist from the step that first
  // writes them to the step that last reads them. Linear in steps + buffers.
  void finish() {
    const size_t nb = plan_.buffer_shapes.size();
    std::vector<int> first(nb, -1);
    std::vector<std::vector<int>> created(plan_.steps.size());
    plan_.step_frees.assign(plan_.steps.size(), {});
    for (size_t s = 0; s < plan_.steps.size(); ++s) {
      const EinsumStep& st = plan_.steps[s];
      for (int b : {st.dst, st.a_copy, st.b_copy}) {
        if (b >= 0 && first[size_t(b)] < 0) {
          first[size_t(b)] = int(s);
          created[s].push_back(b);
        }
      }
    }
    for (size_t b = 0; b < nb; ++b) {
      if (plan_.buffer_last_use[b] >= 0)
        plan_.step_frees[size_t(plan_.buffer_last_use[b])].push_back(int(b));
    }
    // Saturated counts stay saturated: any of them is over every budget.
    uint64_t live = 0;
    for (size_t s = 0; s < plan_.steps.size(); ++s) {
      for (int b : created[s])
        live = saturating_add(live, elems_of(plan_.buffer_shapes[size_t(b)]));
      plan_.peak_scratch_elems = std::max(plan_.peak_scratch_elems, live);
      for (int b : plan_.step_frees[s]) {
        if (live != std::numeric_limits<uint64_t>::max())
          live -= elems_of(plan_.buffer_shapes[size_t(b)]);
      }
    }
  }

  const EinsumProblem& p_;
  bool float_gemm_;
  std::vector<bool> in_out_;
  std::vector<int> live_count_;  // live terms naming each id
  // Every term made so far (operands, then results) and whether it is still
  // to be contracted; a slot keeps its index.
  std::vector<Term> terms_;
  std::vector<bool> alive_;
  size_t alive_count_ = 0, first_alive_ = 0;
  std::vector<std::vector<size_t>> id_terms_;  // slots naming each id (some dead)
  std::vector<size_t> id_head_;                // id_terms_ entries before it are dead
  std::vector<uint64_t> seen_;                 // partners(): visited at `stamp_`
  uint64_t stamp_ = 0;
  EinsumPlan plan_;
};

}  // namespace

EinsumPlan plan_einsum(const EinsumProblem& p, bool float_gemm) {
  return Planner(p, float_gemm).plan();
}

}  // namespace onnx_prepack::runtime::tensor_family
