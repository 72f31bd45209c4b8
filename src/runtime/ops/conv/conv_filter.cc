#include <cstdlib>
#include <cstring>

#include "runtime/ops/conv/conv_ops.h"

namespace onnx_prepack::runtime {
namespace {

class OwnedFilter final : public PreparedConvFilter {
 public:
  OwnedFilter(size_t floats, size_t mr) : mr_(mr) {
    data_ = static_cast<float*>(
        std::aligned_alloc(64, std::max<size_t>(64, (floats * 4 + 63) / 64 * 64)));
  }
  ~OwnedFilter() override { std::free(data_); }
  const float* data() const override { return data_; }
  size_t mr() const override { return mr_; }
  float* mutable_data() { return data_; }

 private:
  float* data_;
  size_t mr_;
};

}  // namespace

size_t conv_filter_rows(const kernels::ConvGeometry& g) {
  if (g.is_depthwise() && g.cg() == 1) return 0;
  return kernels::conv_gemm_kernel(device::host_isa_level())->mr;
}

Result<std::shared_ptr<const PreparedConvFilter>> prepare_conv_filter(
    BuildContext& ctx, int index, const kernels::ConvGeometry& g) {
  const ValueDesc& w = ctx.input(index);
  const size_t mr = conv_filter_rows(g);
  if (ctx.weights() != nullptr && w.is_initializer) {
    auto r = ctx.weights()->prepare_conv(w.name, *w.value, g, mr, ctx.node().name());
    if (!r.ok()) return r.status().with_context(ctx.where());
    if (*r != nullptr) return r;
  }
  const float* src = static_cast<const float*>(w.value->data);
  const size_t floats = kernels::blocked_filter_floats(g);
  auto f = std::make_shared<OwnedFilter>(floats, mr);
  if (f->data() == nullptr) return resource_exhausted(ctx.where() + ": cannot allocate the filter");
  if (mr == 0) {
    std::memcpy(f->mutable_data(), src, floats * sizeof(float));
  } else {
    kernels::pack_blocked_filter(src, g, mr, f->mutable_data());
  }
  return std::shared_ptr<const PreparedConvFilter>(std::move(f));
}

}  // namespace onnx_prepack::runtime
