// Helpers shared by the extra family's operator files: the per-file builder
// lists joined in registry.cc, and small kernel/type helpers.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime::extra {

std::span<const OpEntry> loss_ops();       // losses.cc
std::span<const OpEntry> dropout_ops();    // dropout.cc
std::span<const OpEntry> misc_ops();       // misc.cc: EyeLike, MeanVarianceNormalization
std::span<const OpEntry> signal_ops();     // signal.cc: windows, DFT, STFT, MelWeightMatrix
std::span<const OpEntry> detection_ops();  // detection.cc: NonMaxSuppression, RoiAlign
std::span<const OpEntry> sampling_ops();   // grid_sample.cc: GridSample
std::span<const OpEntry> tfidf_ops();      // tfidf.cc: TfIdfVectorizer
std::span<const OpEntry> unpool_ops();     // max_unpool.cc: MaxUnpool

inline std::unique_ptr<Kernel> make_kernel(std::function<void(const KernelIO&)> fn) {
  return std::make_unique<FnKernel>(std::move(fn));
}

// Calls fn(TypeTag<T>{}) for float and double; false for other types.
template <typename Fn>
bool dispatch_float(int32_t dtype, Fn&& fn) {
  if (dtype == kFloat) return fn(TypeTag<float>{}), true;
  if (dtype == kDouble) return fn(TypeTag<double>{}), true;
  return false;
}

// Element count of a shape, or an error naming the node when it is negative or too large.
inline Result<int64_t> checked_elements(const BuildContext& ctx, const Shape& s) {
  int64_t n = checked_numel(s);
  if (n < 0) return ctx.error("shape " + shape_string(s) + " is negative or too large");
  return n;
}

}  // namespace onnx_prepack::runtime::extra
