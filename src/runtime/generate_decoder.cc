// Llama-class decoders in two layouts of one function (docs/llm.md, "Generating decoders and
// encoders"):
//  - genai: onnxruntime-genai's model builder for CPU int4 (builders/base.py: make_embedding,
//    make_attention_mask_reformatting_for_gqa, make_layernorm, make_attention with packed qkv
//    and rotary inside GroupQueryAttention, make_mlp_proj + make_activation_with_mul,
//    make_lm_head), the MatMuls quantized the way its to_nbits pass (ONNX Runtime's
//    MatMulNBitsQuantizer, DefaultWeightOnlyQuantizer) names them: node "<MatMul>_Q4",
//    initializers "<weight>_Q4", "<weight>_scales", "<weight>_zero_points".
//  - optimum: standard ops as a torch export of a Hugging Face Llama writes it, fp32 weights
//    that are the int4 weights dequantized.
#include <cmath>
#include <limits>

#include "runtime/generate.h"
#include "runtime/generate_graph.h"

namespace onnx_prepack::runtime {
namespace {

using gen::Dim;
using gen::Graph;
using gen::Rng;
constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

// A linear layer y = x W (W [K, N]) as int4 codes per output row: w[n][k] = (q - z) * s.
struct QLinear {
  int64_t k = 0, n = 0, kb = 0, bs = 0;
  std::vector<uint8_t> codes;  // [n][k], 0..15
  std::vector<float> scales;   // [n][kb]
  std::vector<uint8_t> zeros;  // [n][kb], 0..15 (8 when symmetric)
};

QLinear make_linear(const DecoderOptions& o, const std::string& name, int64_t k, int64_t n,
                    float gain) {
  QLinear q;
  q.k = k;
  q.n = n;
  q.bs = o.block_size;
  q.kb = k / o.block_size;
  Rng r(o.seed, name);
  // Codes uniform over 1..15 (mean 8, the symmetric zero point): weights without a common
  // offset, which 32 layers would otherwise turn into a drift that swamps the logits.
  q.codes.resize(size_t(n * k));
  for (size_t i = 0; i < q.codes.size(); i += 8) {
    uint64_t v = r.next();
    for (size_t j = 0; j < 8 && i + j < q.codes.size(); ++j) {
      q.codes[i + j] = uint8_t(1 + ((((v >> (8 * j)) & 255) * 15) >> 8));
    }
  }
  // E[(q - z)^2] = (15^2 - 1) / 12 + E[(z - 8)^2] ~ 19.
  const float base = gain / std::sqrt(19.0f * float(k));
  q.scales.resize(size_t(n * q.kb));
  q.zeros.resize(size_t(n * q.kb), 8);
  for (auto& s : q.scales) s = base * (1.0f + 0.25f * r.uniform());
  if (o.zero_points) {
    for (auto& z : q.zeros) z = uint8_t(7 + r.next() % 3);
  }
  return q;
}

// MatMulNBits blobs [n][kb][bs/2], element k of a block in the low nibble when even.
std::vector<uint8_t> pack_codes(const QLinear& q) {
  std::vector<uint8_t> out(size_t(q.n * q.k / 2));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uint8_t(q.codes[2 * i] | (q.codes[2 * i + 1] << 4));
  return out;
}

std::vector<uint8_t> pack_zeros(const QLinear& q) {
  const int64_t row = (q.kb + 1) / 2;
  std::vector<uint8_t> out(size_t(q.n * row), 0);
  for (int64_t r = 0; r < q.n; ++r) {
    for (int64_t b = 0; b < q.kb; ++b) {
      out[size_t(r * row + b / 2)] |= uint8_t(q.zeros[size_t(r * q.kb + b)] << (4 * (b % 2)));
    }
  }
  return out;
}

// Dequantized W [K, N] as a MatMul weight.
std::vector<float> dequantize(const QLinear& q) {
  std::vector<float> w(size_t(q.k * q.n));
  for (int64_t r = 0; r < q.n; ++r) {
    for (int64_t c = 0; c < q.k; ++c) {
      const size_t b = size_t(r * q.kb + c / q.bs);
      w[size_t(c * q.n + r)] =
          (float(q.codes[size_t(r * q.k + c)]) - float(q.zeros[b])) * q.scales[b];
    }
  }
  return w;
}

QLinear concat_rows(const std::vector<const QLinear*>& parts) {
  QLinear out = *parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    out.n += parts[i]->n;
    out.codes.insert(out.codes.end(), parts[i]->codes.begin(), parts[i]->codes.end());
    out.scales.insert(out.scales.end(), parts[i]->scales.begin(), parts[i]->scales.end());
    out.zeros.insert(out.zeros.end(), parts[i]->zeros.begin(), parts[i]->zeros.end());
  }
  return out;
}

uint64_t nbits_bytes(const DecoderOptions& o, uint64_t k, uint64_t n) {
  const uint64_t kb = k / uint64_t(o.block_size);
  return n * k / 2 + 4 * n * kb + (o.zero_points ? n * ((kb + 1) / 2) : 0);
}

std::vector<float> norm_weight(const DecoderOptions& o, const std::string& name, int64_t d) {
  Rng r(o.seed, name);
  std::vector<float> w{};
  w.resize(size_t(d));
  for (auto& x : w) x = 1.0f + 0.1f * r.uniform();
  return w;
}

std::vector<float> embedding(const DecoderOptions& o) {
  Rng r(o.seed, "embed_tokens");
  std::vector<float> w(size_t(o.vocab * o.hidden));
  for (auto& x : w) x = r.uniform();
  return w;
}

std::vector<float> inv_freq(const DecoderOptions& o) {
  const int64_t hs = o.hidden / o.heads;
  std::vector<float> f(size_t(hs / 2));
  for (int64_t i = 0; i < hs / 2; ++i) {
    f[size_t(i)] = float(1.0 / std::pow(double(o.rope_theta), double(2 * i) / double(hs)));
  }
  return f;
}

// The layer's weights, made in one place so that both forms get the same ones.
struct LayerWeights {
  QLinear q, k, v, o, gate, up, down;
};
LayerWeights layer_weights(const DecoderOptions& o, int64_t l) {
  const std::string p = "layers." + std::to_string(l) + ".";
  const int64_t hs = o.hidden / o.heads, qs = o.heads * hs, kvs = o.kv_heads * hs;
  return {make_linear(o, p + "q_proj", o.hidden, qs, 1.0f),
          make_linear(o, p + "k_proj", o.hidden, kvs, 1.0f),
          make_linear(o, p + "v_proj", o.hidden, kvs, 1.0f),
          make_linear(o, p + "o_proj", qs, o.hidden, 1.0f),
          make_linear(o, p + "gate_proj", o.hidden, o.intermediate, 1.0f),
          make_linear(o, p + "up_proj", o.hidden, o.intermediate, 1.0f),
          make_linear(o, p + "down_proj", o.intermediate, o.hidden, 1.0f)};
}

// ---- genai form ----

Result<std::string> matmul_nbits(Graph& g, const DecoderOptions& o, const std::string& base,
                                 const std::string& input, const QLinear& q,
                                 const std::string& output = "") {
  // base: "/model/layers.0/attn/qkv_proj/MatMul"; weight
  // "model.layers.0.attn.qkv_proj.MatMul.weight".
  std::string wname = base.substr(1) + ".weight";
  for (auto& c : wname) {
    if (c == '/') c = '.';
  }
  const std::vector<uint8_t> codes = pack_codes(q);
  OP_RETURN_IF_ERROR(
      g.tensor(wname + "_Q4", onnx::TensorProto::UINT8, {q.n, q.kb, q.bs / 2}, codes));
  OP_RETURN_IF_ERROR(
      g.tensor(wname + "_scales", kF32, {q.n * q.kb},
               {reinterpret_cast<const uint8_t*>(q.scales.data()), q.scales.size() * 4}));
  std::vector<std::string> in = {input, wname + "_Q4", wname + "_scales"};
  if (o.zero_points) {
    const std::vector<uint8_t> z = pack_zeros(q);
    OP_RETURN_IF_ERROR(
        g.tensor(wname + "_zero_points", onnx::TensorProto::UINT8, {int64_t(z.size())}, z));
    in.push_back(wname + "_zero_points");
  }
  const std::string out = output.empty() ? base + "/output_0" : output;
  auto* n = g.node("MatMulNBits", base + "_Q4", in, {out}, "com.microsoft");
  Graph::attr(n, "K", q.k);
  Graph::attr(n, "N", q.n);
  Graph::attr(n, "bits", int64_t(4));
  Graph::attr(n, "block_size", q.bs);
  // The quantizer writes accuracy_level only when it is not 0.
  if (o.accuracy_level != 0) Graph::attr(n, "accuracy_level", o.accuracy_level);
  return out;
}

Status build_genai(Graph& g, const DecoderOptions& o) {
  auto& m = g.model();
  m.set_ir_version(10);
  m.set_producer_name("onnx-prepack generate (onnxruntime-genai builder layout)");
  auto* op1 = m.add_opset_import();
  op1->set_domain("");
  op1->set_version(21);
  auto* op2 = m.add_opset_import();
  op2->set_domain("com.microsoft");
  op2->set_version(1);
  g.graph()->set_name("main_graph");
  const int64_t hs = o.hidden / o.heads;
  g.input("input_ids", kI64, {Dim("batch_size"), Dim("sequence_length")});
  g.input("attention_mask", kI64, {Dim("batch_size"), Dim("total_sequence_length")});
  for (int64_t l = 0; l < o.layers; ++l) {
    for (const char* kv : {"key", "value"}) {
      g.input("past_key_values." + std::to_string(l) + "." + kv, kF32,
              {Dim("batch_size"), Dim(o.kv_heads), Dim("past_sequence_length"), Dim(hs)});
    }
  }
  g.output("logits", kF32, {Dim("batch_size"), Dim("sequence_length"), Dim(o.vocab)});
  for (int64_t l = 0; l < o.layers; ++l) {
    for (const char* kv : {"key", "value"}) {
      g.output("present." + std::to_string(l) + "." + kv, kF32,
               {Dim("batch_size"), Dim(o.kv_heads), Dim("total_sequence_length"), Dim(hs)});
    }
  }
  // Embeddings.
  OP_RETURN_IF_ERROR(g.floats("model.embed_tokens.weight", {o.vocab, o.hidden}, embedding(o)));
  std::string x =
      g.op("Gather", "/model/embed_tokens/Gather", {"model.embed_tokens.weight", "input_ids"});
  // seqlens_k = ReduceSum(attention_mask) - 1 (int32), total_seq_len = Shape(mask)[1] (int32).
  const std::string mb = "/model/attn_mask_reformat/attn_mask_subgraph";
  const std::string one1 =
      g.constant_i64("/model/constant_nodes/INT64/[1]", "/model/constants/INT64/[1]", {1}, false);
  const std::string one =
      g.constant_i64("/model/constant_nodes/INT64/1", "/model/constants/INT64/1", {1}, true);
  auto* rs = g.node("ReduceSum", mb + "/ReduceSum", {"attention_mask", one1},
                    {mb + "/ReduceSum/output_0"});
  Graph::attr(rs, "keepdims", int64_t(0));
  std::string sub = g.op("Sub", mb + "/Sub", {mb + "/ReduceSum/output_0", one1});
  std::string seqlens_k = g.op("Cast", mb + "/Sub/Cast", {sub});
  Graph::attr(g.graph()->mutable_node(g.graph()->node_size() - 1), "to",
              int64_t(onnx::TensorProto::INT32));
  std::string shape = g.op("Shape", mb + "/Shape", {"attention_mask"});
  auto* ga = g.node("Gather", mb + "/Gather", {shape, one}, {mb + "/Gather/output_0"});
  Graph::attr(ga, "axis", int64_t(0));
  std::string total = g.op("Cast", mb + "/Gather/Cast", {mb + "/Gather/output_0"});
  Graph::attr(g.graph()->mutable_node(g.graph()->node_size() - 1), "to",
              int64_t(onnx::TensorProto::INT32));
  // cos/sin caches [max_positions, head_size / 2].
  {
    const std::vector<float> f = inv_freq(o);
    std::vector<float> cs(size_t(o.max_positions * (hs / 2))), sn(cs.size());
    for (int64_t t = 0; t < o.max_positions; ++t) {
      for (int64_t i = 0; i < hs / 2; ++i) {
        const float a = float(t) * f[size_t(i)];
        cs[size_t(t * (hs / 2) + i)] = std::cos(a);
        sn[size_t(t * (hs / 2) + i)] = std::sin(a);
      }
    }
    OP_RETURN_IF_ERROR(g.floats("cos_cache", {o.max_positions, hs / 2}, cs));
    OP_RETURN_IF_ERROR(g.floats("sin_cache", {o.max_positions, hs / 2}, sn));
  }
  std::string root = x, skip;
  for (int64_t l = 0; l < o.layers; ++l) {
    const std::string L = "/model/layers." + std::to_string(l);
    const std::string W = "model.layers." + std::to_string(l);
    const LayerWeights lw = layer_weights(o, l);
    auto skip_norm = [&](const std::string& loc, bool last) -> Result<std::string> {
      const std::string wn =
          (last ? "model.layers." + std::to_string(o.layers) : W) + "." + loc + "_layernorm.weight";
      OP_RETURN_IF_ERROR(g.floats(wn, {o.hidden}, norm_weight(o, wn, o.hidden)));
      const std::string b =
          (last ? "/model/layers." + std::to_string(o.layers) : L) + "/" + loc + "_layernorm";
      std::vector<std::string> outs = {b + "/output_0"};
      if (!last) outs = {b + "/output_0", "", "", b + "/output_3"};
      auto* n = g.node("SkipSimplifiedLayerNormalization", b + "/SkipLayerNorm", {root, skip, wn},
                       outs, "com.microsoft");
      Graph::attr(n, "epsilon", o.rms_eps);
      if (!last) root = b + "/output_3";
      return b + "/output_0";
    };
    std::string h;
    if (l == 0) {
      const std::string wn = W + ".input_layernorm.weight";
      OP_RETURN_IF_ERROR(g.floats(wn, {o.hidden}, norm_weight(o, wn, o.hidden)));
      auto* n = g.node("SimplifiedLayerNormalization", L + "/input_layernorm/LayerNorm", {x, wn},
                       {L + "/input_layernorm/output_0"});
      Graph::attr(n, "axis", int64_t(-1));
      Graph::attr(n, "epsilon", o.rms_eps);
      Graph::attr(n, "stash_type", int64_t(1));
      h = L + "/input_layernorm/output_0";
    } else {
      OP_ASSIGN_OR_RETURN(h, skip_norm("input", false));
    }
    const QLinear qkv = concat_rows({&lw.q, &lw.k, &lw.v});
    OP_ASSIGN_OR_RETURN(std::string qkv_out,
                        matmul_nbits(g, o, L + "/attn/qkv_proj/MatMul", h, qkv));
    const std::string ls = std::to_string(l);
    auto* at =
        g.node("GroupQueryAttention", L + "/attn/GroupQueryAttention",
               {qkv_out, "", "", "past_key_values." + ls + ".key",
                "past_key_values." + ls + ".value", seqlens_k, total, "cos_cache", "sin_cache"},
               {L + "/attn/GroupQueryAttention/output_0", "present." + ls + ".key",
                "present." + ls + ".value"},
               "com.microsoft");
    Graph::attr(at, "num_heads", o.heads);
    Graph::attr(at, "kv_num_heads", o.kv_heads);
    Graph::attr(at, "scale", float(1.0 / std::sqrt(double(hs))));
    Graph::attr(at, "local_window_size", o.local_window);
    Graph::attr(at, "softcap", 0.0f);
    Graph::attr(at, "do_rotary", int64_t(1));
    Graph::attr(at, "rotary_interleaved", int64_t(0));
    OP_ASSIGN_OR_RETURN(skip, matmul_nbits(g, o, L + "/attn/o_proj/MatMul",
                                           L + "/attn/GroupQueryAttention/output_0", lw.o));
    OP_ASSIGN_OR_RETURN(h, skip_norm("post_attention", false));
    OP_ASSIGN_OR_RETURN(std::string gate,
                        matmul_nbits(g, o, L + "/mlp/gate_proj/MatMul", h, lw.gate));
    OP_ASSIGN_OR_RETURN(std::string up, matmul_nbits(g, o, L + "/mlp/up_proj/MatMul", h, lw.up));
    std::string sg = g.op("Sigmoid", L + "/mlp/act_fn/Sigmoid", {gate});
    std::string act = g.op("Mul", L + "/mlp/act_fn/Mul", {gate, sg});
    std::string mul = g.op("Mul", L + "/mlp/Mul", {act, up});
    OP_ASSIGN_OR_RETURN(skip, matmul_nbits(g, o, L + "/mlp/down_proj/MatMul", mul, lw.down));
  }
  std::string fin;
  if (o.layers == 0) {
    const std::string wn = "model.layers.0.final_norm_layernorm.weight";
    OP_RETURN_IF_ERROR(g.floats(wn, {o.hidden}, norm_weight(o, "final_norm", o.hidden)));
    auto* n =
        g.node("SimplifiedLayerNormalization", "/model/layers.0/final_norm_layernorm/LayerNorm",
               {x, wn}, {"/model/layers.0/final_norm_layernorm/output_0"});
    Graph::attr(n, "axis", int64_t(-1));
    Graph::attr(n, "epsilon", o.rms_eps);
    Graph::attr(n, "stash_type", int64_t(1));
    fin = n->output(0);
  } else {
    const std::string wn =
        "model.layers." + std::to_string(o.layers) + ".final_norm_layernorm.weight";
    OP_RETURN_IF_ERROR(g.floats(wn, {o.hidden}, norm_weight(o, "final_norm", o.hidden)));
    const std::string b = "/model/layers." + std::to_string(o.layers) + "/final_norm_layernorm";
    auto* n = g.node("SkipSimplifiedLayerNormalization", b + "/SkipLayerNorm", {root, skip, wn},
                     {b + "/output_0"}, "com.microsoft");
    Graph::attr(n, "epsilon", o.rms_eps);
    fin = b + "/output_0";
  }
  const QLinear head = make_linear(o, "lm_head", o.hidden, o.vocab, 2.0f);
  OP_ASSIGN_OR_RETURN(std::string logits,
                      matmul_nbits(g, o, "/lm_head/MatMul", fin, head, "logits"));
  (void)logits;
  return ok_status();
}

// ---- optimum form ----

Status build_optimum(Graph& g, const DecoderOptions& o) {
  auto& m = g.model();
  m.set_ir_version(8);
  m.set_producer_name("onnx-prepack generate (optimum export layout)");
  auto* op1 = m.add_opset_import();
  op1->set_domain("");
  op1->set_version(17);
  g.graph()->set_name("main_graph");
  const int64_t hs = o.hidden / o.heads, qs = o.heads * hs, rep = o.heads / o.kv_heads;
  const std::string T = "past_sequence_length + sequence_length";
  g.input("input_ids", kI64, {Dim("batch_size"), Dim("sequence_length")});
  g.input("attention_mask", kI64, {Dim("batch_size"), Dim(T)});
  g.input("position_ids", kI64, {Dim("batch_size"), Dim("sequence_length")});
  for (int64_t l = 0; l < o.layers; ++l) {
    for (const char* kv : {"key", "value"}) {
      g.input("past_key_values." + std::to_string(l) + "." + kv, kF32,
              {Dim("batch_size"), Dim(o.kv_heads), Dim("past_sequence_length"), Dim(hs)});
    }
  }
  g.output("logits", kF32, {Dim("batch_size"), Dim("sequence_length"), Dim(o.vocab)});
  for (int64_t l = 0; l < o.layers; ++l) {
    for (const char* kv : {"key", "value"}) {
      g.output("present." + std::to_string(l) + "." + kv, kF32,
               {Dim("batch_size"), Dim(o.kv_heads), Dim(T), Dim(hs)});
    }
  }
  int counter = 0;
  auto c64 = [&](const std::vector<int64_t>& v, bool scalar = false) {
    const std::string n = "/model/Constant_" + std::to_string(counter++);
    return g.constant_i64(n, n + "/output_0", v, scalar);
  };
  auto cf = [&](float v) {
    const std::string n = "/model/Constant_" + std::to_string(counter++);
    return g.constant_f32(n, n + "/output_0", v);
  };
  OP_RETURN_IF_ERROR(g.floats("model.embed_tokens.weight", {o.vocab, o.hidden}, embedding(o)));
  std::string x =
      g.op("Gather", "/model/embed_tokens/Gather", {"model.embed_tokens.weight", "input_ids"});
  // Additive mask [B, 1, S, T]: key j is hidden from query i (absolute past + i) when j > i,
  // when i - j > local window, or when attention_mask[b, j] == 0.
  const std::string M = "/model/mask";
  std::string ids_shape = g.op("Shape", M + "/Shape", {"input_ids"});
  auto gather0 = [&](const std::string& name, const std::string& in, int64_t idx) {
    auto* n = g.node("Gather", name, {in, c64({idx}, true)}, {name + "/output_0"});
    Graph::attr(n, "axis", int64_t(0));
    return name + "/output_0";
  };
  std::string S = gather0(M + "/Gather", ids_shape, 1);
  std::string mask_shape = g.op("Shape", M + "/Shape_1", {"attention_mask"});
  std::string Tn = gather0(M + "/Gather_1", mask_shape, 1);
  std::string past = g.op("Sub", M + "/Sub", {Tn, S});
  std::string zero = c64({0}, true), onei = c64({1}, true);
  std::string qpos = g.op("Range", M + "/Range", {past, Tn, onei});            // [S]
  std::string kpos = g.op("Range", M + "/Range_1", {zero, Tn, onei});          // [T]
  std::string qcol = g.op("Unsqueeze", M + "/Unsqueeze", {qpos, c64({1})});    // [S, 1]
  std::string krow = g.op("Unsqueeze", M + "/Unsqueeze_1", {kpos, c64({0})});  // [1, T]
  std::string blocked = g.op("Greater", M + "/Greater", {krow, qcol});         // [S, T]
  if (o.local_window > 0) {
    std::string dist = g.op("Sub", M + "/Sub_1", {qcol, krow});
    std::string far = g.op("Greater", M + "/Greater_1", {dist, c64({o.local_window - 1}, true)});
    blocked = g.op("Or", M + "/Or_1", {blocked, far});
  }
  blocked = g.op("Unsqueeze", M + "/Unsqueeze_2", {blocked, c64({0, 1})});  // [1, 1, S, T]
  std::string pad = g.op("Equal", M + "/Equal", {"attention_mask", c64({0}, true)});  // [B, T]
  pad = g.op("Unsqueeze", M + "/Unsqueeze_3", {pad, c64({1, 2})});  // [B, 1, 1, T]
  blocked = g.op("Or", M + "/Or", {blocked, pad});
  std::string mask =
      g.op("Where", M + "/Where", {blocked, cf(std::numeric_limits<float>::lowest()), cf(0.0f)});
  // Rotary cos/sin [B, 1, S, hs] from position_ids (LlamaRotaryEmbedding).
  const std::string R = "/model/rotary_emb";
  OP_RETURN_IF_ERROR(g.floats("model.rotary_emb.inv_freq", {1, hs / 2, 1}, inv_freq(o)));
  std::string pshape = g.op("Shape", R + "/Shape", {"position_ids"});
  std::string B = gather0(R + "/Gather", pshape, 0);
  std::string bshape = g.op("Concat", R + "/Concat",
                            {g.op("Unsqueeze", R + "/Unsqueeze", {B, c64({0})}), c64({1, 1})});
  Graph::attr(g.graph()->mutable_node(g.graph()->node_size() - 1), "axis", int64_t(0));
  std::string invx = g.op("Expand", R + "/Expand", {"model.rotary_emb.inv_freq", bshape});
  std::string pf = g.op("Cast", R + "/Cast",
                        {g.op("Unsqueeze", R + "/Unsqueeze_1", {"position_ids", c64({1})})});
  Graph::attr(g.graph()->mutable_node(g.graph()->node_size() - 1), "to", int64_t(kF32));
  std::string freqs = g.op("MatMul", R + "/MatMul", {invx, pf});  // [B, hs/2, S]
  auto* tr = g.node("Transpose", R + "/Transpose", {freqs}, {R + "/Transpose/output_0"});
  Graph::attr(tr, "perm", std::vector<int64_t>{0, 2, 1});
  auto* cc =
      g.node("Concat", R + "/Concat_1", {tr->output(0), tr->output(0)}, {R + "/Concat_1/output_0"});
  Graph::attr(cc, "axis", int64_t(-1));
  std::string cosv =
      g.op("Unsqueeze", R + "/Unsqueeze_2", {g.op("Cos", R + "/Cos", {cc->output(0)}), c64({1})});
  std::string sinv =
      g.op("Unsqueeze", R + "/Unsqueeze_3", {g.op("Sin", R + "/Sin", {cc->output(0)}), c64({1})});
  const std::string half_lo = c64({0}), half_mid = c64({hs / 2}),
                    half_end = c64({std::numeric_limits<int64_t>::max()}), ax3 = c64({3});
  const std::string eps = cf(o.rms_eps), two = cf(2.0f), onef = cf(1.0f),
                    scale = cf(float(1.0 / std::sqrt(double(hs))));
  auto rms = [&](const std::string& b, const std::string& in, const std::string& wn,
                 const std::string& key = "") -> Result<std::string> {
    OP_RETURN_IF_ERROR(g.floats(wn, {o.hidden}, norm_weight(o, key.empty() ? wn : key, o.hidden)));
    std::string p = g.op("Pow", b + "/Pow", {in, two});
    auto* rm = g.node("ReduceMean", b + "/ReduceMean", {p}, {b + "/ReduceMean/output_0"});
    Graph::attr(rm, "axes", std::vector<int64_t>{-1});
    Graph::attr(rm, "keepdims", int64_t(1));
    std::string a = g.op("Add", b + "/Add", {rm->output(0), eps});
    std::string sq = g.op("Sqrt", b + "/Sqrt", {a});
    std::string inv = g.op("Div", b + "/Div", {onef, sq});
    std::string y = g.op("Mul", b + "/Mul", {in, inv});
    return g.op("Mul", b + "/Mul_1", {wn, y});
  };
  auto matmul = [&](const std::string& b, const std::string& in, const std::string& wn,
                    const QLinear& q, const std::string& out = "") -> Result<std::string> {
    OP_RETURN_IF_ERROR(g.floats(wn, {q.k, q.n}, dequantize(q)));
    if (out.empty()) return g.op("MatMul", b, {in, wn});
    g.node("MatMul", b, {in, wn}, {out});
    return out;
  };
  auto heads = [&](const std::string& b, const std::string& in, int64_t nh) {
    std::string r = g.op("Reshape", b + "/Reshape", {in, c64({0, 0, nh, hs})});
    auto* t = g.node("Transpose", b + "/Transpose", {r}, {b + "/Transpose/output_0"});
    Graph::attr(t, "perm", std::vector<int64_t>{0, 2, 1, 3});
    return t->output(0);
  };
  auto rotary = [&](const std::string& b, const std::string& in) {
    std::string x1 = g.op("Slice", b + "/Slice", {in, half_lo, half_mid, ax3});
    std::string x2 = g.op("Slice", b + "/Slice_1", {in, half_mid, half_end, ax3});
    std::string n2 = g.op("Neg", b + "/Neg", {x2});
    auto* c = g.node("Concat", b + "/Concat", {n2, x1}, {b + "/Concat/output_0"});
    Graph::attr(c, "axis", int64_t(-1));
    std::string a = g.op("Mul", b + "/Mul", {in, cosv});
    std::string s = g.op("Mul", b + "/Mul_1", {c->output(0), sinv});
    return g.op("Add", b + "/Add", {a, s});
  };
  for (int64_t l = 0; l < o.layers; ++l) {
    const std::string L = "/model/layers." + std::to_string(l);
    const std::string W = "model.layers." + std::to_string(l);
    const std::string ls = std::to_string(l);
    const LayerWeights lw = layer_weights(o, l);
    OP_ASSIGN_OR_RETURN(std::string h,
                        rms(L + "/input_layernorm", x, W + ".input_layernorm.weight"));
    const std::string A = L + "/self_attn";
    OP_ASSIGN_OR_RETURN(std::string q,
                        matmul(A + "/q_proj/MatMul", h, W + ".self_attn.q_proj.weight", lw.q));
    OP_ASSIGN_OR_RETURN(std::string k,
                        matmul(A + "/k_proj/MatMul", h, W + ".self_attn.k_proj.weight", lw.k));
    OP_ASSIGN_OR_RETURN(std::string v,
                        matmul(A + "/v_proj/MatMul", h, W + ".self_attn.v_proj.weight", lw.v));
    q = rotary(A + "/q_rotary", heads(A + "/q", q, o.heads));
    k = rotary(A + "/k_rotary", heads(A + "/k", k, o.kv_heads));
    v = heads(A + "/v", v, o.kv_heads);
    auto* ck = g.node("Concat", A + "/Concat", {"past_key_values." + ls + ".key", k},
                      {"present." + ls + ".key"});
    Graph::attr(ck, "axis", int64_t(2));
    auto* cv = g.node("Concat", A + "/Concat_1", {"past_key_values." + ls + ".value", v},
                      {"present." + ls + ".value"});
    Graph::attr(cv, "axis", int64_t(2));
    k = "present." + ls + ".key";
    v = "present." + ls + ".value";
    if (rep > 1) {  // repeat_kv: [B, kvh, T, hs] -> [B, kvh, rep, T, hs] -> [B, H, T, hs]
      auto repeat = [&](const std::string& b, const std::string& in) {
        std::string u = g.op("Unsqueeze", b + "/Unsqueeze", {in, c64({2})});
        std::string e = g.op("Expand", b + "/Expand", {u, c64({1, 1, rep, 1, 1})});
        return g.op("Reshape", b + "/Reshape", {e, c64({0, o.heads, -1, hs})});
      };
      k = repeat(A + "/repeat_k", k);
      v = repeat(A + "/repeat_v", v);
    }
    auto* kt = g.node("Transpose", A + "/Transpose", {k}, {A + "/Transpose/output_0"});
    Graph::attr(kt, "perm", std::vector<int64_t>{0, 1, 3, 2});
    std::string sc = g.op("MatMul", A + "/MatMul", {q, kt->output(0)});
    sc = g.op("Mul", A + "/Mul", {sc, scale});
    sc = g.op("Add", A + "/Add", {sc, mask});
    auto* sm = g.node("Softmax", A + "/Softmax", {sc}, {A + "/Softmax/output_0"});
    Graph::attr(sm, "axis", int64_t(-1));
    std::string ctx = g.op("MatMul", A + "/MatMul_1", {sm->output(0), v});
    auto* ct = g.node("Transpose", A + "/Transpose_1", {ctx}, {A + "/Transpose_1/output_0"});
    Graph::attr(ct, "perm", std::vector<int64_t>{0, 2, 1, 3});
    ctx = g.op("Reshape", A + "/Reshape", {ct->output(0), c64({0, 0, qs})});
    OP_ASSIGN_OR_RETURN(std::string ao,
                        matmul(A + "/o_proj/MatMul", ctx, W + ".self_attn.o_proj.weight", lw.o));
    x = g.op("Add", L + "/Add", {x, ao});
    OP_ASSIGN_OR_RETURN(
        h, rms(L + "/post_attention_layernorm", x, W + ".post_attention_layernorm.weight"));
    const std::string P = L + "/mlp";
    OP_ASSIGN_OR_RETURN(std::string gate,
                        matmul(P + "/gate_proj/MatMul", h, W + ".mlp.gate_proj.weight", lw.gate));
    OP_ASSIGN_OR_RETURN(std::string up,
                        matmul(P + "/up_proj/MatMul", h, W + ".mlp.up_proj.weight", lw.up));
    std::string sg = g.op("Sigmoid", P + "/act_fn/Sigmoid", {gate});
    std::string act = g.op("Mul", P + "/act_fn/Mul", {gate, sg});
    std::string mul = g.op("Mul", P + "/Mul", {act, up});
    OP_ASSIGN_OR_RETURN(std::string down,
                        matmul(P + "/down_proj/MatMul", mul, W + ".mlp.down_proj.weight", lw.down));
    x = g.op("Add", L + "/Add_1", {x, down});
  }
  OP_ASSIGN_OR_RETURN(std::string fin, rms("/model/norm", x, "model.norm.weight", "final_norm"));
  const QLinear head = make_linear(o, "lm_head", o.hidden, o.vocab, 2.0f);
  OP_ASSIGN_OR_RETURN(std::string logits,
                      matmul("/lm_head/MatMul", fin, "lm_head.weight", head, "logits"));
  (void)logits;
  return ok_status();
}

}  // namespace

