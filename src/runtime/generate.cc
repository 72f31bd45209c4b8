#include "runtime/generate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace onnx_prepack::runtime {
namespace {

// splitmix64: fast, deterministic, good enough for weights.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

class Builder {
 public:
  explicit Builder(uint64_t seed) : rng_{seed * 0x2545f4914f6cdd1dull + 7} {
    m_.set_ir_version(8);
    m_.set_producer_name("onnx-prepack generate");
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(17);
    g_ = m_.mutable_graph();
  }

  onnx::ModelProto& model() { return m_; }
  onnx::GraphProto* graph() { return g_; }

  // A FLOAT initializer of `dims` with zeroed raw data; returns its elements.
  float* add_float(const std::string& name, const std::vector<int64_t>& dims, int64_t* count) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= d;
    }
    std::string* raw = t->mutable_raw_data();
    raw->assign(size_t(n) * 4, '\0');
    *count = n;
    return reinterpret_cast<float*>(raw->data());
  }

  // Uniform in [-scale, scale).
  std::string weight(const std::string& name, std::vector<int64_t> dims, float scale) {
    int64_t n = 0;
    float* p = add_float(name, dims, &n);
    for (int64_t i = 0; i + 1 < n; i += 2) {
      uint64_t r = rng_.next();
      p[i] = (float(uint32_t(r) >> 8) * (1.0f / 8388608.0f) - 1.0f) * scale;
      p[i + 1] = (float(uint32_t(r >> 32) >> 8) * (1.0f / 8388608.0f) - 1.0f) * scale;
    }
    if (n % 2) p[n - 1] = (float(uint32_t(rng_.next()) >> 8) * (1.0f / 8388608.0f) - 1.0f) * scale;
    return name;
  }
  std::string filled(const std::string& name, std::vector<int64_t> dims, float value) {
    int64_t n = 0;
    float* p = add_float(name, dims, &n);
    std::fill(p, p + n, value);
    return name;
  }
  std::string ints(const std::string& name, std::vector<int64_t> values, bool scalar = false) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(int64_t(values.size()));
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 8));
    return name;
  }
  std::string scalar(const std::string& name, float v) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
    return name;
  }

  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out) {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(out.empty() ? op : out[0] + "/" + op);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  std::string op(const std::string& op, std::vector<std::string> in, const std::string& out) {
    node(op, std::move(in), {out});
    return out;
  }
  static void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  void io(bool input, const std::string& name, int32_t type,
          std::vector<std::pair<int64_t, std::string>> dims) {
    auto* v = input ? g_->add_input() : g_->add_output();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (auto& [val, param] : dims) {
      auto* d = shape->add_dim();
      if (param.empty())
        d->set_dim_value(val);
      else
        d->set_dim_param(param);
    }
  }

 private:
  onnx::ModelProto m_;
  onnx::GraphProto* g_;
  Rng rng_;
};

onnx::ModelProto mlp(const GenerateOptions& o) {
  Builder b(o.seed);
  b.graph()->set_name("mlp");
  int64_t w = o.width;
  b.io(true, "x", onnx::TensorProto::FLOAT, {{0, "batch"}, {w, ""}});
  std::string x = "x";
  float scale = float(std::sqrt(3.0 / double(w)));  // unit variance through the layers
  for (int i = 0; i < o.layers; ++i) {
    std::string p = "fc" + std::to_string(i);
    std::string wt = b.weight(p + ".weight", {w, w}, scale);
    std::string bias = b.weight(p + ".bias", {w}, 0.1f);
    x = b.op("MatMul", {x, wt}, p + ".matmul");
    bool last = i + 1 == o.layers;
    x = b.op("Add", {x, bias}, last ? "y" : p + ".add");
    if (!last) x = b.op("Relu", {x}, p + ".relu");
  }
  if (o.layers == 0) b.op("Identity", {x}, "y");
  b.io(false, "y", onnx::TensorProto::FLOAT, {{0, "batch"}, {w, ""}});
  return std::move(b.model());
}

