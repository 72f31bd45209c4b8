#include "engine/decoder_signature.h"

#include <algorithm>
#include <map>

#include "format/model.h"
#include "runtime/session.h"

namespace onnx_prepack::engine {
namespace {

using runtime::GraphInput;

// "past_key_values.N.key" -> N and "key"; false for other names.
bool parse_past_name(const std::string& name, int& layer, std::string& kind) {
  static const std::string prefix = "past_key_values.";
  if (name.rfind(prefix, 0) != 0) return false;
  const size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return false;
  const std::string n = name.substr(prefix.size(), dot - prefix.size());
  if (n.size() > 6 || !std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  kind = name.substr(dot + 1);
  if (kind != "key" && kind != "value") return false;
  layer = std::stoi(n);
  return true;
}

bool is_int_ids(int32_t t) { return t == runtime::kInt64 || t == runtime::kInt32; }
bool is_float(int32_t t) { return t == runtime::kFloat || t == runtime::kFloat16; }

}  // namespace

Result<DecoderSignature> read_decoder_signature(const Engine& engine) {
  DecoderSignature sig;
  const auto fail = [](const std::string& what) {
    return invalid_argument("generator: " + what + " (docs/llm.md, \"Generation\")");
  };
  std::map<std::pair<int, std::string>, const GraphInput*> past;
  bool has_ids = false, has_mask = false;
  for (const GraphInput& in : engine.inputs()) {
    int layer = 0;
    std::string kind;
    if (in.name == kInputIds) {
      if (!is_int_ids(in.dtype) || (in.has_shape && in.dims.size() != 2))
        return fail("input 'input_ids' must be a 2-D INT64 or INT32 [batch, sequence] tensor");
      sig.ids_dtype = in.dtype;
      has_ids = true;
    } else if (in.name == kAttentionMask) {
      if (!is_int_ids(in.dtype) || (in.has_shape && in.dims.size() != 2))
        return fail("input 'attention_mask' must be a 2-D INT64 or INT32 [batch, length] tensor");
      sig.mask_dtype = in.dtype;
      has_mask = true;
    } else if (in.name == kPositionIds) {
      if (!is_int_ids(in.dtype) || (in.has_shape && in.dims.size() != 2))
        return fail("input 'position_ids' must be a 2-D INT64 or INT32 [batch, sequence] tensor");
      sig.position_dtype = in.dtype;
      sig.has_position_ids = true;
    } else if (parse_past_name(in.name, layer, kind)) {
      past[{layer, kind}] = &in;
    } else if (!in.has_initializer) {
      return fail("the model's input '" + in.name +
                  "' is none the generator feeds (input_ids, attention_mask, position_ids, "
                  "past_key_values.N.key / .value)");
    }
  }
  if (!has_ids) return fail("the model has no 'input_ids' input");
  if (!has_mask) return fail("the model has no 'attention_mask' input");
  if (past.empty()) return fail("the model has no 'past_key_values.N.key' inputs (no KV cache)");

  const auto& outs = engine.output_names();
  const auto has_output = [&](const std::string& n) {
    return std::find(outs.begin(), outs.end(), n) != outs.end();
  };
  if (!has_output(kLogits)) return fail("the model has no 'logits' output");
  const int layers = past.rbegin()->first.first + 1;
  for (int l = 0; l < layers; ++l) {
    for (const char* kind : {"key", "value"}) {
      auto it = past.find({l, kind});
      const std::string name = "past_key_values." + std::to_string(l) + "." + kind;
      if (it == past.end()) return fail("the model has no input '" + name + "'");
      const GraphInput& in = *it->second;
      if (!is_float(in.dtype)) return fail("input '" + name + "' must be FLOAT or FLOAT16");
      if (sig.kv_dtype != 0 && in.dtype != sig.kv_dtype)
        return fail("input '" + name + "' has another element type than past_key_values.0.key");
      if (!in.has_shape || in.dims.size() != 4 || in.dims[1] <= 0 || in.dims[3] <= 0) {
        return fail("input '" + name + "' must be [batch, heads, sequence, head_size] with " +
                    "heads and head_size fixed, not " +
                    (in.has_shape ? runtime::shape_string(in.dims) : std::string("unknown")));
      }
      const std::string present = "present." + std::to_string(l) + "." + kind;
      if (!has_output(present)) return fail("the model has no output '" + present + "'");
      sig.kv_dtype = in.dtype;
      sig.kv.push_back({name, present, in.dims[1], in.dims[3]});
    }
  }
  // The logits' type and vocabulary come from the graph's declared output.
  for (const auto& vi : engine.model().proto().graph().output()) {
    if (vi.name() != kLogits) continue;
    const auto& tt = vi.type().tensor_type();
    sig.logits_dtype = tt.elem_type();
    if (tt.has_shape() && tt.shape().dim_size() == 3 && tt.shape().dim(2).has_dim_value())
      sig.vocab = tt.shape().dim(2).dim_value();
  }
  if (!is_float(sig.logits_dtype)) return fail("output 'logits' must be FLOAT or FLOAT16");
  sig.form = DecoderForm::kOptimum;
  for (const auto& node : engine.model().proto().graph().node()) {
    if (node.op_type() == "GroupQueryAttention" && node.domain() == "com.microsoft") {
      sig.form = DecoderForm::kGenai;
      break;
    }
  }
  return sig;
}

}  // namespace onnx_prepack::engine