Result<DecoderOptions> decoder_preset(const std::string& name) {
  DecoderOptions o;
  if (name == "tiny") return o;
  if (name == "7b") {
    o.layers = 32;
    o.hidden = 4096;
    o.intermediate = 11008;
    o.heads = 32;
    o.kv_heads = 8;
    o.vocab = 32000;
    o.max_positions = 4096;
    o.block_size = 32;
    o.accuracy_level = 4;
    return o;
  }
  return invalid_argument("unknown decoder preset '" + name + "', expected tiny or 7b");
}

Status validate_decoder(const DecoderOptions& o) {
  auto need = [](bool ok, const std::string& m) { return ok ? ok_status() : invalid_argument(m); };
  OP_RETURN_IF_ERROR(need(o.form == "genai" || o.form == "optimum",
                          "--form '" + o.form + "': expected genai or optimum"));
  OP_RETURN_IF_ERROR(need(o.layers >= 0 && o.layers <= 4096, "--layers must be in [0, 4096]"));
  for (auto [v, n] : {std::pair{o.hidden, "--hidden"},
                      {o.intermediate, "--intermediate"},
                      {o.heads, "--heads"},
                      {o.kv_heads, "--kv-heads"},
                      {o.vocab, "--vocab"},
                      {o.max_positions, "--max-positions"}}) {
    OP_RETURN_IF_ERROR(need(v >= 1 && v <= (int64_t(1) << 24),
                            std::string(n) + " " + std::to_string(v) + " is not in [1, 2^24]"));
  }
  OP_RETURN_IF_ERROR(need(o.hidden % o.heads == 0, "--hidden " + std::to_string(o.hidden) +
                                                       " is not a multiple of --heads " +
                                                       std::to_string(o.heads)));
  OP_RETURN_IF_ERROR(need(
      (o.hidden / o.heads) % 2 == 0,
      "the head size " + std::to_string(o.hidden / o.heads) + " must be even (rotary embeddings)"));
  OP_RETURN_IF_ERROR(need(o.heads % o.kv_heads == 0, "--heads " + std::to_string(o.heads) +
                                                         " is not a multiple of --kv-heads " +
                                                         std::to_string(o.kv_heads)));
  OP_RETURN_IF_ERROR(
      need(o.block_size >= 16 && o.block_size <= 256 && (o.block_size & (o.block_size - 1)) == 0,
           "--block-size must be a power of 2 in [16, 256]"));
  OP_RETURN_IF_ERROR(need(o.hidden % o.block_size == 0 && o.intermediate % o.block_size == 0,
                          "--hidden and --intermediate must be multiples of --block-size " +
                              std::to_string(o.block_size)));
  OP_RETURN_IF_ERROR(
      need(o.accuracy_level == 0 || o.accuracy_level == 4, "--accuracy-level must be 0 or 4"));
  OP_RETURN_IF_ERROR(need(o.local_window == -1 || o.local_window >= 1,
                          "--local-window must be -1 (none) or at least 1"));
  // Every single tensor must be addressable: the largest is vocab x hidden floats.
  auto r = decoder_weight_bytes(o);
  return r.ok() ? ok_status() : r.status();
}

