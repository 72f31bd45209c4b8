// Session::fuse_patterns: the decomposed LayerNorm / RMSNorm / Gelu / FastGelu
// subgraphs of standard-op exports (norm_gelu_fusion.h) become one step each,
// built by the fused operator's own builder (LayerNormalization,
// SimplifiedLayerNormalization, Gelu with `approximate`) from a node made here.
// Runs on the built steps, after transpose folding and before the fusion
// passes (which would otherwise take the elementwise parts); a fused step sits
// at the position of its pattern's last step and carries a label, so later
// passes leave it alone.
#include "runtime/norm_gelu_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include "runtime/half_adapter.h"
#include "runtime/session.h"
#include "runtime/session_state.h"

namespace onnx_prepack::runtime {

bool pattern_fusion_disabled_by_env() {
  static const bool off = [] {
    const char* f = std::getenv("ONNX_PREPACK_PATTERN_FUSION");
    return f != nullptr && std::strcmp(f, "0") == 0;
  }();
  return off;
}

bool near_constant(double v, double want) {
  // About 16 float ulps: exporters write the constants as float32 literals of
  // various lengths (0.7978845608, sqrt(2 / pi) rounded, 1 / sqrt 2, ...).
  return std::isfinite(v) && std::fabs(v - want) <= 1e-6 * std::fabs(want);
}

namespace {

using Value = Session::Value;
using Step = Session::Step;

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;

struct Pattern {
  enum Kind { kLayerNorm, kRms, kGelu, kGeluTanh } kind = kGelu;
  std::vector<int> steps;
  int x = -1, out = -1, gamma = -1, beta = -1;
  int axes = 1;  // trailing axes normalized
  float eps = 0;
};

class Matcher {
 public:
  Matcher(std::vector<Value>& values, const std::vector<Step>& steps, const onnx::GraphProto& graph,
          const std::vector<bool>& is_output, const std::set<std::string>& half_chain)
      : values_(values),
        steps_(steps),
        graph_(graph),
        is_output_(is_output),
        half_chain_(half_chain),
        claimed_(steps.size(), false) {
    readers_.assign(values.size(), {});
    aliased_.assign(values.size(), false);
    for (const Value& v : values) {
      if (v.alias_of >= 0) aliased_[size_t(v.alias_of)] = true;
    }
    for (int si = 0; si < int(steps.size()); ++si) {
      for (int id : steps[size_t(si)].in) {
        if (id < 0) continue;
        auto& r = readers_[size_t(id)];
        if (r.empty() || r.back() != si) r.push_back(si);
      }
    }
  }

  void claim(const Pattern& p) {
    for (int si : p.steps) claimed_[size_t(si)] = true;
  }

  // The op type of a plain step with one float output, or "".
  std::string_view op(int si) const {
    if (si < 0 || si >= int(steps_.size()) || claimed_[size_t(si)]) return "";
    const Step& st = steps_[size_t(si)];
    if (st.kernel == nullptr || st.label != nullptr || st.out.size() != 1 || st.out[0] < 0)
      return "";
    const onnx::NodeProto& n = graph_.node(st.node);
    if (!n.domain().empty() && n.domain() != "ai.onnx") return "";
    if (!is_float(st.out[0])) return "";
    return n.op_type();
  }
  int out(int si) const { return steps_[size_t(si)].out[0]; }
  const std::vector<int>& in(int si) const { return steps_[size_t(si)].in; }
  const Shape& shape(int id) const { return values_[size_t(id)].desc.shape; }

