// Session::fuse_attention: the standard-op attention subgraph (attention_fusion.h)
// becomes one step that runs attention::attend_head per (batch, query head), the
// core the attention operators share. Runs on the built steps after
// fuse_patterns and before the elementwise fusion passes (which would otherwise
// take the scale Mul and the mask Add); the fused step sits at the position of
// the pattern's last step (the MatMul with V) and carries a label, so later
// passes leave it alone.
#include "runtime/attention_fusion.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>

#include "runtime/kernel.h"
#include "runtime/norm_gelu_fusion.h"
#include "runtime/ops/attention/attention_core.h"
#include "runtime/ops/dispatch.h"
#include "runtime/session.h"
#include "runtime/session_state.h"

namespace onnx_prepack::runtime {
namespace {

using Value = Session::Value;
using Step = Session::Step;

struct AttnDims {
  int64_t B = 0, Nq = 0, Nkv = 0, S = 0, T = 0, D = 0, Dv = 0;
  float scale = 1.0f;
  bool mask = false;
  bool k_btnd = false;  // K is [B, T, Nkv, D] (the Transpose by 0,2,3,1 of a BERT export)
  // Q is [B, S, Nq, D], V [B, T, Nkv, Dv], the output [B, S, Nq, Dv]: the Transposes by
  // 0,2,1,3 around a BERT export's attention, read and written in place.
  bool q_bsnd = false, v_btnd = false, out_bsnd = false;
  int64_t ms[3] = {0, 0, 0};  // the mask's element strides over b, query head, query row
};

// Q [B, Nq, S, D], K [B, Nkv, T, D], V [B, Nkv, T, Dv], mask (or null) -> [B, Nq, S, Dv].
class FusedAttentionKernel final : public Kernel {
 public:
  explicit FusedAttentionKernel(AttnDims d) : d_(d) {}
  void run(const KernelIO& io) const override {
    const AttnDims& d = d_;
    const float* Q = static_cast<const float*>(io.in[0]);
    const float* K = static_cast<const float*>(io.in[1]);
    const float* V = static_cast<const float*>(io.in[2]);
    const float* M = d.mask ? static_cast<const float*>(io.in[3]) : nullptr;
    float* Y = static_cast<float*>(io.out[0]);
    const int64_t group = d.Nq / d.Nkv;
    parallel_range(io.pool, d.B * d.Nq, 1, [&](int64_t i0, int64_t i1) {
      attention::HeadParams hp;
      hp.rows = d.S;
      hp.head_size = d.D;
      hp.v_size = d.Dv;
      hp.keys = d.T;
      hp.scale = d.scale;
      hp.all_masked_nan = true;
      std::vector<float> scratch(size_t(attention::head_scratch_floats(hp)));
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / d.Nq, n = i % d.Nq, kv = b * d.Nkv + n / group;
        const float* bias = M ? M + b * d.ms[0] + n * d.ms[1] : nullptr;
        const float* k = d.k_btnd ? K + (b * d.T * d.Nkv + n / group) * d.D : K + kv * d.T * d.D;
        const float* q = d.q_bsnd ? Q + (b * d.S * d.Nq + n) * d.D : Q + i * d.S * d.D;
        const float* v = d.v_btnd ? V + (b * d.T * d.Nkv + n / group) * d.Dv : V + kv * d.T * d.Dv;
        float* y = d.out_bsnd ? Y + (b * d.S * d.Nq + n) * d.Dv : Y + i * d.S * d.Dv;
        attention::attend_head(hp, q, d.q_bsnd ? d.Nq * d.D : d.D, k, d.k_btnd ? d.Nkv * d.D : d.D,
                               v, d.v_btnd ? d.Nkv * d.Dv : d.Dv, bias, d.ms[2], y,
                               d.out_bsnd ? d.Nq * d.Dv : d.Dv, scratch.data());
      }
    });
  }

