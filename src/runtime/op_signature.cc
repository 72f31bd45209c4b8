#include "runtime/op_signature.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "format/data_type.h"

namespace onnx_prepack::runtime {
namespace {

struct Signature {
  const char* op;
  int since;
  int min_inputs, max_inputs, min_outputs, max_outputs;
  const char* attributes;     // "[!]name=type ...", '!' when required
  const char* input_types;    // a hex mask of TensorProto types per input, "0": any
  const char* type_params;    // the type parameter of each input ("T"), "-" for a fixed type
  const char* output_params;  // the type parameter of each output
};

constexpr Signature kSignatures[] = {
#include "runtime/op_signatures.inc"
};

// Opsets up to this one have every attribute listed; past it, versions not in the table may
// have added attributes, so only counts are checked unless the table has that version.
constexpr int kFullyListedOpset = 17;

const Signature* find_signature(std::string_view op, int opset) {
  const Signature* best = nullptr;
  for (const Signature& s : kSignatures) {
    if (op == s.op && s.since <= opset && (best == nullptr || s.since > best->since)) best = &s;
  }
  return best;
}

std::string count_text(int lo, int hi) {
  if (hi == lo) return std::to_string(lo);
  if (hi == 2147483647) return std::to_string(lo) + " or more";
  return std::to_string(lo) + " to " + std::to_string(hi);
}

// The AttributeProto type the signature gives `name`, or -1 when it lists no such attribute;
// `required` tells whether it must be present.
int attribute_type(std::string_view list, std::string_view name, bool* required) {
  while (!list.empty()) {
    const size_t end = std::min(list.find(' '), list.size());
    std::string_view item = list.substr(0, end);
    list.remove_prefix(std::min(end + 1, list.size()));
    const bool req = !item.empty() && item[0] == '!';
    if (req) item.remove_prefix(1);
    const size_t eq = item.find('=');
    if (item.substr(0, eq) == name) {
      *required = req;
      return std::stoi(std::string(item.substr(eq + 1)));
    }
  }
  return -1;
}

// Word `index` of a space-separated list, the last one past its end (variadic inputs).
std::string_view word(std::string_view list, int index) {
  std::string_view w;
  for (int i = 0; !list.empty() && i <= index; ++i) {
    const size_t end = std::min(list.find(' '), list.size());
    w = list.substr(0, end);
    list.remove_prefix(std::min(end + 1, list.size()));
  }
  return w;
}

// The mask of input `index` in "m0 m1 ...": the last one for the inputs past the list
// (variadic), 0 (unchecked) when there is none.
uint64_t type_mask(std::string_view list, int index) {
  uint64_t mask = 0;
  for (int i = 0; !list.empty() && i <= index; ++i) {
    const size_t end = std::min(list.find(' '), list.size());
    mask = std::strtoull(std::string(list.substr(0, end)).c_str(), nullptr, 16);
    list.remove_prefix(std::min(end + 1, list.size()));
  }
  return mask;
}

}  // namespace

Status check_signature(const onnx::NodeProto& node, int opset,
                       std::span<const int32_t> input_types) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return Status();
  const Signature* s = find_signature(node.op_type(), opset);
  if (s == nullptr) return Status();
  const std::string where = "node '" + node.name() + "' (" + node.op_type() + "): ";
  const std::string version = node.op_type() + "-" + std::to_string(s->since);
  if (node.input_size() < s->min_inputs || node.input_size() > s->max_inputs) {
    return invalid_argument(where + std::to_string(node.input_size()) + " inputs, " + version +
                            " takes " + count_text(s->min_inputs, s->max_inputs));
  }
  if (node.output_size() < s->min_outputs || node.output_size() > s->max_outputs) {
    return invalid_argument(where + std::to_string(node.output_size()) + " outputs, " + version +
                            " has " + count_text(s->min_outputs, s->max_outputs));
  }
  if (opset > kFullyListedOpset && s->since <= kFullyListedOpset) return Status();
  for (size_t i = 0; i < input_types.size(); ++i) {
    const int32_t t = input_types[i];
    const uint64_t mask = type_mask(s->input_types, int(i));
    if (t <= 0 || t >= 64 || mask == 0 || (mask >> t & 1) != 0) continue;
    return invalid_argument(where + "input " + std::to_string(i) + " '" + node.input(int(i)) +
                            "' is " + std::string(format::data_type_name(t)) + ", which " +
                            version + " does not take");
  }
  // Inputs bound to one type parameter have one element type (Sum(float16, float) is not T).
  for (size_t i = 0; i < input_types.size(); ++i) {
    const std::string_view pi = word(s->type_params, int(i));
    if (input_types[i] <= 0 || pi.empty() || pi == "-") continue;
    for (size_t j = 0; j < i; ++j) {
      if (input_types[j] <= 0 || word(s->type_params, int(j)) != pi) continue;
      if (input_types[j] == input_types[i]) break;
      return invalid_argument(where + "inputs " + std::to_string(j) + " and " + std::to_string(i) +
                              " are both " + std::string(pi) + " of " + version + " but " +
                              std::string(format::data_type_name(input_types[j])) + " and " +
                              std::string(format::data_type_name(input_types[i])));
    }
  }
  const std::string_view list = s->attributes;
  for (const auto& a : node.attribute()) {
    bool required = false;
    const int type = attribute_type(list, a.name(), &required);
    if (type < 0) {
      return invalid_argument(where + "attribute '" + a.name() + "' is not defined for " + version);
    }
    // Models older than IR version 2 leave the type unset: the builder reads the field.
    if (a.type() != onnx::AttributeProto::UNDEFINED && a.type() != type) {
      return invalid_argument(
          where + "attribute '" + a.name() + "' must be " +
          onnx::AttributeProto::AttributeType_Name(onnx::AttributeProto::AttributeType(type)) +
          ", got " + onnx::AttributeProto::AttributeType_Name(a.type()) + " (" + version + ")");
    }
  }
  for (std::string_view rest = list; !rest.empty();) {
    const size_t end = std::min(rest.find(' '), rest.size());
    std::string_view item = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (item.empty() || item[0] != '!') continue;
    const std::string_view name = item.substr(1, item.find('=') - 1);
    bool present = false;
    for (const auto& a : node.attribute()) present = present || a.name() == name;
    if (!present) {
      return invalid_argument(where + version + " requires attribute '" + std::string(name) + "'");
    }
  }
  return Status();
}

int output_type_input(const onnx::NodeProto& node, int opset, int output) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return -1;
  const Signature* s = find_signature(node.op_type(), opset);
  if (s == nullptr || s->output_params == nullptr || *s->output_params == 0) return -1;
  const std::string_view p = word(s->output_params, output);
  if (p.empty() || p == "-") return -2;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty() && word(s->type_params, i) == p) return i;
  }
  return -2;
}

}  // namespace onnx_prepack::runtime
