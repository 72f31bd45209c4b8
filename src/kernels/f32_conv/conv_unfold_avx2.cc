// The unfold compiled for avx2 (conv_unfold_impl.h).
#include "kernels/f32_conv/conv_unfold_impl.h"

namespace onnx_prepack::kernels {

void conv_unfold_avx2(const ConvGeometry& g, const float* x, size_t k0, size_t kc,
                      const std::vector<Segment>& segs, int64_t p0, size_t nr, float* buf) {
  unfold(g, x, k0, kc, segs, p0, nr, buf);
}

}  // namespace onnx_prepack::kernels
