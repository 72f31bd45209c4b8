// BERT-class encoders as a torch export of Hugging Face's BertModel writes them (optimum's
// feature-extraction export: last_hidden_state), fp32 or with every weight MatMul replaced the
// way onnxruntime.quantization.quantize_dynamic (QOperator, per-tensor, int8 symmetric weights)
// replaces it (operators/matmul.py, MatMulInteger.quantize; quantize_activation):
//   X -> DynamicQuantizeLinear "<X>_QuantizeLinear" -> (<X>_quantized, <X>_scale, <X>_zero_point)
//   MatMulInteger "<node>_quant"(X_q, W_quantized, X_zp, W_zero_point) -> <Y>_output_quantized
//   Cast "<Y>_output_quantized_cast" -> float; Mul "<node>_quant_scales_mul"(X_scale, W_scale);
//   Mul "<node>_quant_output_scale_mul" -> Y; the bias Add stays as it was.
#include <cmath>
#include <limits>
#include <set>

#include "runtime/generate.h"
#include "runtime/generate_graph.h"

namespace onnx_prepack::runtime {
namespace {

using gen::Dim;
using gen::Graph;
using gen::Rng;
constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

std::vector<float> uniform(const EncoderOptions& o, const std::string& name, size_t n, float a,
                           float offset = 0.0f) {
  Rng r(o.seed, name);
  std::vector<float> v(n);
  for (auto& x : v) x = offset + a * r.uniform();
  return v;
}

class EncoderBuilder {
 public:
  EncoderBuilder(Graph& g, const EncoderOptions& o) : g_(g), o_(o) {}

  std::string c64(const std::vector<int64_t>& v, bool scalar = false) {
    const std::string n = "/Constant_" + std::to_string(counter_++);
    return g_.constant_i64(n, n + "/output_0", v, scalar);
  }
  std::string cf(float v) {
    const std::string n = "/Constant_" + std::to_string(counter_++);
    return g_.constant_f32(n, n + "/output_0", v);
  }

  // MatMul + bias Add of a Linear (weight [in, out] as the export transposes it).
  Result<std::string> linear(const std::string& b, const std::string& in, const std::string& wn,
                             int64_t k, int64_t n) {
    const std::vector<float> w =
        uniform(o_, wn + ".weight", size_t(k * n), float(std::sqrt(3.0 / double(k))));
    const std::string mm = b + "/MatMul", out = mm + "/output_0";
    if (!o_.int8) {
      OP_RETURN_IF_ERROR(g_.floats(wn + ".weight", {k, n}, w));
      g_.node("MatMul", mm, {in, wn + ".weight"}, {out});
    } else {
      // Per-tensor symmetric int8: scale = 2 max|w| / 255, zero point 0.
      float absmax = 0.0f;
      for (float x : w) absmax = std::max(absmax, std::fabs(x));
      const float scale = absmax > 0.0f ? 2.0f * absmax / 255.0f : 1.0f;
      std::vector<uint8_t> q(w.size());
      for (size_t i = 0; i < w.size(); ++i) {
        q[i] = uint8_t(int8_t(std::clamp(std::nearbyint(w[i] / scale), -128.0f, 127.0f)));
      }
      const std::string wq = wn + ".weight_quantized", ws = wn + ".weight_scale",
                        wz = wn + ".weight_zero_point";
      OP_RETURN_IF_ERROR(g_.tensor(wq, onnx::TensorProto::INT8, {k, n}, q));
      OP_RETURN_IF_ERROR(g_.tensor(ws, kF32, {}, {reinterpret_cast<const uint8_t*>(&scale), 4}));
      const uint8_t zero = 0;
      OP_RETURN_IF_ERROR(g_.tensor(wz, onnx::TensorProto::INT8, {}, {&zero, 1}));
      if (quantized_.insert(in).second) {
        g_.node("DynamicQuantizeLinear", in + "_QuantizeLinear", {in},
                {in + "_quantized", in + "_scale", in + "_zero_point"});
      }
      const std::string mi = out + "_output_quantized";
      g_.node("MatMulInteger", mm + "_quant", {in + "_quantized", wq, in + "_zero_point", wz},
              {mi});
      auto* c = g_.node("Cast", mi + "_cast", {mi}, {mi + "_cast_output"});
      Graph::attr(c, "to", int64_t(kF32));
      const std::string sm = mm + "_quant_scales_mul";
      g_.node("Mul", sm, {in + "_scale", ws}, {sm + ":0"});
      g_.node("Mul", mm + "_quant_output_scale_mul", {mi + "_cast_output", sm + ":0"}, {out});
    }
    OP_RETURN_IF_ERROR(g_.floats(wn + ".bias", {n}, uniform(o_, wn + ".bias", size_t(n), 0.02f)));
    return g_.op("Add", b + "/Add", {wn + ".bias", out});
  }