  bool is_float(int id) const {
    const Value& v = values_[size_t(id)];
    return v.desc.dtype == kFloat && v.desc.model_dtype == kUndefined &&
           half_chain_.count(v.name) == 0;
  }
  // A value computed inside the pattern: read by `n` steps, no graph output,
  // storage of its own.
  bool inner(int id, size_t n) const {
    const Value& v = values_[size_t(id)];
    return v.runtime && v.alias_of < 0 && !aliased_[size_t(id)] && !is_output_[size_t(id)] &&
           readers_[size_t(id)].size() == n && is_float(id);
  }
  // The one reader of inner value `id`, when it is a plain `op` step.
  int reader(int id, std::string_view want) const {
    if (id < 0 || !inner(id, 1)) return -1;
    const int si = readers_[size_t(id)][0];
    return op(si) == want ? si : -1;
  }
  // The step writing inner value `id` (read once), when it is a plain `op` step.
  int producer(int id, std::string_view want) const {
    if (id < 0 || !inner(id, 1)) return -1;
    const int si = values_[size_t(id)].def;
    return si >= 0 && op(si) == want && out(si) == id ? si : -1;
  }
  // The other operand of binary step si, one of whose operands is `id`.
  int other(int si, int id) const {
    const auto& v = in(si);
    if (v.size() != 2 || v[0] < 0 || v[1] < 0) return -1;
    if (v[0] == id && v[1] != id) return v[1];
    if (v[1] == id && v[0] != id) return v[0];
    return -1;
  }
  // A constant of one element (float, double or integer), as double.
  std::optional<double> scalar(int id) const {
    if (id < 0) return std::nullopt;
    const Value& v = values_[size_t(id)];
    if (!v.constant || v.runtime || v.constant->numel() != 1) return std::nullopt;
    const void* p = v.constant->data();
    switch (v.desc.dtype) {
      case kFloat:
        return double(*static_cast<const float*>(p));
      case kDouble:
        return *static_cast<const double*>(p);
      case kInt32:
        return double(*static_cast<const int32_t*>(p));
      case kInt64:
        return double(*static_cast<const int64_t*>(p));
      default:
        return std::nullopt;
    }
  }
  // A float constant of one element, no higher rank than `of` (it broadcasts
  // without changing the shape), near `want`.
  bool constant_near(int id, double want, int of) const {
    if (id < 0 || !is_float(id) || shape(id).size() > shape(of).size()) return false;
    auto v = scalar(id);
    return v && near_constant(*v, want);
  }
  // Binary step si reads `x` and a constant near `want` (either order).
  bool with_constant(int si, int x, double want) const {
    return si >= 0 && constant_near(other(si, x), want, x);
  }
  // Pow(x, n) or, for n = 2, Mul(x, x).
  bool is_power(int si, int x, double n) const {
    const auto& v = in(si);
    if (op(si) == "Pow") {
      if (v.size() != 2 || v[0] != x) return false;
      auto e = scalar(v[1]);
      return e && *e == n && shape(v[1]).size() <= shape(x).size();
    }
    return n == 2 && op(si) == "Mul" && v.size() == 2 && v[0] == x && v[1] == x;
  }

