// Recognition of QDQ units (qdq_fusion.h). Only names, shapes and types are
// read here: the values are the session's (or compile's) to read.
#include "runtime/qdq_fusion.h"

#include <map>
#include <set>
#include <string_view>

namespace onnx_prepack::runtime {
namespace {

constexpr int32_t kOnnxFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kOnnxUint8 = onnx::TensorProto::UINT8;
constexpr int32_t kOnnxInt8 = onnx::TensorProto::INT8;

bool default_domain(const onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t attr_int(const onnx::NodeProto& n, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

// An attribute absent, or a FLOAT equal to `want`.
bool float_attr_is(const onnx::NodeProto& n, std::string_view name, float want) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a == nullptr || (a->type() == onnx::AttributeProto::FLOAT && a->f() == want);
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d)) return -1;
    n *= d;
  }
  return n;
}

bool is_8bit(int32_t t) { return t == kOnnxInt8 || t == kOnnxUint8; }

// One value per tensor: shape [] or [1].
bool scalar(const ConstantInfo& c) { return c.dims.size() <= 1 && numel(c.dims) == 1; }

// Every name the nodes of subgraph `g` read, at any depth (outer-scope reads included).
void subgraph_reads(const onnx::GraphProto& g, std::set<std::string>& names) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) names.insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) subgraph_reads(a.g(), names);
      for (const auto& sg : a.graphs()) subgraph_reads(sg, names);
    }
  }
}

// The count of scale values one unit accepts: 1 (per tensor) or the `n`
// output columns along `axis` of the [rows, cols] weight.
bool per_tensor_or_axis(const ConstantInfo& scale, const onnx::NodeProto& dq, int64_t want_axis,
                        int64_t n) {
  if (scalar(scale)) return true;
  if (scale.dims.size() != 1 || numel(scale.dims) != n) return false;
  int64_t axis = attr_int(dq, "axis", 1);
  if (axis < 0) axis += 2;
  return axis == want_axis;
}

class Recognizer {
 public:
  Recognizer(const onnx::GraphProto& g, const ConstantLookup& constant)
      : g_(g), constant_(constant) {
    for (int ni = 0; ni < g.node_size(); ++ni) {
      const auto& n = g.node(ni);
      for (int i = 0; i < n.input_size(); ++i) {
        if (!n.input(i).empty()) readers_[n.input(i)].push_back({ni, i});
      }
      for (const auto& o : n.output()) {
        if (!o.empty()) producer_[o] = ni;
      }
      for (const auto& a : n.attribute()) {
        if (a.has_g()) subgraph_reads(a.g(), nested_);
        for (const auto& sg : a.graphs()) subgraph_reads(sg, nested_);
      }
    }
    for (const auto& o : g.output()) outputs_.insert(o.name());
  }

  // The node reading `value`, when it is its one reader (at input `input`),
  // no graph output and read by no subgraph; else -1.
  int sole_reader(const std::string& value, int input) const {
    auto it = readers_.find(value);
    if (it == readers_.end() || it->second.size() != 1 || it->second[0].second != input ||
        outputs_.count(value) || nested_.count(value))
      return -1;
    return it->second[0].first;
  }
  int producer(const std::string& value) const {
    auto it = producer_.find(value);
    return it == producer_.end() ? -1 : it->second;
  }
  const onnx::NodeProto& node(int i) const { return g_.node(i); }
  std::optional<ConstantInfo> constant(const std::string& name) const {
    return name.empty() ? std::nullopt : constant_(name);
  }

  // A DequantizeLinear with one output and no blocks; its scale and zero
  // point (absent when not given) are constants of matching types.
  struct Dq {
    ConstantInfo scale;
    std::optional<ConstantInfo> zp;
  };
  std::optional<Dq> dequantize(int di) const {
    const auto& dq = node(di);
    if (!default_domain(dq) || dq.op_type() != "DequantizeLinear" || dq.output_size() != 1 ||
        dq.output(0).empty() || dq.input_size() < 2 || dq.input_size() > 3 ||
        attr_int(dq, "block_size", 0) != 0)
      return std::nullopt;
    Dq d;
    std::optional<ConstantInfo> s = constant(dq.input(1));
    if (!s || s->dtype != kOnnxFloat) return std::nullopt;
    d.scale = *s;
    if (dq.input_size() == 3 && !dq.input(2).empty()) {
      d.zp = constant(dq.input(2));
      if (!d.zp || !is_8bit(d.zp->dtype) || d.zp->dims != d.scale.dims) return std::nullopt;
    }
    return d;
  }

 private:
  const onnx::GraphProto& g_;
  const ConstantLookup& constant_;
  std::map<std::string, std::vector<std::pair<int, int>>> readers_;
  std::map<std::string, int> producer_;
  std::set<std::string> outputs_;
  std::set<std::string> nested_;  // names read inside subgraphs
};

