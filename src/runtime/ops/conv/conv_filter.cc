#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "pack/conv_filter_format.h"
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

// The session's pack of the filter (null: none, the caller packs it): a hit
// in any format the kernels at this level read, its rows in mr().
Result<std::shared_ptr<const PreparedConvFilter>> prepared_filter(BuildContext& ctx, int index) {
  OP_ASSIGN_OR_RETURN(PreparedPack r, ctx.prepare_weight(index));
  auto f = packed_conv_filter(r);
  if (!f.ok()) return f.status().with_context(ctx.where());
  return f;
}

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
    OP_ASSIGN_OR_RETURN(auto f, prepared_filter(ctx, index));
    if (f != nullptr && (f->mr() == 0) == (mr == 0)) return f;
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

kernels::ConvScratch conv_scratch(Workspace* ws) {
  kernels::ConvScratch s;
  s.ctx = ws;
  s.get = [](void* ctx, size_t worker, size_t floats) -> float* {
    auto* w = static_cast<Workspace*>(ctx);
    float* p = w ? static_cast<float*>(w->get(worker, floats * sizeof(float))) : nullptr;
    if (p == nullptr) {
      // No workspace (or it could not grow): a per-thread buffer.
      thread_local std::unique_ptr<float[]> own;
      thread_local size_t own_size = 0;
      if (own_size < floats) {
        own.reset(new float[floats]);
        own_size = floats;
      }
      p = own.get();
    }
    return p;
  };
  return s;
}

size_t conv_transpose_pack_floats(const std::vector<int64_t>& dims,
                                  const kernels::ConvGeometry& gemm) {
  return kernels::blocked_filter_floats(gemm) + dims.size() * sizeof(int64_t) / sizeof(float);
}

Status pack_conv_transpose_filter(const float* w, const std::vector<int64_t>& dims,
                                  const kernels::ConvGeometry& gemm, float* dst) {
  const size_t mr = kernels::conv_gemm_kernel(device::host_isa_level())->mr;
  const pack::ConvFilterFormat* f =
      pack::conv_filter_format_for_rows(dims, gemm.group, mr, device::host_isa_level(), true);
  if (f == nullptr)
    return internal_error("no transposed filter format has " + std::to_string(mr) + " rows");
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(w),
                                 kernels::blocked_filter_floats(gemm) * sizeof(float));
  OP_ASSIGN_OR_RETURN(
      pack::ConvFilterSource src,
      pack::conv_filter_source(bytes, onnx::TensorProto::FLOAT, dims, gemm.group, true));
  // The kernel reads the blocks in place; the shape trailer after them is unused.
  return pack::conv_filter_pack(*f, src,
                                std::span<uint8_t>(reinterpret_cast<uint8_t*>(dst),
                                                   pack::conv_filter_payload_bytes(*f, src)));
}

Result<std::shared_ptr<const PreparedConvFilter>> prepare_conv_transpose_filter(
    BuildContext& ctx, const kernels::ConvGeometry& gemm) {
  const ValueDesc& w = ctx.input(1);
  const size_t mr = kernels::conv_gemm_kernel(device::host_isa_level())->mr;
  if (ctx.weights() != nullptr && w.is_initializer) {
    OP_ASSIGN_OR_RETURN(auto f, prepared_filter(ctx, 1));
    if (f != nullptr) return f;
  }
  auto f = std::make_shared<OwnedFilter>(conv_transpose_pack_floats(w.shape, gemm), mr);
  if (f->data() == nullptr) return resource_exhausted(ctx.where() + ": cannot allocate the filter");
  Status st = pack_conv_transpose_filter(static_cast<const float*>(w.value->data), w.shape, gemm,
                                         f->mutable_data());
  if (!st.ok()) return st.with_context(ctx.where());
  return std::shared_ptr<const PreparedConvFilter>(std::move(f));
}

}  // namespace onnx_prepack::runtime