  // How many trailing axes ReduceMean step si reduces, with keepdims; 0 otherwise.
  int trailing_axes(int si) const {
    if (op(si) != "ReduceMean") return 0;
    const onnx::NodeProto& n = graph_.node(steps_[size_t(si)].node);
    int64_t keepdims = 1;
    std::vector<int64_t> axes;
    for (const auto& a : n.attribute()) {
      if (a.name() == "keepdims") keepdims = a.i();
      if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
    }
    const auto& v = in(si);
    if (v.empty() || v[0] < 0) return 0;
    if (v.size() > 1 && v[1] >= 0) {  // opset 18: axes as an input
      const Value& a = values_[size_t(v[1])];
      if (!a.constant || a.desc.dtype != kInt64 || !axes.empty()) return 0;
      const int64_t* p = static_cast<const int64_t*>(a.constant->data());
      axes.assign(p, p + a.constant->numel());
    }
    const int64_t rank = int64_t(shape(v[0]).size());
    if (keepdims == 0 || axes.empty() || rank == 0) return 0;
    for (int64_t& a : axes) {
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) return 0;
    }
    std::sort(axes.begin(), axes.end());
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] != rank - int64_t(axes.size()) + int64_t(i)) return 0;
    }
    return int(axes.size());
  }

  // A constant gamma / beta that holds one float per normalized element: X's
  // trailing `k` dims, with leading 1s only.
  bool param_ok(int id, int x, int k) const {
    if (id < 0 || !is_float(id)) return false;
    const Value& v = values_[size_t(id)];
    if (!v.constant || v.runtime) return false;
    const Shape& s = v.desc.shape;
    const Shape& xs = shape(x);
    if (s.size() > xs.size() || s.size() < size_t(k)) return false;
    for (size_t i = 0; i < s.size(); ++i) {
      const size_t xi = xs.size() - s.size() + i;
      const bool norm_axis = xi + size_t(k) >= xs.size();
      if (norm_axis ? s[i] != xs[xi] : s[i] != 1) return false;
    }
    return true;
  }

  // var -> Add eps -> Sqrt: the standard deviation, or -1; `p` takes the steps and eps.
  int eps_sqrt(int var, Pattern& p) const {
    const int add = reader(var, "Add");
    if (add < 0) return -1;
    const int e = other(add, var);
    if (e < 0 || !is_float(e) || shape(e).size() > shape(var).size()) return -1;
    auto eps = scalar(e);
    if (!eps || !(*eps >= 0) || !std::isfinite(*eps)) return -1;
    const int ve = out(add);
    if (shape(ve) != shape(var)) return -1;
    const int sq = reader(ve, "Sqrt");
    if (sq < 0) return -1;
    p.eps = float(*eps);
    p.steps.push_back(add);
    p.steps.push_back(sq);
    return out(sq);
  }

  // d / sd as Div(d, sd) or Mul(d, Reciprocal(sd)); `step` must be the one
  // reading d (when >= 0). The quotient, or -1.
  int divide(int d, int sd, int step, Pattern& p) const {
    if (const int dv = reader(sd, "Div"); dv >= 0) {
      if (in(dv).size() != 2 || in(dv)[0] != d || in(dv)[1] != sd) return -1;
      if (step >= 0 && dv != step) return -1;
      p.steps.push_back(dv);
      return out(dv);
    }
    const int rc = reader(sd, "Reciprocal");
    if (rc < 0) return -1;
    const int r = out(rc);
    const int mul = reader(r, "Mul");
    if (mul < 0 || other(mul, r) != d || (step >= 0 && mul != step)) return -1;
    p.steps.push_back(rc);
    p.steps.push_back(mul);
    return out(mul);
  }

  // The optional Mul gamma [Add beta] after the normalized value n.
  void affine(int n, bool with_beta, Pattern& p) const {
    p.out = n;
    const int mul = reader(n, "Mul");
    if (mul < 0) return;
    const int g = other(mul, n);
    if (!param_ok(g, p.x, p.axes) || shape(out(mul)) != shape(p.x)) return;
    p.gamma = g;
    p.steps.push_back(mul);
    p.out = out(mul);
    if (!with_beta) return;
    const int add = reader(p.out, "Add");
    if (add < 0) return;
    const int b = other(add, p.out);
    if (!param_ok(b, p.x, p.axes) || shape(out(add)) != shape(p.x)) return;
    p.beta = b;
    p.steps.push_back(add);
    p.out = out(add);
  }

  std::optional<Pattern> layer_norm(int r1) const {
    Pattern p;
    p.kind = Pattern::kLayerNorm;
    p.axes = trailing_axes(r1);
    if (p.axes == 0) return std::nullopt;
    p.x = in(r1)[0];
    if (!is_float(p.x)) return std::nullopt;
    const Shape xs = shape(p.x);
    const int mean = out(r1);
    const int sub = reader(mean, "Sub");
    if (sub < 0 || in(sub).size() != 2 || in(sub)[0] != p.x || in(sub)[1] != mean)
      return std::nullopt;
    const int d = out(sub);
    if (shape(d) != xs || !inner(d, 2)) return std::nullopt;
    int square = -1, rest = -1;
    for (int si : readers_[size_t(d)]) {
      if (square < 0 && is_power(si, d, 2))
        square = si;
      else
        rest = si;
    }
    if (square < 0 || rest < 0) return std::nullopt;
    const int r2 = reader(out(square), "ReduceMean");
    if (r2 < 0 || trailing_axes(r2) != p.axes || in(r2)[0] != out(square)) return std::nullopt;
    p.steps = {r1, sub, square, r2};
    const int sd = eps_sqrt(out(r2), p);
    if (sd < 0) return std::nullopt;
    const int n = divide(d, sd, rest, p);
    if (n < 0 || shape(n) != xs) return std::nullopt;
    affine(n, true, p);
    return p;
  }

  std::optional<Pattern> rms_norm(int r) const {
    Pattern p;
    p.kind = Pattern::kRms;
    p.axes = trailing_axes(r);
    if (p.axes == 0) return std::nullopt;
    const int sq = in(r)[0];
    if (!inner(sq, 1)) return std::nullopt;
    const int ps = values_[size_t(sq)].def;
    if (ps < 0 || out(ps) != sq || in(ps).empty()) return std::nullopt;
    p.x = in(ps)[0];
    if (!is_power(ps, p.x, 2) || !is_float(p.x) || shape(sq) != shape(p.x)) return std::nullopt;
    p.steps = {ps, r};
    const int sd = eps_sqrt(out(r), p);
    if (sd < 0) return std::nullopt;
    const int n = divide(p.x, sd, -1, p);
    if (n < 0 || shape(n) != shape(p.x)) return std::nullopt;
    affine(n, false, p);
    return p;
  }

  // Add 1 -> the product with x and 0.5 (any order), from e = erf(...) or tanh(...).
  bool gelu_tail(int e, Pattern& p) const {
    const int x = p.x;
    const int add = reader(e, "Add");
    if (add < 0 || !with_constant(add, e, 1.0)) return false;
    const int e1 = out(add);
    const int m = reader(e1, "Mul");
    if (m < 0) return false;
    p.steps.push_back(add);
    const int o = other(m, e1);
    if (o == x) {  // (x * e1) * 0.5
      const int fin = reader(out(m), "Mul");
      if (fin < 0 || !with_constant(fin, out(m), 0.5)) return false;
      p.steps.push_back(m);
      p.steps.push_back(fin);
      p.out = out(fin);
    } else if (const int h = producer(o, "Mul"); h >= 0 && with_constant(h, x, 0.5)) {
      p.steps.push_back(h);  // (x * 0.5) * e1
      p.steps.push_back(m);
      p.out = out(m);
    } else if (constant_near(o, 0.5, e1)) {  // x * (e1 * 0.5)
      const int fin = reader(out(m), "Mul");
      if (fin < 0 || other(fin, out(m)) != x) return false;
      p.steps.push_back(m);
      p.steps.push_back(fin);
      p.out = out(fin);
    } else {
      return false;
    }
    for (int si : p.steps) {
      if (shape(out(si)) != shape(x)) return false;
    }
    return true;
  }

  std::optional<Pattern> gelu(int erf) const {
    Pattern p;
    p.kind = Pattern::kGelu;
    const int t = in(erf).empty() ? -1 : in(erf)[0];
    int scale = producer(t, "Div");
    if (scale >= 0) {
      const auto& v = in(scale);
      if (v.size() != 2 || !constant_near(v[1], kSqrt2, v[0])) return std::nullopt;
      p.x = v[0];
    } else {
      scale = producer(t, "Mul");
      if (scale < 0 || in(scale).size() != 2) return std::nullopt;
      for (int k = 0; k < 2 && p.x < 0; ++k) {
        if (constant_near(in(scale)[size_t(1 - k)], 1.0 / kSqrt2, in(scale)[size_t(k)]))
          p.x = in(scale)[size_t(k)];
      }
      if (p.x < 0) return std::nullopt;
    }
    if (!is_float(p.x)) return std::nullopt;
    p.steps = {scale, erf};
    if (!gelu_tail(out(erf), p)) return std::nullopt;
    return p;
  }

  std::optional<Pattern> gelu_tanh(int th) const {
    Pattern p;
    p.kind = Pattern::kGeluTanh;
    const int c = in(th).empty() ? -1 : in(th)[0];
    const int ms = producer(c, "Mul");
    if (ms < 0 || in(ms).size() != 2) return std::nullopt;
    int b = -1;
    for (int k = 0; k < 2 && b < 0; ++k) {
      if (constant_near(in(ms)[size_t(1 - k)], kSqrt2OverPi, in(ms)[size_t(k)]))
        b = in(ms)[size_t(k)];
    }
    const int as = producer(b, "Add");
    if (as < 0 || in(as).size() != 2) return std::nullopt;
    // b = x + 0.044715 x^3, the cube Pow(x, 3), Mul(Mul(x, x), x) or Mul(x, Mul(x, x)).
    std::vector<int> cube_steps;
    for (int k = 0; k < 2 && p.x < 0; ++k) {
      const int x = in(as)[size_t(1 - k)], a = in(as)[size_t(k)];
      const int ma = producer(a, "Mul");
      if (ma < 0 || in(ma).size() != 2) continue;
      for (int j = 0; j < 2 && p.x < 0; ++j) {
        const int x3 = in(ma)[size_t(j)];
        if (!constant_near(in(ma)[size_t(1 - j)], kGeluCubic, x3) || !inner(x3, 1)) continue;
        const int pc = values_[size_t(x3)].def;
        if (pc < 0 || out(pc) != x3) continue;
        if (is_power(pc, x, 3)) {
          cube_steps = {pc, ma};
        } else if (op(pc) == "Mul") {
          const int x2 = other(pc, x);
          const int sq = producer(x2, "Mul");
          if (sq < 0 || in(sq).size() != 2 || in(sq)[0] != x || in(sq)[1] != x) continue;
          cube_steps = {sq, pc, ma};
        } else {
          continue;
        }
        p.x = x;
      }
    }
    if (p.x < 0 || !is_float(p.x)) return std::nullopt;
    p.steps = cube_steps;
    for (int si : {as, ms, th}) p.steps.push_back(si);
    if (!gelu_tail(out(th), p)) return std::nullopt;
    return p;
  }

 private:
  std::vector<Value>& values_;
  const std::vector<Step>& steps_;
  const onnx::GraphProto& graph_;
  const std::vector<bool>& is_output_;
  const std::set<std::string>& half_chain_;
  std::vector<bool> claimed_;
  std::vector<std::vector<int>> readers_;  // per value: the steps that read it, in order
  std::vector<bool> aliased_;
};

