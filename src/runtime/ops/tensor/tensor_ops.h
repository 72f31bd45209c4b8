// Builders of the tensor family (data movement, shapes, indexing, resizing, padding) and the
// helpers they share. Each builder lives in a file of this folder; registry.cc
// lists them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime::tensor_family {

using BuildResult = Result<std::unique_ptr<Kernel>>;

BuildResult build_transpose(BuildContext& ctx);  // data_movement.cc
BuildResult build_gather(BuildContext& ctx);
BuildResult build_concat(BuildContext& ctx);
BuildResult build_slice(BuildContext& ctx);
BuildResult build_split(BuildContext& ctx);
BuildResult build_reshape(BuildContext& ctx);  // shape_ops.cc
BuildResult build_squeeze(BuildContext& ctx);
BuildResult build_unsqueeze(BuildContext& ctx);
BuildResult build_identity(BuildContext& ctx);
BuildResult build_shape(BuildContext& ctx);
BuildResult build_constant(BuildContext& ctx);
BuildResult build_constant_of_shape(BuildContext& ctx);
BuildResult build_expand(BuildContext& ctx);
BuildResult build_flatten(BuildContext& ctx);
BuildResult build_size(BuildContext& ctx);
BuildResult build_tile(BuildContext& ctx);
BuildResult build_depth_to_space(BuildContext& ctx);
BuildResult build_space_to_depth(BuildContext& ctx);
BuildResult build_trilu(BuildContext& ctx);
BuildResult build_range(BuildContext& ctx);
BuildResult build_pad(BuildContext& ctx);
BuildResult build_resize(BuildContext& ctx);
BuildResult build_upsample(BuildContext& ctx);
BuildResult build_gather_elements(BuildContext& ctx);
BuildResult build_gather_nd(BuildContext& ctx);
BuildResult build_scatter_elements(BuildContext& ctx);
BuildResult build_scatter_nd(BuildContext& ctx);
BuildResult build_one_hot(BuildContext& ctx);
BuildResult build_top_k(BuildContext& ctx);
BuildResult build_non_zero(BuildContext& ctx);
BuildResult build_compress(BuildContext& ctx);
BuildResult build_einsum(BuildContext& ctx);
BuildResult build_reverse_sequence(BuildContext& ctx);
BuildResult build_tensor_scatter(BuildContext& ctx);
BuildResult build_unique(BuildContext& ctx);
BuildResult build_grid_sample(BuildContext& ctx);
BuildResult build_eye_like(BuildContext& ctx);
BuildResult build_non_max_suppression(BuildContext& ctx);
BuildResult build_max_unpool(BuildContext& ctx);
BuildResult build_tfidf_vectorizer(BuildContext& ctx);
BuildResult build_roi_align(BuildContext& ctx);

// An input whose *value* decides an output's shape (NonZero, Compress, TopK's
// k, Range's limits) must be known at plan time: the value, or the planner's
// "needs the value" error (BuildContext::needs_value, so the CLI pins fed inputs and
// replans). The one place that produces that error for this family.
Result<const Tensor*> value_for_shape(const BuildContext& ctx, int input, std::string_view what);

// value_for_shape for integer inputs, as int64 values: int32/int64 only
// (pads, sizes, repeats, k), or any numeric type truncated (OneHot's depth).
Result<std::vector<int64_t>> ints_for_shape(const BuildContext& ctx, int input,
                                            std::string_view what, bool any_numeric = false);
// Fails unless the type has a fixed element width the kernels can move.
Status require_fixed_width(const BuildContext& ctx, int32_t dtype);
// Fails unless the type is int32 or int64 (indices).
Status require_index_type(const BuildContext& ctx, int32_t dtype, std::string_view what);
// Element i of an int32/int64 buffer.
inline int64_t index_at(const void* p, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t*>(p)[i] : int64_t(static_cast<const int32_t*>(p)[i]);
}
// Row-major element strides of a shape.
std::vector<int64_t> strides_of(const Shape& shape);
// Product of dims [begin, end).
int64_t dims_product(const Shape& shape, size_t begin, size_t end);
// out = transpose(in viewed as `in_shape`, perm): elements of `width` bytes.
void permute_copy(const void* in, void* out, const Shape& in_shape,
                  const std::vector<int64_t>& perm, size_t width, base::ThreadPool* pool);
// Values of a float/double/float16 tensor (scales, roi) as doubles.
Result<std::vector<double>> float_values(const Tensor& t, std::string_view what);
// Scalar value of a one-element tensor as double (any numeric type).
Result<double> scalar_as_double(const Tensor& t, std::string_view what);

}  // namespace onnx_prepack::runtime::tensor_family
