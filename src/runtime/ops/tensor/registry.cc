// The tensor family's operator list (see kernel.h); each operator's builder lives
// in a file of this folder (declared in tensor_ops.h).
#include "runtime/kernel.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime {
namespace {

using namespace tensor_family;

constexpr OpEntry kOps[] = {
    {"Transpose", build_transpose},
    {"Gather", build_gather},
    {"Concat", build_concat},
    {"Slice", build_slice},
    {"Split", build_split},
    {"Reshape", build_reshape},
    {"Squeeze", build_squeeze},
    {"Unsqueeze", build_unsqueeze},
    {"Identity", build_identity},
    {"Shape", build_shape},
    {"Constant", build_constant},
    {"ConstantOfShape", build_constant_of_shape},
    {"Expand", build_expand},
    {"Flatten", build_flatten},
    {"Size", build_size},
    {"Tile", build_tile},
    {"DepthToSpace", build_depth_to_space},
    {"SpaceToDepth", build_space_to_depth},
    {"Trilu", build_trilu},
    {"Range", build_range},
    {"GatherElements", build_gather_elements},
    {"GatherND", build_gather_nd},
    {"Scatter", build_scatter_elements},
    {"ScatterElements", build_scatter_elements},
    {"ScatterND", build_scatter_nd},
    {"Pad", build_pad},
    {"Resize", build_resize},
    {"Upsample", build_upsample},
    {"OneHot", build_one_hot},
    {"TopK", build_top_k},
    {"NonZero", build_non_zero},
    {"Compress", build_compress},
    {"Einsum", build_einsum},
    {"ReverseSequence", build_reverse_sequence},
    {"TensorScatter", build_tensor_scatter},
    {"Unique", build_unique},
    {"GridSample", build_grid_sample},
    {"EyeLike", build_eye_like},
    {"NonMaxSuppression", build_non_max_suppression},
    {"MaxUnpool", build_max_unpool},
    {"TfIdfVectorizer", build_tfidf_vectorizer},
    {"RoiAlign", build_roi_align},
};

}  // namespace

std::span<const OpEntry> tensor_ops() { return kOps; }

}  // namespace onnx_prepack::runtime