void add_attr(onnx::NodeProto& n, const std::string& name, int64_t i) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(i);
}

void add_attr(onnx::NodeProto& n, const std::string& name, float f) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(f);
}

}  // namespace

void Session::fuse_patterns() {
  if (!options_.fuse_patterns || pattern_fusion_disabled_by_env() || steps_.size() < 2) return;
  std::vector<bool> is_output(values_.size(), false);
  for (const auto& name : output_names_) is_output[size_t(value_index_.at(name))] = true;
  Matcher m(values_, steps_, *graph_, is_output, float16_chain_);

  // The fused operator's kernel for `node`, or null unless it gives one float
  // output of x's shape.
  auto build = [this](const onnx::NodeProto& node, const std::vector<const ValueDesc*>& descs,
                      const Shape& shape) -> std::unique_ptr<Kernel> {
    const OpEntry* op = find_op(node.domain(), node.op_type());
    if (op == nullptr) return nullptr;
    BuildContext ctx(node, opset_, descs, options_.weights);
    ctx.set_subgraph_env(env_.get());
    ctx.set_limits(plan_limits_);
    if (!ctx.attr_status().ok()) return nullptr;
    auto built = build_with_half_adapter(*op, ctx);
    if (!ctx.attr_status().ok() || !built.ok() || *built == nullptr) return nullptr;
    const auto& outs = ctx.outputs();
    if (outs.size() != 1 || !outs[0].set || outs[0].value || outs[0].dtype != kFloat ||
        outs[0].shape != shape || outs[0].model_dtype != kUndefined || !ctx.aliases().empty())
      return nullptr;
    return std::move(*built);
  };

  std::vector<std::pair<int, Step>> placed;  // the fused step and the position it takes
  std::vector<bool> drop(steps_.size(), false);
  for (int si = 0; si < int(steps_.size()); ++si) {
    const std::string_view op = m.op(si);
    std::optional<Pattern> p;
    if (op == "ReduceMean") {
      p = m.layer_norm(si);
      if (!p) p = m.rms_norm(si);
    } else if (op == "Erf") {
      p = m.gelu(si);
    } else if (op == "Tanh") {
      p = m.gelu_tanh(si);
    }
    if (!p) continue;
    const Shape xs = m.shape(p->x);
    onnx::NodeProto node;
    node.set_name(values_[size_t(p->out)].name + " (fused pattern)");
    node.add_input("x");
    node.add_output("y");
    ValueDesc xd = values_[size_t(p->x)].desc;
    xd.value = nullptr;
    std::vector<const ValueDesc*> descs = {&xd};
    std::vector<int> ins = {p->x};
    ValueDesc gd, bd;
    std::vector<Tensor> views(2);
    std::optional<HostTensor> ones;
    const char* label = nullptr;
    if (p->kind == Pattern::kGelu || p->kind == Pattern::kGeluTanh) {
      node.set_op_type("Gelu");
      auto* a = node.add_attribute();
      a->set_name("approximate");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(p->kind == Pattern::kGelu ? "none" : "tanh");
      label = p->kind == Pattern::kGelu ? "FusedGelu" : "FusedFastGelu";
    } else {
      const bool ln = p->kind == Pattern::kLayerNorm;
      node.set_op_type(ln ? "LayerNormalization" : "SimplifiedLayerNormalization");
      label = ln ? "FusedLayerNorm" : "FusedRmsNorm";
      add_attr(node, "axis", int64_t(-p->axes));
      add_attr(node, "epsilon", p->eps);
      const Shape norm(xs.end() - p->axes, xs.end());
      node.add_input("scale");
      if (p->gamma < 0) {  // no scale Mul: a scale of ones
        auto t = HostTensor::try_allocate(kFloat, norm, "pattern fusion: a scale of ones");
        if (!t.ok()) continue;
        float* f = static_cast<float*>(t->mutable_data());
        std::fill(f, f + t->numel(), 1.0f);
        ones = std::move(*t);
        gd.dtype = kFloat;
        views[0] = ones->view();
      } else {
        gd = values_[size_t(p->gamma)].desc;
        views[0] = values_[size_t(p->gamma)].constant->view();
      }
      gd.shape = norm;  // leading 1s dropped: the same bytes
      views[0].shape = norm;
      gd.value = &views[0];
      descs.push_back(&gd);
      ins.push_back(p->gamma);
      if (p->beta >= 0) {
        node.add_input("bias");
        bd = values_[size_t(p->beta)].desc;
        bd.shape = norm;
        views[1] = values_[size_t(p->beta)].constant->view();
        views[1].shape = norm;
        bd.value = &views[1];
        descs.push_back(&bd);
        ins.push_back(p->beta);
      }
    }
    std::unique_ptr<Kernel> k = build(node, descs, xs);
    if (k == nullptr) continue;
    if (ones) {  // the scale of ones becomes a constant of the plan
      std::string name = values_[size_t(p->out)].name + "/ones";
      while (value_index_.count(name)) name += "'";
      const int id = add_value(name);
      values_[size_t(id)].desc.dtype = kFloat;
      values_[size_t(id)].desc.shape = ones->shape();
      values_[size_t(id)].constant = std::move(ones);
      ins[1] = id;
    }
    m.claim(*p);
    Step fused;
    fused.node = steps_[size_t(*std::max_element(p->steps.begin(), p->steps.end()))].node;
    fused.label = label;
    fused.kernel = std::move(k);
    fused.in = ins;
    fused.out = {p->out};
    for (int s : p->steps) {
      drop[size_t(s)] = true;
      const int o = steps_[size_t(s)].out[0];
      if (o != p->out) {
        values_[size_t(o)].runtime = false;  // never written
        values_[size_t(o)].def = -1;
      }
    }
    ++stats_.patterns_fused;
    placed.emplace_back(*std::max_element(p->steps.begin(), p->steps.end()), std::move(fused));
  }
  splice_fused_steps(drop, placed);
}

}  // namespace onnx_prepack::runtime