 private:
  AttnDims d_;
};

struct Match {
  std::vector<int> steps;
  int q = -1, k = -1, v = -1, mask = -1, out = -1;
  double scale = 1.0;
  AttnDims dims;
};

class Matcher {
 public:
  Matcher(const std::vector<Value>& values, const std::vector<Step>& steps,
          const onnx::GraphProto& graph, const std::vector<bool>& is_output,
          const std::set<std::string>& half_chain, int opset)
      : values_(values),
        steps_(steps),
        graph_(graph),
        is_output_(is_output),
        half_chain_(half_chain),
        opset_(opset) {
    readers_.assign(values.size(), {});
    for (int si = 0; si < int(steps.size()); ++si) {
      for (int id : steps[size_t(si)].in) {
        if (id < 0) continue;
        auto& r = readers_[size_t(root(id))];
        if (r.empty() || r.back() != si) r.push_back(si);
      }
    }
  }

  int root(int id) const {
    const int a = values_[size_t(id)].alias_of;
    return a >= 0 ? a : id;
  }
  // The op type of a plain step with one float output, or "".
  std::string_view op(int si) const {
    if (si < 0 || si >= int(steps_.size())) return "";
    const Step& st = steps_[size_t(si)];
    if (st.kernel == nullptr || st.label != nullptr || st.out.size() != 1 || st.out[0] < 0)
      return "";
    const onnx::NodeProto& n = graph_.node(st.node);
    if (!n.domain().empty() && n.domain() != "ai.onnx") return "";
    if (!is_float(st.out[0])) return "";
    return n.op_type();
  }
  const onnx::NodeProto& node(int si) const { return graph_.node(steps_[size_t(si)].node); }
  int out(int si) const { return steps_[size_t(si)].out[0]; }
  const std::vector<int>& in(int si) const { return steps_[size_t(si)].in; }
  const Shape& shape(int id) const { return values_[size_t(id)].desc.shape; }
  bool is_float(int id) const {
    const Value& v = values_[size_t(id)];
    return v.desc.dtype == kFloat && v.desc.model_dtype == kUndefined &&
           half_chain_.count(v.name) == 0;
  }
  // A value computed inside the pattern: its own storage, no graph output, read
  // (itself or through an alias) by one step alone.
  bool inner(int id) const {
    const Value& v = values_[size_t(id)];
    return v.runtime && !v.constant && v.alias_of < 0 && !is_output_[size_t(id)] &&
           readers_[size_t(id)].size() == 1 && is_float(id);
  }
  // The step writing inner value `id`, when it is a plain `op` step.
  int producer(int id, std::string_view want) const {
    if (id < 0 || !inner(id)) return -1;
    const int si = values_[size_t(id)].def;
    return si >= 0 && op(si) == want && out(si) == id ? si : -1;
  }
  // The one reader of inner value `id`, when it is a plain `op` step reading `id` once.
  int reader(int id, std::string_view want) const {
    if (id < 0 || !inner(id)) return -1;
    const int si = readers_[size_t(id)][0];
    if (op(si) != want || std::count(in(si).begin(), in(si).end(), id) != 1) return -1;
    return si;
  }
  // A float constant of one element, as double.
  std::optional<double> scalar(int id) const {
    if (id < 0) return std::nullopt;
    const Value& v = values_[size_t(id)];
    if (!v.constant || v.runtime || v.constant->numel() != 1 || !is_float(id) ||
        v.desc.shape.size() > 4)
      return std::nullopt;
    const double c = double(*static_cast<const float*>(v.constant->data()));
    if (!std::isfinite(c)) return std::nullopt;
    return c;
  }
  // Strips Mul(x, c) / Mul(c, x) / Div(x, c) by float constants off inner value
  // `id`, folding them into `m.scale`.
  int strip_scale(int id, Match& m) const {
    for (int round = 0; round < 2; ++round) {
      int si = producer(id, "Mul");
      if (si >= 0 && in(si).size() == 2) {
        for (int k = 0; k < 2; ++k) {
          const int x = in(si)[size_t(k)], c = in(si)[size_t(1 - k)];
          auto s = scalar(c);
          if (s && x >= 0 && shape(x) == shape(id) && x != c) {
            m.scale *= *s;
            m.steps.push_back(si);
            id = x;
            break;
          }
        }
        if (id != out(si)) continue;
        return id;
      }
      si = producer(id, "Div");
      if (si >= 0 && in(si).size() == 2 && in(si)[0] >= 0 && shape(in(si)[0]) == shape(id)) {
        auto s = scalar(in(si)[1]);
        if (s && *s != 0.0) {
          m.scale /= *s;
          m.steps.push_back(si);
          id = in(si)[0];
          continue;
        }
      }
      return id;
    }
    return id;
  }
  // K or V as the MatMul reads it ([B, N, T, D]); strips repeat_kv (Unsqueeze(2) ->
  // Expand [B, Nkv, rep, T, D] -> Reshape [B, Nkv * rep, T, D]) read by `consumer`.
  // The base value and its head count, or {-1, 0}.
  std::pair<int, int64_t> heads(int id, int consumer, Match& m) const {
    if (id < 0) return {-1, 0};
    const Shape& s = shape(id);
    if (s.size() != 4 || !is_float(id)) return {-1, 0};
    int e = -1, reshape = -1;
    if (values_[size_t(id)].alias_of >= 0) {  // Reshape as an alias of the Expand's output
      e = values_[size_t(id)].alias_of;
      if (readers_[size_t(e)].size() != 1 || readers_[size_t(e)][0] != consumer) e = -1;
    } else if ((reshape = producer(id, "Reshape")) >= 0) {
      e = in(reshape)[0];
      if (e < 0 || values_[size_t(e)].alias_of >= 0 || readers_[size_t(e)].size() != 1) e = -1;
    }
    const int ex = e >= 0 && values_[size_t(e)].runtime && values_[size_t(e)].alias_of < 0 &&
                           !is_output_[size_t(e)]
                       ? values_[size_t(e)].def
                       : -1;
    if (ex >= 0 && op(ex) == "Expand" && out(ex) == e && !in(ex).empty() && in(ex)[0] >= 0) {
      const int u = in(ex)[0];
      const Shape &us = shape(u), &es = shape(e);
      if (us.size() == 5 && es.size() == 5 && us[2] == 1 && es[0] == us[0] && es[1] == us[1] &&
          es[3] == us[3] && es[4] == us[4] && es[2] >= 1 && s[0] == us[0] &&
          s[1] == us[1] * es[2] && s[2] == us[3] && s[3] == us[4] && is_float(u)) {
        if (reshape >= 0) m.steps.push_back(reshape);
        m.steps.push_back(ex);
        return {u, us[1]};
      }
    }
    return {id, s[1]};
  }