onnx::ModelProto transformer(const GenerateOptions& o) {
  Builder b(o.seed);
  b.graph()->set_name("transformer_encoder");
  int64_t d = o.width, h = o.heads, dh = d / h, s = o.seq, ff = 4 * d;
  b.io(true, "input_ids", onnx::TensorProto::INT64, {{0, "batch"}, {s, ""}});
  float wscale = float(std::sqrt(3.0 / double(d)));
  std::string tok = b.weight("embeddings.token", {o.vocab, d}, 1.0f);
  std::string pos = b.weight("embeddings.position", {s, d}, 0.5f);
  // Token embeddings + positions [0, seq) sliced by the runtime sequence length.
  std::string emb = b.op("Gather", {tok, "input_ids"}, "embed.tokens");
  std::string shape = b.op("Shape", {"input_ids"}, "embed.shape");
  std::string one = b.ints("const.one", {1}, true);
  std::string len = b.op("Gather", {shape, one}, "embed.seq_len");
  std::string ax0 = b.ints("const.axes0", {0});
  std::string len1 = b.op("Unsqueeze", {len, ax0}, "embed.seq_len1");
  std::string zero1 = b.ints("const.zero1", {0});
  std::string pos_s = b.op("Slice", {pos, zero1, len1, ax0}, "embed.positions");
  std::string x = b.op("Add", {emb, pos_s}, "embed.sum");
  // Padding mask: token id 0 is padding -> -10000 added to its attention scores.
  std::string pad = b.ints("const.pad_id", {0}, true);
  std::string is_pad = b.op("Equal", {"input_ids", pad}, "mask.is_pad");
  std::string neg = b.scalar("const.mask_value", -10000.0f);
  std::string zero = b.scalar("const.zero", 0.0f);
  std::string mask = b.op("Where", {is_pad, neg, zero}, "mask.additive");
  std::string ax12 = b.ints("const.axes12", {1, 2});
  mask = b.op("Unsqueeze", {mask, ax12}, "mask.b11s");
  std::string split_sizes = b.ints("const.qkv_split", {d, d, d});
  std::string heads_shape = b.ints("const.heads_shape", {0, 0, h, dh});
  std::string merge_shape = b.ints("const.merge_shape", {0, 0, d});
  std::string inv_sqrt = b.scalar("const.inv_sqrt_dh", float(1.0 / std::sqrt(double(dh))));
  std::string two = b.scalar("const.two", 2.0f);
  std::string eps = b.scalar("const.eps", 1e-5f);
  std::string sqrt2 = b.scalar("const.sqrt2", float(std::sqrt(2.0)));
  std::string onef = b.scalar("const.one_f", 1.0f);
  std::string half = b.scalar("const.half", 0.5f);
  for (int l = 0; l < o.layers; ++l) {
    std::string p = "layer" + std::to_string(l) + ".";
    // Attention block (pre-norm).
    auto* ln =
        b.node("LayerNormalization",
               {x, b.filled(p + "ln1.scale", {d}, 1.0f), b.filled(p + "ln1.bias", {d}, 0.0f)},
               {p + "ln1"});
    Builder::attr_int(ln, "axis", -1);
    Builder::attr_float(ln, "epsilon", 1e-5f);
    std::string qkv =
        b.op("MatMul", {p + "ln1", b.weight(p + "attn.qkv.weight", {d, 3 * d}, wscale)}, p + "qkv");
    qkv = b.op("Add", {qkv, b.weight(p + "attn.qkv.bias", {3 * d}, 0.02f)}, p + "qkv.biased");
    auto* sp = b.node("Split", {qkv, split_sizes}, {p + "q", p + "k", p + "v"});
    Builder::attr_int(sp, "axis", -1);
    auto heads = [&](const std::string& t, std::vector<int64_t> perm) {
      std::string r = b.op("Reshape", {t, heads_shape}, t + ".heads");
      auto* tr = b.node("Transpose", {r}, {t + ".t"});
      Builder::attr_ints(tr, "perm", perm);
      return t + ".t";
    };
    std::string q = heads(p + "q", {0, 2, 1, 3});
    std::string k = heads(p + "k", {0, 2, 3, 1});
    std::string v = heads(p + "v", {0, 2, 1, 3});
    std::string sc = b.op("MatMul", {q, k}, p + "scores");
    sc = b.op("Mul", {sc, inv_sqrt}, p + "scores.scaled");
    sc = b.op("Add", {sc, mask}, p + "scores.masked");
    auto* sm = b.node("Softmax", {sc}, {p + "probs"});
    Builder::attr_int(sm, "axis", -1);
    std::string ctx = b.op("MatMul", {p + "probs", v}, p + "context");
    auto* tr = b.node("Transpose", {ctx}, {p + "context.t"});
    Builder::attr_ints(tr, "perm", {0, 2, 1, 3});
    ctx = b.op("Reshape", {p + "context.t", merge_shape}, p + "context.merged");
    std::string ao =
        b.op("MatMul", {ctx, b.weight(p + "attn.out.weight", {d, d}, wscale)}, p + "attn.out");
    ao = b.op("Add", {ao, b.weight(p + "attn.out.bias", {d}, 0.02f)}, p + "attn.out.biased");
    x = b.op("Add", {x, ao}, p + "residual1");
    // Feed-forward block, LayerNorm decomposed as older exporters write it.
    auto* rm = b.node("ReduceMean", {x}, {p + "ln2.mean"});
    Builder::attr_ints(rm, "axes", {-1});
    std::string c = b.op("Sub", {x, p + "ln2.mean"}, p + "ln2.centered");
    std::string sq = b.op("Pow", {c, two}, p + "ln2.sq");
    auto* rv = b.node("ReduceMean", {sq}, {p + "ln2.var"});
    Builder::attr_ints(rv, "axes", {-1});
    std::string sd =
        b.op("Sqrt", {b.op("Add", {p + "ln2.var", eps}, p + "ln2.var_eps")}, p + "ln2.std");
    std::string nrm = b.op("Div", {c, sd}, p + "ln2.norm");
    nrm = b.op("Mul", {nrm, b.filled(p + "ln2.scale", {d}, 1.0f)}, p + "ln2.scaled");
    nrm = b.op("Add", {nrm, b.filled(p + "ln2.bias", {d}, 0.0f)}, p + "ln2");
    std::string f = b.op("MatMul", {nrm, b.weight(p + "ffn.w1", {d, ff}, wscale)}, p + "ffn.h");
    f = b.op("Add", {f, b.weight(p + "ffn.b1", {ff}, 0.02f)}, p + "ffn.h.biased");
    std::string e = b.op("Erf", {b.op("Div", {f, sqrt2}, p + "gelu.scaled")}, p + "gelu.erf");
    e = b.op("Add", {e, onef}, p + "gelu.erf1");
    std::string g = b.op("Mul", {b.op("Mul", {f, e}, p + "gelu.x_erf"), half}, p + "gelu");
    std::string f2 =
        b.op("MatMul", {g, b.weight(p + "ffn.w2", {ff, d}, float(std::sqrt(3.0 / double(ff))))},
             p + "ffn.out");
    f2 = b.op("Add", {f2, b.weight(p + "ffn.b2", {d}, 0.02f)}, p + "ffn.out.biased");
    x = b.op("Add", {x, f2}, p + "residual2");
  }
  auto* ln =
      b.node("LayerNormalization",
             {x, b.filled("final_ln.scale", {d}, 1.0f), b.filled("final_ln.bias", {d}, 0.0f)},
             {"last_hidden_state"});
  Builder::attr_int(ln, "axis", -1);
  b.io(false, "last_hidden_state", onnx::TensorProto::FLOAT, {{0, "batch"}, {s, ""}, {d, ""}});
  return std::move(b.model());
}

