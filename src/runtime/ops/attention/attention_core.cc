#include "runtime/ops/attention/attention_core.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/vec_math/vec_math.h"
#include "runtime/ops/linalg/gemm.h"

namespace onnx_prepack::runtime::attention {

float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

namespace {

// Rows at or below this count use dot products instead of the GEMM driver
// (a decode step: packing K for one query row would cost as much as the product).
constexpr int64_t kDotRows = 2;

}  // namespace

namespace {

// attend_head on at most kRowBlock rows.
void attend_rows(const HeadParams& p, const float* q, int64_t q_ld, const float* k, int64_t k_ld,
                 const float* v, int64_t v_ld, const float* bias, int64_t bias_ld, float* out,
                 int64_t out_ld, float* scratch) {
  const int64_t S = p.rows, T = p.keys, H = p.head_size, Hv = p.v_size;
  if (S <= 0) return;
  if (T <= 0) {
    for (int64_t s = 0; s < S; ++s) std::fill(out + s * out_ld, out + s * out_ld + Hv, 0.0f);
    return;
  }
  const kernels::vec::VecKernels& vk = kernels::vec::host_vec_kernels();
  float* sc = scratch;  // S x T scores, then probabilities
  if (S <= kDotRows) {
    for (int64_t s = 0; s < S; ++s) {
      for (int64_t t = 0; t < T; ++t) sc[s * T + t] = dot(q + s * q_ld, k + t * k_ld, H);
    }
  } else {
    // K's rows may be strided (a head read in place from [B, T, N, D]): the pack gathers them.
    gemm_f32(size_t(S), size_t(T), size_t(H), q, size_t(q_ld), k, kernels::PackSourceLayout::kNK,
             sc, size_t(T), false, nullptr, 0, nullptr, size_t(k_ld));
  }
  const bool plain = p.softcap <= 0.0f && !p.smooth;
  for (int64_t s = 0; s < S; ++s) {
    float* row = sc + s * T;
    int64_t lo = 0, hi = T;
    if (p.causal) {
      const int64_t causal = p.past + s + 1;
      hi = std::min(T, std::max<int64_t>(0, causal));
      if (p.window > 0 && causal > p.window) lo = std::min(hi, causal - p.window);
    }
    const int64_t n = hi - lo;
    float* r = row + lo;
    if (plain) {
      // No softcap, no sink: scale, mask, then the vectorised softmax of kernels/vec_math
      // (max, exp, a float sum, one reciprocal). A row whose visible keys are all -inf comes
      // out NaN (-inf - -inf), as does one with a NaN score: NaN is kept where the unfused
      // Softmax would give it (all_masked_nan), zeros otherwise (the operators' empty row).
      const float* b = bias != nullptr ? bias + s * bias_ld + lo : nullptr;
      // Two loops, two roundings: one expression could be contracted into an FMA where the
      // baseline has one (aarch64), and the bits would then differ by architecture.
      for (int64_t t = 0; t < n; ++t) r[t] *= p.scale;
      if (b != nullptr) {
        for (int64_t t = 0; t < n; ++t) r[t] += b[t];
      }
      if (n > 0) vk.softmax_rows(r, r, 1, size_t(n));
      if (n == 0 || std::isnan(r[0])) {
        const float fill = p.all_masked_nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
        std::fill(row, row + T, fill);
        continue;
      }
      std::fill(row, r, 0.0f);
      std::fill(row + hi, row + T, 0.0f);
      continue;
    }
    if (p.softcap > 0.0f) {  // softcap * tanh(scale * qk / softcap), tanh vectorised
      for (int64_t t = 0; t < n; ++t) r[t] = r[t] * p.scale / p.softcap;
      vk.tanh(r, r, size_t(n));
      for (int64_t t = 0; t < n; ++t) r[t] *= p.softcap;
    } else {
      for (int64_t t = 0; t < n; ++t) r[t] *= p.scale;
    }
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t t = 0; t < n; ++t) {
      if (bias != nullptr) r[t] += bias[s * bias_ld + lo + t];
      mx = std::max(mx, r[t]);
    }
    if (p.smooth) mx = std::max(mx, p.sink);
    double sum = 0.0;
    if (mx != -std::numeric_limits<float>::infinity()) {
      for (int64_t t = 0; t < n; ++t) r[t] -= mx;
      vk.exp(r, r, size_t(n));  // the vectorised exp of kernels/vec_math (0 for -inf)
      for (int64_t t = 0; t < n; ++t) sum += r[t];
      if (p.smooth) sum += std::exp(p.sink - mx);
    }
    if (p.all_masked_nan && mx == -std::numeric_limits<float>::infinity()) {
      std::fill(row, row + T, std::numeric_limits<float>::quiet_NaN());
      continue;
    }
    const float inv = sum > 0.0 ? float(1.0 / sum) : 0.0f;
    for (int64_t t = 0; t < lo; ++t) row[t] = 0.0f;
    for (int64_t t = lo; t < hi; ++t) row[t] = sum > 0.0 ? row[t] * inv : 0.0f;
    for (int64_t t = hi; t < T; ++t) row[t] = 0.0f;
  }
  if (S <= kDotRows) {
    for (int64_t s = 0; s < S; ++s) {
      float* o = out + s * out_ld;
      std::fill(o, o + Hv, 0.0f);
      const float* row = sc + s * T;
      for (int64_t t = 0; t < T; ++t) {
        const float w = row[t];
        if (w == 0.0f) continue;
        const float* vr = v + t * v_ld;
        for (int64_t j = 0; j < Hv; ++j) o[j] += w * vr[j];
      }
    }
  } else {
    gemm_f32(size_t(S), size_t(Hv), size_t(T), sc, size_t(T), v, kernels::PackSourceLayout::kKN,
             out, size_t(out_ld), false, nullptr, 0, nullptr, size_t(v_ld));
  }
}

}  // namespace

void attend_head(const HeadParams& p, const float* q, int64_t q_ld, const float* k, int64_t k_ld,
                 const float* v, int64_t v_ld, const float* bias, int64_t bias_ld, float* out,
                 int64_t out_ld, float* scratch) {
  for (int64_t s0 = 0; s0 < p.rows; s0 += kRowBlock) {
    HeadParams b = p;
    b.rows = std::min(kRowBlock, p.rows - s0);
    b.past = p.past + s0;
    // Causal rows never see the keys after their last row's: they are left out.
    if (p.causal) b.keys = std::min(p.keys, std::max<int64_t>(0, b.past + b.rows));
    attend_rows(b, q + s0 * q_ld, q_ld, k, k_ld, v, v_ld, bias ? bias + s0 * bias_ld : nullptr,
                bias_ld, out + s0 * out_ld, out_ld, scratch);
  }
}

}  // namespace onnx_prepack::runtime::attention