  // The perm attribute of step `si` (empty when absent).
  std::vector<int64_t> perm(int si) const {
    std::vector<int64_t> p;
    for (const auto& a : node(si).attribute()) {
      if (a.name() == "perm") p.assign(a.ints().begin(), a.ints().end());
    }
    return p;
  }
  // The Transpose step by perm `want` producing inner value `id`, or -1.
  int transpose_producer(int id, const std::vector<int64_t>& want) const {
    const int tr = producer(id, "Transpose");
    if (tr < 0 || in(tr).empty() || in(tr)[0] < 0 || !is_float(in(tr)[0])) return -1;
    return perm(tr) == want ? tr : -1;
  }

  // Softmax axis normalized to the input's rank, or -1.
  int64_t softmax_axis(int si) const {
    int64_t axis = opset_ >= 13 ? -1 : 1;
    for (const auto& a : node(si).attribute()) {
      if (a.name() == "axis") axis = a.i();
    }
    const int64_t r = int64_t(shape(in(si)[0]).size());
    if (axis < 0) axis += r;
    return axis >= 0 && axis < r ? axis : -1;
  }

  std::optional<Match> attention(int sm) const {
    Match m;
    if (in(sm).empty() || in(sm)[0] < 0) return std::nullopt;
    const int x = in(sm)[0];
    const Shape full = shape(x);  // [B, Nq, S, T]
    if (full.size() != 4 || softmax_axis(sm) != 3 || shape(out(sm)) != full) return std::nullopt;
    m.steps.push_back(sm);
    const int mm2 = reader(out(sm), "MatMul");
    if (mm2 < 0 || in(mm2).size() != 2 || in(mm2)[0] != out(sm)) return std::nullopt;
    m.steps.push_back(mm2);
    m.out = out(mm2);
    // The scores: [Add mask] <- [scale] <- MatMul.
    int scores = x;
    if (const int add = producer(x, "Add"); add >= 0 && in(add).size() == 2) {
      scores = -1;
      for (int k = 0; k < 2 && scores < 0; ++k) {
        const int s = in(add)[size_t(k)], mk = in(add)[size_t(1 - k)];
        if (s < 0 || mk < 0 || s == mk || shape(s) != full || !mask_ok(mk, full)) continue;
        Match t = m;
        t.steps.push_back(add);
        const int base = strip_scale(s, t);
        if (producer(base, "MatMul") < 0) continue;
        t.mask = mk;
        m = std::move(t);
        scores = base;
      }
      if (scores < 0) return std::nullopt;
    } else {
      scores = strip_scale(x, m);
    }
    const int mm1 = producer(scores, "MatMul");
    if (mm1 < 0 || in(mm1).size() != 2 || in(mm1)[0] < 0 || in(mm1)[1] < 0) return std::nullopt;
    m.steps.push_back(mm1);
    int q = in(mm1)[0];
    if (inner(q)) q = strip_scale(q, m);
    const std::vector<int64_t> swap12 = {0, 2, 1, 3};
    const int q_logical = q;  // [B, Nq, S, D]
    const int trq = transpose_producer(q, swap12);
    if (trq >= 0) {
      m.steps.push_back(trq);
      q = in(trq)[0];
    }
    int kt = strip_scale(in(mm1)[1], m);
    const int tr = producer(kt, "Transpose");
    if (tr < 0 || in(tr).empty() || in(tr)[0] < 0) return std::nullopt;
    const std::vector<int64_t> k_perm = perm(tr);
    const bool btnd = k_perm == std::vector<int64_t>{0, 2, 3, 1};
    if (k_perm != std::vector<int64_t>{0, 1, 3, 2} && !btnd) return std::nullopt;
    m.steps.push_back(tr);
    int kr = in(tr)[0];
    if (inner(kr)) kr = strip_scale(kr, m);
    // The step reading kr: the Transpose, or the last scale step stripped under it.
    const int kr_reader = m.steps.back();
    const auto [k, nk] = btnd ? std::pair<int, int64_t>{kr, full[1]} : heads(kr, kr_reader, m);
    auto [v, nv] = heads(in(mm2)[1], mm2, m);
    if (k < 0 || v < 0 || !is_float(q)) return std::nullopt;
    int trv = -1;
    if (v == in(mm2)[1] && (trv = transpose_producer(v, swap12)) >= 0) {
      m.steps.push_back(trv);
      v = in(trv)[0];
    }
    // The context transposed back to [B, S, Nq, Dv]: written there directly.
    int tro = -1;
    if (const int r = reader(m.out, "Transpose"); r >= 0 && in(r)[0] == m.out) {
      tro = perm(r) == swap12 ? r : -1;
    }
    // Shapes: Q [B, Nq, S, D], K^T [B, Nq, D, T], V [B, Nq, T, Dv], out [B, Nq, S, Dv].
    const Shape& qs = shape(q_logical);
    const Shape& ks = shape(kr);
    const Shape& vs = shape(in(mm2)[1]);
    AttnDims& d = m.dims;
    if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4) return std::nullopt;
    d.B = full[0];
    d.Nq = full[1];
    d.S = full[2];
    d.T = full[3];
    d.D = qs[3];
    d.Dv = vs[3];
    d.Nkv = nk;
    d.k_btnd = btnd;
    d.q_bsnd = trq >= 0;
    d.v_btnd = trv >= 0;
    const Shape kwant = btnd ? Shape{d.B, d.T, d.Nq, d.D} : Shape{d.B, d.Nq, d.T, d.D};
    if (qs != Shape{d.B, d.Nq, d.S, d.D} || ks != kwant || vs != Shape{d.B, d.Nq, d.T, d.Dv} ||
        shape(m.out) != Shape{d.B, d.Nq, d.S, d.Dv} || nk != nv || nk <= 0 || d.Nq % nk != 0)
      return std::nullopt;
    if (tro >= 0) {
      m.steps.push_back(tro);
      m.out = out(tro);
      d.out_bsnd = true;
    }
    const int last = tro >= 0 ? tro : mm2;
    for (int si : m.steps) {  // every intermediate: its own value, read inside alone
      if (si != last && !inner(out(si))) return std::nullopt;
    }
    if (!std::isfinite(float(m.scale))) return std::nullopt;
    d.scale = float(m.scale);
    if (m.mask >= 0) {
      d.mask = true;
      const auto st = broadcast_strides(shape(m.mask), full);
      d.ms[0] = st[0];
      d.ms[1] = st[1];
      d.ms[2] = st[2];
    }
    m.q = q;
    m.k = k;
    m.v = v;
    return m;
  }

