// Conv (opsets 1-22): 1-D, 2-D and 3-D, groups, dilations, strides, pads,
// auto_pad, bias. Depthwise 1-D/2-D filters run the direct depthwise kernel;
// everything else the blocked kernel on a filter packed in blocks of the GEMM
// microkernel's rows (kernels/f32_conv/f32_conv.h), read by the indirect
// kernel (unit-stride rows, no unfold; not for the 8-row blocks of the NEON
// tile on aarch64) or the blocked one (unfold), or, for
// small maps and batches of them, by the batch-folded kernel
// (kernels/f32_conv/conv_folded.h) with the same bits. A constant filter is
// packed once when the kernel is built (or prepared by the session's
// WeightPreparer).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "kernels/f32_conv/conv_folded.h"
#include "kernels/f32_conv/f32_conv.h"
#include "runtime/ops/conv/conv_ops.h"
#include "runtime/ops/conv/spatial.h"
#include "runtime/pointwise_fusion.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {
namespace {

using kernels::ConvGeometry;

struct AlignedFloats {
  std::shared_ptr<float> data;
  explicit AlignedFloats(size_t n) {
    void* p = std::aligned_alloc(64, std::max<size_t>(64, (n * 4 + 63) / 64 * 64));
    data = std::shared_ptr<float>(static_cast<float*>(p), std::free);
  }
};

class ConvKernel final : public Kernel {
 public:
  ConvKernel(ConvGeometry g, std::shared_ptr<const PreparedConvFilter> filter, bool has_bias)
      : g_(g), filter_(std::move(filter)), has_bias_(has_bias) {
    dw_ = g_.is_depthwise() && g_.cg() == 1;
    if (dw_) {
      row_ = kernels::dw_row_select(device::host_isa_level());
    } else {
      // The filter's rows choose the microkernel: a compiled pack of another
      // level's rows (m6 on an AVX-512 host) runs on the kernel that reads it.
      uk_ = filter_ != nullptr
                ? kernels::conv_gemm_kernel_rows(filter_->mr(), device::host_isa_level())
                : kernels::conv_gemm_kernel(device::host_isa_level());
      // Unit column stride: the indirect kernel reads the padded input in place.
      if (kernels::conv_indirect_applies(g_)) {
        indirect_ = kernels::conv_indirect_select(uk_->mr, device::host_isa_level());
      }
      // Small maps fill few of the per-image paths' columns: fold the batch
      // into the GEMM's columns, keeping the chain (bias first when the
      // indirect kernel is the one replaced).
      folded_ = uk_ != nullptr && kernels::conv_folded_applies(g_, *uk_, indirect_ != nullptr);
    }
  }

  // This Conv writing into io.out[e.raw] and running e.chain on each finished
  // run of its output (session_fusion.cc, fuse_conv_epilogue).
  std::unique_ptr<Kernel> with_output_epilogue(const OutputEpilogue& e) const override {
    auto k = std::make_unique<ConvKernel>(*this);
    k->epilogue_ = std::make_shared<const FusedProgram>(e.chain);
    k->raw_ = e.raw;
    return k;
  }

  void run(const KernelIO& io) const override {
    const float* x = static_cast<const float*>(io.in[0]);
    const float* bias = has_bias_ ? static_cast<const float*>(io.in[2]) : nullptr;
    float* y = static_cast<float*>(io.out[size_t(raw_)]);
    if (g_.n == 0 || g_.m == 0 || g_.out_pixels() == 0) return;
    // The epilogue's view of a run of final outputs: row n * M + m of the chain.
    struct Post {
      const FusedProgram* program;
      const KernelIO* io;
      int64_t m, p;
    } post_ctx{epilogue_.get(), &io, g_.m, g_.out_pixels()};
    kernels::ConvOutputEpilogue post_fn;
    post_fn.ctx = &post_ctx;
    post_fn.fn = [](const void* ctx, int64_t n, int64_t m, int64_t p0, size_t len) {
      const Post& c = *static_cast<const Post*>(ctx);
      const int64_t row = n * c.m + m;
      c.program->run_span(*c.io, row, row * c.p + p0, int64_t(len));
    };
    const kernels::ConvOutputEpilogue* post = epilogue_ != nullptr ? &post_fn : nullptr;
    if (g_.k() == 0) {  // no input channels: the bias alone
      for (int64_t n = 0; n < g_.n; ++n) {
        for (int64_t m = 0; m < g_.m; ++m) {
          float* ym = y + (n * g_.m + m) * g_.out_pixels();
          for (int64_t p = 0; p < g_.out_pixels(); ++p) ym[p] = bias ? bias[m] : 0.0f;
          if (post != nullptr) post->fn(post->ctx, n, m, 0, size_t(g_.out_pixels()));
        }
      }
      return;
    }
    const float* w = static_cast<const float*>(io.in[1]);
    std::shared_ptr<float> per_run;
    const float* packed = nullptr;
    if (filter_ != nullptr) {
      packed = filter_->data();
    } else if (dw_) {
      packed = w;  // [C][taps] is the source order
    } else {
      per_run = AlignedFloats(kernels::blocked_filter_floats(g_)).data;
      kernels::pack_blocked_filter(w, g_, uk_->mr, per_run.get());
      packed = per_run.get();
    }
    const kernels::ConvScratch s = conv_scratch(io.workspace);
    if (dw_) {
      kernels::conv_depthwise(g_, row_, x, packed, bias, y, io.pool, s, post);
    } else if (folded_) {
      kernels::conv_folded(g_, *uk_, indirect_ != nullptr, x, packed, bias, y, io.pool, s, post);
    } else if (indirect_ != nullptr) {
      kernels::conv_indirect(g_, *indirect_, x, packed, bias, y, io.pool, s, post);
    } else {
      kernels::conv_blocked(g_, *uk_, x, packed, bias, y, io.pool, s, post);
    }
  }