Result<uint64_t> decoder_weight_bytes(const DecoderOptions& o) {
  const uint64_t h = uint64_t(o.hidden), hs = h / uint64_t(o.heads), qs = uint64_t(o.heads) * hs,
                 kvs = uint64_t(o.kv_heads) * hs, I = uint64_t(o.intermediate),
                 V = uint64_t(o.vocab), L = uint64_t(o.layers);
  OP_ASSIGN_OR_RETURN(uint64_t embed, gen::checked_product({V, h, 4}, "embeddings"));
  uint64_t total = embed;
  if (o.form == "genai") {
    const uint64_t layer = 8 * h + nbits_bytes(o, h, qs + 2 * kvs) + nbits_bytes(o, qs, h) +
                           2 * nbits_bytes(o, h, I) + nbits_bytes(o, I, h);
    OP_ASSIGN_OR_RETURN(uint64_t layers, gen::checked_product({L, layer}, "layers"));
    total += layers + 4 * h + nbits_bytes(o, h, V) + 2 * 4 * uint64_t(o.max_positions) * (hs / 2);
  } else {
    const uint64_t layer = 8 * h + 4 * (h * (qs + 2 * kvs) + qs * h + 3 * h * I);
    OP_ASSIGN_OR_RETURN(uint64_t layers, gen::checked_product({L, layer}, "layers"));
    total += layers + 4 * h + 4 * h * V + 4 * (hs / 2);
  }
  if (total < embed) return invalid_argument("the weights' byte count overflows 64 bits");
  return total;
}

Result<WrittenModel> write_decoder(const DecoderOptions& o, const std::string& path,
                                   bool external) {
  OP_RETURN_IF_ERROR(validate_decoder(o));
  const std::string file = path.substr(path.find_last_of('/') + 1);
  OP_ASSIGN_OR_RETURN(auto g, Graph::create(external ? path + ".data" : "", file + ".data"));
  OP_RETURN_IF_ERROR(o.form == "genai" ? build_genai(*g, o) : build_optimum(*g, o));
  WrittenModel w;
  w.weight_bytes = g->weight_bytes();
  w.data_file = g->external_bytes() ? file + ".data" : "";
  w.nodes = g->graph()->node_size();
  w.initializers = g->graph()->initializer_size();
  OP_RETURN_IF_ERROR(g->finish(path));
  return w;
}

}  // namespace onnx_prepack::runtime