  Result<std::string> layer_norm(const std::string& b, const std::string& in,
                                 const std::string& wn) {
    OP_RETURN_IF_ERROR(g_.floats(wn + ".weight", {o_.hidden},
                                 uniform(o_, wn + ".weight", size_t(o_.hidden), 0.05f, 1.0f)));
    OP_RETURN_IF_ERROR(
        g_.floats(wn + ".bias", {o_.hidden}, uniform(o_, wn + ".bias", size_t(o_.hidden), 0.02f)));
    auto* n = g_.node("LayerNormalization", b + "/LayerNormalization",
                      {in, wn + ".weight", wn + ".bias"}, {b + "/LayerNormalization/output_0"});
    Graph::attr(n, "axis", int64_t(-1));
    Graph::attr(n, "epsilon", 1e-12f);
    return n->output(0);
  }

  Status build() {
    auto& m = g_.model();
    m.set_ir_version(8);
    m.set_producer_name(o_.int8 ? "onnx-prepack generate (onnxruntime.quantization layout)"
                                : "onnx-prepack generate (optimum export layout)");
    auto* op = m.add_opset_import();
    op->set_domain("");
    op->set_version(17);
    g_.graph()->set_name("main_graph");
    const int64_t h = o_.hidden, hs = h / o_.heads;
    for (const char* n : {"input_ids", "attention_mask", "token_type_ids"}) {
      g_.input(n, kI64, {Dim("batch_size"), Dim("sequence_length")});
    }
    g_.output("last_hidden_state", kF32,
              {Dim("batch_size"), Dim("sequence_length"), Dim(o_.hidden)});
    const std::string E = "/embeddings";
    auto table = [&](const std::string& n, int64_t rows) {
      return g_.floats(n, {rows, h}, uniform(o_, n, size_t(rows * h), 1.0f));
    };
    OP_RETURN_IF_ERROR(table("embeddings.word_embeddings.weight", o_.vocab));
    OP_RETURN_IF_ERROR(table("embeddings.position_embeddings.weight", o_.max_positions));
    OP_RETURN_IF_ERROR(table("embeddings.token_type_embeddings.weight", o_.type_vocab));
    std::string we = g_.op("Gather", E + "/word_embeddings/Gather",
                           {"embeddings.word_embeddings.weight", "input_ids"});
    std::string te = g_.op("Gather", E + "/token_type_embeddings/Gather",
                           {"embeddings.token_type_embeddings.weight", "token_type_ids"});
    std::string x = g_.op("Add", E + "/Add", {we, te});
    std::string shape = g_.op("Shape", E + "/Shape", {"input_ids"});
    auto* ga = g_.node("Gather", E + "/Gather", {shape, c64({1}, true)}, {E + "/Gather/output_0"});
    Graph::attr(ga, "axis", int64_t(0));
    std::string pos = g_.op("Range", E + "/Range", {c64({0}, true), ga->output(0), c64({1}, true)});
    pos = g_.op("Unsqueeze", E + "/Unsqueeze", {pos, c64({0})});
    std::string pe = g_.op("Gather", E + "/position_embeddings/Gather",
                           {"embeddings.position_embeddings.weight", pos});
    x = g_.op("Add", E + "/Add_1", {x, pe});
    OP_ASSIGN_OR_RETURN(x, layer_norm(E + "/LayerNorm", x, "embeddings.LayerNorm"));
    // Extended attention mask: (1 - mask[:, None, None, :]) * finfo(float).min.
    std::string mk = g_.op("Unsqueeze", "/Unsqueeze", {"attention_mask", c64({1, 2})});
    mk = g_.op("Cast", "/Cast", {mk});
    Graph::attr(g_.graph()->mutable_node(g_.graph()->node_size() - 1), "to", int64_t(kF32));
    mk = g_.op("Sub", "/Sub", {cf(1.0f), mk});
    mk = g_.op("Mul", "/Mul", {mk, cf(std::numeric_limits<float>::lowest())});
    const std::string heads_shape = c64({0, 0, o_.heads, hs}), merge = c64({0, 0, h});
    const std::string sqrt_hs = cf(float(std::sqrt(double(hs))));
    const std::string sqrt2 = cf(float(std::sqrt(2.0))), onef = cf(1.0f), half = cf(0.5f);
    for (int64_t l = 0; l < o_.layers; ++l) {
      const std::string L = "/encoder/layer." + std::to_string(l);
      const std::string W = "encoder.layer." + std::to_string(l);
      const std::string S = L + "/attention/self";
      auto split = [&](const std::string& b, const std::string& in, std::vector<int64_t> perm) {
        std::string r = g_.op("Reshape", b + "/Reshape", {in, heads_shape});
        auto* t = g_.node("Transpose", b + "/Transpose", {r}, {b + "/Transpose/output_0"});
        Graph::attr(t, "perm", perm);
        return t->output(0);
      };
      OP_ASSIGN_OR_RETURN(std::string q,
                          linear(S + "/query", x, W + ".attention.self.query", h, h));
      OP_ASSIGN_OR_RETURN(std::string k, linear(S + "/key", x, W + ".attention.self.key", h, h));
      OP_ASSIGN_OR_RETURN(std::string v,
                          linear(S + "/value", x, W + ".attention.self.value", h, h));
      q = split(S + "/q", q, {0, 2, 1, 3});
      k = split(S + "/k", k, {0, 2, 3, 1});
      v = split(S + "/v", v, {0, 2, 1, 3});
      std::string sc = g_.op("MatMul", S + "/MatMul", {q, k});
      sc = g_.op("Div", S + "/Div", {sc, sqrt_hs});
      sc = g_.op("Add", S + "/Add", {sc, mk});
      auto* sm = g_.node("Softmax", S + "/Softmax", {sc}, {S + "/Softmax/output_0"});
      Graph::attr(sm, "axis", int64_t(-1));
      std::string ctx = g_.op("MatMul", S + "/MatMul_1", {sm->output(0), v});
      auto* t = g_.node("Transpose", S + "/Transpose_3", {ctx}, {S + "/Transpose_3/output_0"});
      Graph::attr(t, "perm", std::vector<int64_t>{0, 2, 1, 3});
      ctx = g_.op("Reshape", S + "/Reshape_3", {t->output(0), merge});
      const std::string AO = L + "/attention/output";
      OP_ASSIGN_OR_RETURN(std::string ao,
                          linear(AO + "/dense", ctx, W + ".attention.output.dense", h, h));
      ao = g_.op("Add", AO + "/Add", {ao, x});
      OP_ASSIGN_OR_RETURN(x, layer_norm(AO + "/LayerNorm", ao, W + ".attention.output.LayerNorm"));
      const std::string I = L + "/intermediate";
      OP_ASSIGN_OR_RETURN(std::string f,
                          linear(I + "/dense", x, W + ".intermediate.dense", h, o_.intermediate));
      const std::string G = I + "/intermediate_act_fn";
      std::string e = g_.op("Erf", G + "/Erf", {g_.op("Div", G + "/Div", {f, sqrt2})});
      e = g_.op("Add", G + "/Add", {e, onef});
      std::string gl = g_.op("Mul", G + "/Mul_1", {g_.op("Mul", G + "/Mul", {f, e}), half});
      const std::string O = L + "/output";
      OP_ASSIGN_OR_RETURN(std::string f2,
                          linear(O + "/dense", gl, W + ".output.dense", o_.intermediate, h));
      f2 = g_.op("Add", O + "/Add", {f2, x});
      OP_ASSIGN_OR_RETURN(x, layer_norm(O + "/LayerNorm", f2, W + ".output.LayerNorm"));
    }
    g_.node("Identity", "/Identity", {x}, {"last_hidden_state"});
    return ok_status();
  }