onnx::ModelProto llm(const GenerateOptions& o) {
  Builder b(o.seed);
  b.graph()->set_name("llm");
  auto* ms = b.model().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  const int64_t w = o.width, kb = (w + o.block_size - 1) / o.block_size;
  const int64_t blob = int64_t(o.block_size) * o.bits / 8;
  b.io(true, "x", onnx::TensorProto::FLOAT, {{0, "batch"}, {w, ""}});
  std::string x = "x";
  // Codes uniform over [0, 2^bits), zero points near the middle: (q - z) has
  // variance ~ 4^bits / 12; the scale keeps the activations at unit variance.
  const double levels = double(1 << o.bits);
  const float scale = float(1.0 / std::sqrt(levels * levels / 12.0 * double(w)));
  uint64_t r = o.seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&r] {
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    return r;
  };
  auto bytes_init = [&](const std::string& name, std::vector<int64_t> dims, int64_t n, auto fill) {
    auto* t = b.graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::UINT8);
    for (auto d : dims) t->add_dims(d);
    std::string* raw = t->mutable_raw_data();
    raw->resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) (*raw)[size_t(i)] = char(fill(i));
    return name;
  };
  for (int i = 0; i < o.layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".proj";
    std::vector<std::string> in = {x};
    in.push_back(bytes_init(p + ".qweight", {w, kb, blob}, w * kb * blob,
                            [&](int64_t) { return uint8_t(next() >> 24); }));
    int64_t n = 0;
    float* sc = b.add_float(p + ".scales", {w * kb}, &n);
    for (int64_t j = 0; j < n; ++j) sc[j] = scale * (0.75f + float(next() % 1024) / 2048.0f);
    in.push_back(p + ".scales");
    if (o.zero_points) {
      const int64_t row = (kb * o.bits + 7) / 8;
      const int mid = 1 << (o.bits - 1);
      in.push_back(bytes_init(p + ".qzeros", {w * row}, w * row, [&](int64_t) {
        if (o.bits == 8) return uint8_t(mid - 2 + int(next() % 5));
        return uint8_t((mid - 1 + int(next() % 3)) | ((mid - 1 + int(next() % 3)) << 4));
      }));
    }
    const bool last = i + 1 == o.layers;
    auto* nd = b.node("MatMulNBits", in, {last ? std::string("y") : p + ".out"});
    nd->set_domain("com.microsoft");
    Builder::attr_int(nd, "K", w);
    Builder::attr_int(nd, "N", w);
    Builder::attr_int(nd, "bits", o.bits);
    Builder::attr_int(nd, "block_size", o.block_size);
    Builder::attr_int(nd, "accuracy_level", o.accuracy_level);
    x = nd->output(0);
  }
  if (o.layers == 0) b.op("Identity", {x}, "y");
  b.io(false, "y", onnx::TensorProto::FLOAT, {{0, "batch"}, {w, ""}});
  return std::move(b.model());
}

}  // namespace

onnx::ModelProto generate_model(const GenerateOptions& o) {
  if (o.kind == "llm") return llm(o);
  return o.kind == "transformer" ? transformer(o) : mlp(o);
}

uint64_t generated_weight_bytes(const GenerateOptions& o) {
  uint64_t d = uint64_t(o.width);
  if (o.kind == "llm") {
    const uint64_t kb = (d + uint64_t(o.block_size) - 1) / uint64_t(o.block_size);
    return uint64_t(o.layers) *
           (d * kb * uint64_t(o.block_size) * uint64_t(o.bits) / 8 + 4 * d * kb +
            (o.zero_points ? d * ((kb * uint64_t(o.bits) + 7) / 8) : 0));
  }
  if (o.kind == "transformer") {
    return 4 * (uint64_t(o.vocab) * d + uint64_t(o.seq) * d +
                uint64_t(o.layers) * (12 * d * d + 13 * d) + 2 * d);
  }
  return 4 * uint64_t(o.layers) * (d * d + d);
}

}  // namespace onnx_prepack::runtime