 private:
  // A float mask that broadcasts to `full` without broadcasting along its last axis.
  bool mask_ok(int id, const Shape& full) const {
    const Shape& s = shape(id);
    if (!is_float(id) || s.empty() || s.size() > 4 || s.back() != full.back()) return false;
    auto r = broadcast_shapes(s, full);
    return r.ok() && *r == full;
  }

  const std::vector<Value>& values_;
  const std::vector<Step>& steps_;
  const onnx::GraphProto& graph_;
  const std::vector<bool>& is_output_;
  const std::set<std::string>& half_chain_;
  int opset_;
  std::vector<std::vector<int>> readers_;  // per storage root: the steps reading it or an alias
};

}  // namespace

void Session::fuse_attention() {
  if (!options_.fuse_patterns || pattern_fusion_disabled_by_env() || steps_.size() < 2) return;
  std::vector<bool> is_output(values_.size(), false);
  for (const auto& name : output_names_) {
    const int id = value_index_.at(name);
    is_output[size_t(id)] = true;
    if (values_[size_t(id)].alias_of >= 0) is_output[size_t(values_[size_t(id)].alias_of)] = true;
  }
  Matcher m(values_, steps_, *graph_, is_output, float16_chain_, opset_);
  std::vector<std::pair<int, Step>> placed;
  std::vector<bool> drop(steps_.size(), false);
  for (int si = 0; si < int(steps_.size()); ++si) {
    if (m.op(si) != "Softmax") continue;
    std::optional<Match> p = m.attention(si);
    if (!p) continue;
    if (std::any_of(p->steps.begin(), p->steps.end(), [&](int s) { return drop[size_t(s)]; }))
      continue;
    Step fused;
    const int last = *std::max_element(p->steps.begin(), p->steps.end());
    fused.node = steps_[size_t(last)].node;
    fused.label = "FusedAttention";
    fused.kernel = std::make_unique<FusedAttentionKernel>(p->dims);
    fused.in = {p->q, p->k, p->v, p->mask};
    fused.out = {p->out};
    std::set<int> dead;
    for (int s : p->steps) {
      drop[size_t(s)] = true;
      const int o = steps_[size_t(s)].out[0];
      if (o != p->out) dead.insert(o);
    }
    for (Value& v : values_) {  // the dead values and their aliases: never written
      const int id = int(&v - values_.data());
      if (dead.count(id) || (v.alias_of >= 0 && dead.count(v.alias_of))) {
        v.runtime = false;
        v.def = -1;
      }
    }
    ++stats_.attention_fused;
    placed.emplace_back(last, std::move(fused));
  }
  splice_fused_steps(drop, placed);
}

}  // namespace onnx_prepack::runtime