// A QuantizeLinear to int8 / uint8 with a scalar constant scale and zero
// point, whose input is read by it alone: its producer, else -1.
int quantized_output_producer(const Recognizer& r, int qi) {
  const auto& q = r.node(qi);
  if (!default_domain(q) || q.op_type() != "QuantizeLinear" || q.input_size() != 3 ||
      q.output_size() != 1 || q.output(0).empty() || attr_int(q, "block_size", 0) != 0 ||
      find_attr(q, "output_dtype") != nullptr)
    return -1;
  const std::optional<ConstantInfo> ys = r.constant(q.input(1)), yz = r.constant(q.input(2));
  if (!ys || !yz || ys->dtype != kOnnxFloat || !scalar(*ys) || !is_8bit(yz->dtype) || !scalar(*yz))
    return -1;
  const int pi = r.producer(q.input(0));
  if (pi < 0 || r.sole_reader(q.input(0), 0) != qi) return -1;
  return pi;
}

// DQ(x_q), DQ(W const [M, C / group, k...], per tensor or per output channel),
// [DQ(bias int32 const [M])] -> Conv -> QuantizeLinear as QLinearConv. The
// bias's scale must be x_scale * w_scale for QLinearConv to read the int32
// bias as the graph does: a value check the session makes (bias_scale_check).
std::optional<QdqUnit> full_conv(const Recognizer& r, int qi) {
  const int ci = quantized_output_producer(r, qi);
  if (ci < 0) return std::nullopt;
  const auto& c = r.node(ci);
  if (!default_domain(c) || c.op_type() != "Conv" || c.input_size() < 2 || c.input_size() > 3)
    return std::nullopt;
  const int ai = r.producer(c.input(0)), wi = r.producer(c.input(1));
  if (ai < 0 || wi < 0 || c.input(0) == c.input(1) || r.sole_reader(c.input(0), 0) != ci ||
      r.sole_reader(c.input(1), 1) != ci)
    return std::nullopt;
  const auto a = r.dequantize(ai), w = r.dequantize(wi);
  if (!a || !w || !a->zp || !w->zp || !scalar(a->scale)) return std::nullopt;
  const std::optional<ConstantInfo> wq = r.constant(r.node(wi).input(0));
  if (!wq || !is_8bit(wq->dtype) || wq->dims.size() < 3 || w->zp->dtype != wq->dtype)
    return std::nullopt;
  if (!scalar(w->scale) && (w->scale.dims.size() != 1 || w->scale.dims[0] != wq->dims[0] ||
                            attr_int(r.node(wi), "axis", 1) != 0))
    return std::nullopt;
  QdqUnit u;
  u.kind = QdqUnit::Kind::kFullConv;
  u.nodes = {ai, wi};
  std::string bias;
  if (c.input_size() == 3 && !c.input(2).empty()) {
    const int bi = r.producer(c.input(2));
    if (bi < 0 || r.sole_reader(c.input(2), 2) != ci) return std::nullopt;
    const auto& bdq = r.node(bi);
    if (!default_domain(bdq) || bdq.op_type() != "DequantizeLinear" || bdq.input_size() != 2 ||
        bdq.output_size() != 1 || attr_int(bdq, "block_size", 0) != 0)
      return std::nullopt;
    const std::optional<ConstantInfo> b = r.constant(bdq.input(0)), bs = r.constant(bdq.input(1));
    if (!b || !bs || b->dtype != onnx::TensorProto::INT32 ||
        b->dims != std::vector<int64_t>{wq->dims[0]} || bs->dtype != kOnnxFloat)
      return std::nullopt;
    bias = bdq.input(0);
    u.bias_scale_check = {bdq.input(1), r.node(ai).input(1), r.node(wi).input(1)};
    u.nodes.push_back(bi);
  }
  u.nodes.push_back(ci);
  u.nodes.push_back(qi);
  u.at = qi;
  u.weight_dq = wi;
  u.consumer = ci;
  u.weight_input = 3;
  const auto& q = r.node(qi);
  onnx::NodeProto& n = u.integer_node;
  n.set_name(c.name());
  n.set_op_type("QLinearConv");
  for (const auto& in : r.node(ai).input()) n.add_input(in);
  for (const auto& in : r.node(wi).input()) n.add_input(in);
  n.add_input(q.input(1));
  n.add_input(q.input(2));
  if (!bias.empty()) n.add_input(bias);
  n.add_output(q.output(0));
  for (const auto& at : c.attribute()) *n.add_attribute() = at;
  return u;
}