 private:
  Graph& g_;
  const EncoderOptions& o_;
  int counter_ = 0;
  std::set<std::string> quantized_;
};

}  // namespace

Result<EncoderOptions> encoder_preset(const std::string& name) {
  EncoderOptions o;
  if (name == "bert-base") return o;
  if (name == "minilm-l6") {
    o.layers = 6;
    o.hidden = 384;
    o.heads = 12;
    o.intermediate = 1536;
    return o;
  }
  if (name == "tiny") {
    o.layers = 2;
    o.hidden = 64;
    o.heads = 4;
    o.intermediate = 256;
    o.vocab = 512;
    o.max_positions = 64;
    return o;
  }
  return invalid_argument("unknown encoder preset '" + name +
                          "', expected bert-base, minilm-l6 or tiny");
}

Status validate_encoder(const EncoderOptions& o) {
  if (o.layers < 0 || o.layers > 4096) return invalid_argument("--layers must be in [0, 4096]");
  for (auto [v, n] : {std::pair{o.hidden, "--hidden"},
                      {o.heads, "--heads"},
                      {o.intermediate, "--intermediate"},
                      {o.vocab, "--vocab"},
                      {o.max_positions, "--max-positions"}}) {
    if (v < 1 || v > (int64_t(1) << 24)) {
      return invalid_argument(std::string(n) + " " + std::to_string(v) + " is not in [1, 2^24]");
    }
  }
  if (o.hidden % o.heads != 0) {
    return invalid_argument("--hidden " + std::to_string(o.hidden) +
                            " is not a multiple of --heads " + std::to_string(o.heads));
  }
  auto r = encoder_weight_bytes(o);
  return r.ok() ? ok_status() : r.status();
}

Result<uint64_t> encoder_weight_bytes(const EncoderOptions& o) {
  const uint64_t h = uint64_t(o.hidden), I = uint64_t(o.intermediate);
  OP_ASSIGN_OR_RETURN(
      uint64_t emb,
      gen::checked_product(
          {uint64_t(o.vocab) + uint64_t(o.max_positions) + uint64_t(o.type_vocab), h, 4},
          "embeddings"));
  const uint64_t wbytes = o.int8 ? 1 : 4, extra = o.int8 ? 5 : 0;  // scale + zero point
  const uint64_t layer =
      wbytes * (4 * h * h + 2 * h * I) + 6 * extra + 4 * (4 * h + I + h) + 4 * 4 * h;
  OP_ASSIGN_OR_RETURN(uint64_t layers, gen::checked_product({uint64_t(o.layers), layer}, "layers"));
  return emb + 8 * h + layers;
}

Result<WrittenModel> write_encoder(const EncoderOptions& o, const std::string& path,
                                   bool external) {
  OP_RETURN_IF_ERROR(validate_encoder(o));
  const std::string file = path.substr(path.find_last_of('/') + 1);
  OP_ASSIGN_OR_RETURN(auto g, Graph::create(external ? path + ".data" : "", file + ".data"));
  EncoderBuilder b(*g, o);
  OP_RETURN_IF_ERROR(b.build());
  WrittenModel w;
  w.weight_bytes = g->weight_bytes();
  w.data_file = g->external_bytes() ? file + ".data" : "";
  w.nodes = g->graph()->node_size();
  w.initializers = g->graph()->initializer_size();
  OP_RETURN_IF_ERROR(g->finish(path));
  return w;
}

}  // namespace onnx_prepack::runtime