  // The indirect kernel copies the padded input of a group; the folded one takes
  // its panels and output tile, at most kFoldedMaxTileFloats plus a constant, per
  // worker (dims-lint: ok, the geometry's sizes were checked when the node was built).
  uint64_t scratch_bytes() const override {
    if (folded_) return uint64_t(kernels::conv_folded_scratch_floats(g_, *uk_)) * sizeof(float);
    if (indirect_ == nullptr) return 0;
    return uint64_t(kernels::conv_indirect_buffer_floats(g_, indirect_->nr)) * sizeof(float);
  }

 private:
  ConvGeometry g_;
  std::shared_ptr<const PreparedConvFilter> filter_;
  bool has_bias_;
  bool dw_ = false;
  bool folded_ = false;
  kernels::DwRowFn row_ = nullptr;
  const kernels::F32GemmKernel* uk_ = nullptr;
  const kernels::ConvIndirectKernel* indirect_ = nullptr;
  // The fused elementwise chain run on the output while it is in cache, and
  // the io.out slot the convolution writes into (OutputEpilogue).
  std::shared_ptr<const FusedProgram> epilogue_;
  int raw_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> build_conv(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_ASSIGN_OR_RETURN(const ValueDesc* w, ctx.require_input(1));
  const bool has_bias = ctx.has_input(2);
  if (x->dtype != kFloat || w->dtype != kFloat || (has_bias && ctx.input(2).dtype != kFloat)) {
    return ctx.error("only float inputs are supported, got X " + dtype_name(x->dtype) + " and W " +
                     dtype_name(w->dtype));
  }
  if (x->shape.size() < 3 || x->shape.size() > 5 || w->shape.size() != x->shape.size()) {
    return ctx.error("X " + shape_string(x->shape) + " and W " + shape_string(w->shape) +
                     " must both have rank 3, 4 or 5");
  }
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t c = x->shape[1], m = w->shape[0];
  if (group <= 0 || c % group != 0 || m % group != 0) {
    return ctx.error("group " + std::to_string(group) + " does not divide " + std::to_string(c) +
                     " input channels and " + std::to_string(m) + " output channels");
  }
  if (w->shape[1] != c / group) {
    return ctx.error("W " + shape_string(w->shape) + " needs " + std::to_string(c / group) +
                     " input channels per group (X " + shape_string(x->shape) + ", group " +
                     std::to_string(group) + ")");
  }
  if (has_bias && ctx.input(2).shape != Shape{m}) {
    return ctx.error("B " + shape_string(ctx.input(2).shape) + " must be [" + std::to_string(m) +
                     "]");
  }
  std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  if (auto ks = ctx.attr_ints("kernel_shape"); ks && !ks->empty() && *ks != kernel) {
    return ctx.error("kernel_shape does not match W " + shape_string(w->shape));
  }
  OP_ASSIGN_OR_RETURN(Window win, read_window(ctx, x->shape, kernel, false));
  Shape out{x->shape[0], m};
  out.insert(out.end(), win.out.begin(), win.out.end());
  ctx.set_output(0, kFloat, out);
  const ConvGeometry g = to_geometry(win, x->shape[0], c, m, group);
  std::shared_ptr<const PreparedConvFilter> filter;
  if (w->value != nullptr && g.k() > 0 && m > 0) {
    OP_ASSIGN_OR_RETURN(filter, prepare_conv_filter(ctx, 1, g));
  }
  return std::unique_ptr<Kernel>(new ConvKernel(g, std::move(filter), has_bias));
}

}  // namespace onnx_prepack::runtime