// DQ(a_q) and DQ(W const) -> MatMul -> QuantizeLinear as QLinearMatMul; every
// scale and zero point a constant, per tensor except W's (per column allowed).
std::optional<QdqUnit> full_matmul(const Recognizer& r, int qi) {
  const int mi = quantized_output_producer(r, qi);
  if (mi < 0) return std::nullopt;
  const auto& q = r.node(qi);
  const auto& m = r.node(mi);
  if (!default_domain(m) || m.op_type() != "MatMul" || m.input_size() != 2 ||
      m.input(0) == m.input(1))
    return std::nullopt;
  const int ai = r.producer(m.input(0)), wi = r.producer(m.input(1));
  if (ai < 0 || wi < 0 || r.sole_reader(m.input(0), 0) != mi || r.sole_reader(m.input(1), 1) != mi)
    return std::nullopt;
  const auto a = r.dequantize(ai), w = r.dequantize(wi);
  if (!a || !w || !a->zp || !w->zp || !scalar(a->scale)) return std::nullopt;
  const std::optional<ConstantInfo> wq = r.constant(r.node(wi).input(0));
  if (!wq || !is_8bit(wq->dtype) || wq->dims.size() != 2 || w->zp->dtype != wq->dtype ||
      !per_tensor_or_axis(w->scale, r.node(wi), 1, wq->dims[1]))
    return std::nullopt;
  QdqUnit u;
  u.kind = QdqUnit::Kind::kFullMatMul;
  u.nodes = {ai, wi, mi, qi};
  u.at = qi;
  u.weight_dq = wi;
  u.consumer = mi;
  u.weight_input = 3;
  onnx::NodeProto& n = u.integer_node;
  n.set_name(m.name());
  n.set_op_type("QLinearMatMul");
  for (const auto& in : r.node(ai).input()) n.add_input(in);
  for (const auto& in : r.node(wi).input()) n.add_input(in);
  n.add_input(q.input(1));
  n.add_input(q.input(2));
  n.add_output(q.output(0));
  return u;
}

// DQ(W const) read only as B of a MatMul or Gemm, as DynamicQuantizeMatMul.
std::optional<QdqUnit> weight_only(const Recognizer& r, int di) {
  const auto d = r.dequantize(di);
  if (!d) return std::nullopt;
  const auto& dq = r.node(di);
  const std::optional<ConstantInfo> w = r.constant(dq.input(0));
  if (!w || !is_8bit(w->dtype) || w->dims.size() != 2 || (d->zp && d->zp->dtype != w->dtype))
    return std::nullopt;
  const int ci = r.sole_reader(dq.output(0), 1);
  if (ci < 0) return std::nullopt;
  const auto& c = r.node(ci);
  if (!default_domain(c) || c.output_size() != 1 || c.output(0).empty()) return std::nullopt;
  QdqUnit u;
  u.weight_dq = di;
  u.consumer = ci;
  u.at = ci;
  u.nodes = {di, ci};
  std::string bias;
  if (c.op_type() == "MatMul" && c.input_size() == 2) {
    if (!per_tensor_or_axis(d->scale, dq, 1, w->dims[1])) return std::nullopt;
  } else if (c.op_type() == "Gemm" && c.input_size() >= 2) {
    // alpha 1, beta 1 and a bias of N values: Y = A W + C is the
    // DynamicQuantizeMatMul's product and bias.
    if (attr_int(c, "transA", 0) != 0 || !float_attr_is(c, "alpha", 1.0f)) return std::nullopt;
    u.transposed = attr_int(c, "transB", 0) != 0;
    const int64_t n = u.transposed ? w->dims[0] : w->dims[1];
    if (!per_tensor_or_axis(d->scale, dq, u.transposed ? 0 : 1, n)) return std::nullopt;
    if (c.input_size() == 3 && !c.input(2).empty()) {
      const std::optional<ConstantInfo> cb = r.constant(c.input(2));
      if (!cb || cb->dtype != kOnnxFloat || cb->dims != std::vector<int64_t>{n} ||
          !float_attr_is(c, "beta", 1.0f))
        return std::nullopt;
      bias = c.input(2);
    }
  } else {
    return std::nullopt;
  }
  if (u.transposed) u.transposed_name = dq.input(0) + "::qdq_transposed";
  onnx::NodeProto& q = u.integer_node;
  q.set_name(c.name());
  q.set_op_type("DynamicQuantizeMatMul");
  q.set_domain("com.microsoft");
  q.add_input(c.input(0));
  q.add_input(u.transposed ? u.transposed_name : dq.input(0));
  q.add_input(dq.input(1));
  q.add_input(d->zp ? dq.input(2) : std::string());
  q.add_input(bias);
  q.add_output(c.output(0));
  return u;
}

}  // namespace

std::vector<QdqUnit> find_qdq_units(const onnx::GraphProto& graph, const ConstantLookup& constant) {
  const Recognizer r(graph, constant);
  std::vector<QdqUnit> units;
  std::set<int> taken;
  for (int qi = 0; qi < graph.node_size(); ++qi) {
    std::optional<QdqUnit> u = full_matmul(r, qi);
    if (!u) u = full_conv(r, qi);
    if (u) {
      taken.insert(u->nodes.begin(), u->nodes.end());
      units.push_back(std::move(*u));
    }
  }
  for (int di = 0; di < graph.node_size(); ++di) {
    if (taken.count(di)) continue;
    if (std::optional<QdqUnit> u = weight_only(r, di); u && !taken.count(u->consumer)) {
      units.push_back(std::move(*u));
    }
  }
  return units;
}

}  // namespace onnx_prepack::runtime
