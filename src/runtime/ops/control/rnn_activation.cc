#include "runtime/ops/control/rnn_activation.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace onnx_prepack::runtime {

float RnnActivation::operator()(float x) const {
  switch (kind) {
    case Kind::kRelu:
      return std::max(x, 0.0f);
    case Kind::kTanh:
      return std::tanh(x);
    case Kind::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case Kind::kAffine:
      return alpha * x + beta;
    case Kind::kLeakyRelu:
      return x >= 0 ? x : alpha * x;
    case Kind::kThresholdedRelu:
      return x > alpha ? x : 0.0f;
    case Kind::kScaledTanh:
      return alpha * std::tanh(beta * x);
    case Kind::kHardSigmoid:
      return std::clamp(alpha * x + beta, 0.0f, 1.0f);
    case Kind::kElu:
      return x >= 0 ? x : alpha * (std::exp(x) - 1.0f);
    case Kind::kSoftsign:
      return x / (1.0f + std::fabs(x));
    case Kind::kSoftplus:
      return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0f);
  }
  return x;
}

namespace {

struct Known {
  const char* name;
  RnnActivation::Kind kind;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  float alpha, beta;
};

constexpr Known kKnown[] = {
    {"relu", RnnActivation::Kind::kRelu, 0, 0, 0},
    {"tanh", RnnActivation::Kind::kTanh, 0, 0, 0},
    {"sigmoid", RnnActivation::Kind::kSigmoid, 0, 0, 0},
    {"affine", RnnActivation::Kind::kAffine, 2, 1.0f, 0.0f},
    {"leakyrelu", RnnActivation::Kind::kLeakyRelu, 1, 0.01f, 0},
    {"thresholdedrelu", RnnActivation::Kind::kThresholdedRelu, 1, 1.0f, 0},
    {"scaledtanh", RnnActivation::Kind::kScaledTanh, 2, 1.0f, 1.0f},
    {"hardsigmoid", RnnActivation::Kind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"elu", RnnActivation::Kind::kElu, 1, 1.0f, 0},
    {"softsign", RnnActivation::Kind::kSoftsign, 0, 0, 0},
    {"softplus", RnnActivation::Kind::kSoftplus, 0, 0, 0},
};

}  // namespace

Result<std::vector<RnnActivation>> parse_rnn_activations(const BuildContext& ctx,
                                                         const std::vector<std::string>& defaults,
                                                         int directions) {
  std::vector<std::string> names;
  if (const auto* a = ctx.typed_attr("activations", onnx::AttributeProto::STRINGS)) {
    for (const auto& s : a->strings()) names.push_back(s);
  }
  if (names.empty()) names = defaults;
  size_t per = defaults.size();
  if (names.size() == per && directions == 2) {
    std::vector<std::string> twice = names;
    twice.insert(twice.end(), names.begin(), names.end());
    names = twice;
  }
  if (names.size() != per * size_t(directions)) {
    return ctx.error("activations lists " + std::to_string(names.size()) + " functions, " +
                     std::to_string(per) + " per direction are needed");
  }
  std::vector<float> alphas, betas;
  if (const auto* a = ctx.typed_attr("activation_alpha", onnx::AttributeProto::FLOATS))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const auto* a = ctx.typed_attr("activation_beta", onnx::AttributeProto::FLOATS))
    betas.assign(a->floats().begin(), a->floats().end());
  size_t ai = 0, bi = 0;
  std::vector<RnnActivation> out;
  for (const auto& name : names) {
    std::string lower = name;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    const Known* k = nullptr;
    for (const auto& cand : kKnown) {
      if (lower == cand.name) k = &cand;
    }
    if (k == nullptr) return ctx.error("activation '" + name + "' is not supported");
    RnnActivation act;
    act.kind = k->kind;
    act.alpha = k->alpha;
    act.beta = k->beta;
    if (k->params >= 1 && ai < alphas.size()) act.alpha = alphas[ai++];
    if (k->params >= 2 && bi < betas.size()) act.beta = betas[bi++];
    out.push_back(act);
  }
  return out;
}

}  // namespace onnx_prepack::runtime
