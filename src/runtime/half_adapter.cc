#include "runtime/half_adapter.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/vec_math/vec_half.h"
#include "kernels/vec_math/vec_half_binary.h"
#include "pack/pack_family.h"
#include "runtime/op_signature.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {
namespace {

bool is_half(int32_t dt) { return dt == kFloat16 || dt == kBfloat16; }

void widen(int32_t dt, const uint16_t* in, float* out, int64_t n, base::ThreadPool* pool) {
  const kernels::vec::HalfConvert& hc = kernels::vec::host_half_convert();
  auto fn = dt == kFloat16 ? hc.f16_to_f32 : hc.bf16_to_f32;
  parallel_range(pool, n, 16384, [&](int64_t b, int64_t e) { fn(in + b, out + b, size_t(e - b)); });
}

void narrow(int32_t dt, const float* in, uint16_t* out, int64_t n, base::ThreadPool* pool) {
  const kernels::vec::HalfConvert& hc = kernels::vec::host_half_convert();
  auto fn = dt == kFloat16 ? hc.f32_to_f16 : hc.f32_to_bf16;
  parallel_range(pool, n, 16384, [&](int64_t b, int64_t e) { fn(in + b, out + b, size_t(e - b)); });
}

// Float scratch for this thread's adapted kernels, grown on demand and kept,
// one buffer per nesting depth (a subgraph's kernels run inside a kernel);
// separate from the session Workspace, which the wrapped kernel may use.
class ScratchLease {
 public:
  explicit ScratchLease(size_t floats) {
    if (buffers().size() <= depth()) buffers().push_back(std::make_unique<Buffer>());
    Buffer& b = *buffers()[depth()++];
    if (b.size < floats) {
      std::free(b.data);
      size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
      b.data = static_cast<float*>(std::aligned_alloc(64, bytes));
      b.size = b.data ? floats : 0;
    }
    data_ = b.data;
  }
  ~ScratchLease() { --depth(); }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  float* data() const { return data_; }

 private:
  struct Buffer {
    float* data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  static std::vector<std::unique_ptr<Buffer>>& buffers() {
    thread_local std::vector<std::unique_ptr<Buffer>> b;
    return b;
  }
  static size_t& depth() {
    thread_local size_t d = 0;
    return d;
  }
  float* data_ = nullptr;
};

struct Slot {
  int index;
  int32_t dtype;  // the 16-bit type
  int64_t count;
};

class HalfKernel final : public Kernel {
 public:
  HalfKernel(std::unique_ptr<Kernel> inner, std::vector<Slot> ins, std::vector<Slot> outs,
             std::vector<HostTensor> widened_constants, std::vector<const void*> constant_ptrs)
      : inner_(std::move(inner)),
        ins_(std::move(ins)),
        outs_(std::move(outs)),
        keep_(std::move(widened_constants)),
        constant_ptrs_(std::move(constant_ptrs)) {
    for (const Slot& s : ins_) total_ += size_t(s.count);
    for (const Slot& s : outs_) total_ += size_t(s.count);
  }

  void run(const KernelIO& io) const override {
    ScratchLease lease(std::max<size_t>(total_, 1));
    float* buf = lease.data();
    if (buf == nullptr) return;  // allocation failure: outputs stay as they are
    std::vector<void*> in(io.in.begin(), io.in.end()), out(io.out.begin(), io.out.end());
    size_t at = 0;
    for (const Slot& s : ins_) {
      if (in[size_t(s.index)] == nullptr) continue;
      widen(s.dtype, static_cast<const uint16_t*>(in[size_t(s.index)]), buf + at, s.count, io.pool);
      in[size_t(s.index)] = buf + at;
      at += size_t(s.count);
    }
    for (size_t i = 0; i < constant_ptrs_.size(); ++i) {
      if (constant_ptrs_[i] != nullptr) in[i] = const_cast<void*>(constant_ptrs_[i]);
    }
    std::vector<float*> results;
    for (const Slot& s : outs_) {
      results.push_back(buf + at);
      if (out[size_t(s.index)] != nullptr) out[size_t(s.index)] = buf + at;
      at += size_t(s.count);
    }
    inner_->run(KernelIO{in, out, io.pool, io.workspace, io.status, io.limits});
    for (size_t i = 0; i < outs_.size(); ++i) {
      const Slot& s = outs_[i];
      if (io.out[size_t(s.index)] == nullptr) continue;
      narrow(s.dtype, results[i], static_cast<uint16_t*>(io.out[size_t(s.index)]), s.count,
             io.pool);
    }
  }

 private:
  std::unique_ptr<Kernel> inner_;
  std::vector<Slot> ins_, outs_;
  std::vector<HostTensor> keep_;
  std::vector<const void*> constant_ptrs_;  // per input: widened constant, or null
  size_t total_ = 0;
};

// FLOAT16 Add/Sub/Mul/Div computed on the 16-bit values (vec_half_binary.h):
// the same bits as widening, the float kernel and narrowing, without the
// float scratch. Each input is the output's layout (stride 1) or one element
// (stride 0); a constant input's bits are copied at build.
class HalfBinaryKernel final : public Kernel {
 public:
  HalfBinaryKernel(kernels::vec::HalfBinaryFn fn, int op, size_t sa, size_t sb, int64_t n,
                   std::vector<uint16_t> const_a, std::vector<uint16_t> const_b)
      : fn_(fn),
        op_(op),
        sa_(sa),
        sb_(sb),
        n_(n),
        const_a_(std::move(const_a)),
        const_b_(std::move(const_b)) {}

  void run(const KernelIO& io) const override {
    const auto* a = const_a_.empty() ? static_cast<const uint16_t*>(io.in[0]) : const_a_.data();
    const auto* b = const_b_.empty() ? static_cast<const uint16_t*>(io.in[1]) : const_b_.data();
    auto* o = static_cast<uint16_t*>(io.out[0]);
    if (a == nullptr || b == nullptr || o == nullptr) return;
    parallel_range(io.pool, n_, 16384, [&](int64_t s, int64_t e) {
      fn_(op_, a + size_t(s) * sa_, sa_, b + size_t(s) * sb_, sb_, o + s, size_t(e - s));
    });
  }

 private:
  kernels::vec::HalfBinaryFn fn_;
  int op_;
  size_t sa_, sb_;
  int64_t n_;
  std::vector<uint16_t> const_a_, const_b_;
};

// The vec::BinaryOp of an ONNX Add/Sub/Mul/Div node, or -1.
int half_binary_op(const onnx::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return -1;
  const std::string& t = node.op_type();
  if (t == "Add") return kernels::vec::kAdd;
  if (t == "Sub") return kernels::vec::kSub;
  if (t == "Mul") return kernels::vec::kMul;
  if (t == "Div") return kernels::vec::kDiv;
  return -1;
}

HostTensor widen_constant(const Tensor& t) {
  HostTensor h = HostTensor::allocate(kFloat, t.shape);
  widen(t.dtype, static_cast<const uint16_t*>(t.data), static_cast<float*>(h.mutable_data()),
        t.numel(), nullptr);
  return h;
}

HostTensor narrow_constant(const HostTensor& t, int32_t dt) {
  HostTensor h = HostTensor::allocate(dt, t.shape());
  narrow(dt, t.as<float>(), static_cast<uint16_t*>(h.mutable_data()), t.numel(), nullptr);
  return h;
}

}  // namespace

Result<std::unique_ptr<Kernel>> build_with_half_adapter(const OpEntry& op, BuildContext& ctx,
                                                        HalfCarry* carry) {
  auto native = op.build(ctx);
  // A FLOAT16 value the session holds as float (HalfCarry): it has the
  // float description it would get here, so it is passed as it is.
  auto carried = [&](int i) {
    return carry != nullptr && size_t(i) < carry->float_inputs.size() &&
           carry->float_inputs[size_t(i)] && ctx.has_input(i) && ctx.input(i).dtype == kFloat;
  };
  bool any_carried = false;
  int32_t half = kUndefined;
  for (int i = 0; i < ctx.input_count(); ++i) {
    any_carried = any_carried || carried(i);
    if (half == kUndefined && ctx.has_input(i) && is_half(ctx.input(i).dtype))
      half = ctx.input(i).dtype;
  }
  if (half == kUndefined && any_carried) half = kFloat16;
  if ((native.ok() && !any_carried) || half == kUndefined || op.own_half_types) return native;
  // An operator with a body (If, Loop, Scan) takes every type natively: its
  // body declares the types, and widening the inputs would hide a mismatch
  // between them (a float16 loop-carried value into a float body input).
  for (const auto& a : ctx.node().attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return native;
  }

  // Float descriptions of the inputs; 16-bit constants widened now.
  std::vector<ValueDesc> descs(size_t(ctx.input_count()));
  std::vector<const ValueDesc*> ptrs(descs.size(), nullptr);
  std::vector<HostTensor> widened;
  widened.reserve(descs.size());
  std::vector<Tensor> views;
  views.reserve(descs.size());
  std::vector<const void*> constant_ptrs(descs.size(), nullptr);
  std::vector<Slot> ins;
  for (int i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) continue;
    descs[size_t(i)] = ctx.input(i);
    ValueDesc& d = descs[size_t(i)];
    if (is_half(d.dtype) && !carried(i)) {
      if (d.value != nullptr) {
        widened.push_back(widen_constant(*d.value));
        views.push_back(widened.back().view());
        d.value = &views.back();
        constant_ptrs[size_t(i)] = widened.back().data();
      } else {
        ins.push_back({i, d.dtype, shape_numel(d.shape)});
      }
      // A FLOAT16 initializer in a pack family's weight position (MatMul/Gemm
      // B, Conv/ConvTranspose W) stays an initializer of model type FLOAT16:
      // the float builder's prepare_weight binds to the model's FLOAT16 tensor
      // (its digest, the _f16 formats; a miss packs its values) and the float
      // kernel reads the pack, the f32 layout of the exactly widened values.
      // Any other widened copy has no prepared (packed) weight.
      const bool weight = d.is_initializer && d.value != nullptr && d.dtype == kFloat16 &&
                          pack::family_for(ctx.node(), i, d.dtype, d.shape) != nullptr;
      if (weight) d.model_dtype = kFloat16;
      d.dtype = kFloat;
      d.is_initializer = weight;
    }
    ptrs[size_t(i)] = &d;
  }
  BuildContext fctx(ctx.node(), ctx.opset(), ptrs, ctx.weights());
  std::vector<const ValueDesc*> implicit;
  for (int i = 0; i < ctx.implicit_input_count(); ++i) implicit.push_back(&ctx.implicit_input(i));
  fctx.set_implicit_inputs(std::move(implicit));
  fctx.set_subgraph_env(ctx.subgraph_env());
  auto built = op.build(fctx);
  // An attribute of the wrong type is reported where it was read: in fctx.
  if (!fctx.attr_status().ok()) return fctx.attr_status();
  if (!fctx.aliases().empty()) return native;  // the native error says why
  // Both builds fail: the native error names the 16-bit type, the float one
  // what else is wrong with the node (an attribute value), so both are told.
  if (!built.ok()) {
    if (built.status().message() == native.status().message()) return native;
    return Status(
        native.status().code(),
        native.status().message() + " (and built through float: " + built.status().message() + ")");
  }

  std::vector<Slot> outs;
  for (int o = 0; o < fctx.output_count(); ++o) {
    const auto& out = fctx.outputs()[size_t(o)];
    if (!out.set) continue;
    // A float output goes back to the 16-bit type when the input whose type it has (per the
    // signature) was 16-bit: Pow(float16, float) is float16 but Pow(float, float16) float,
    // OneHot's is its values', MelWeightMatrix's its attribute's. Without a signature, all.
    const int src = output_type_input(ctx.node(), ctx.opset(), o);
    const bool narrow = src == -1 || (src >= 0 && src < ctx.input_count() && ctx.has_input(src) &&
                                      (is_half(ctx.input(src).dtype) || carried(src)));
    const bool keep_float = carry != nullptr && size_t(o) < carry->float_outputs.size() &&
                            carry->float_outputs[size_t(o)];
    int32_t dt = out.dtype == kFloat && narrow && !keep_float ? half : out.dtype;
    if (out.value) {
      ctx.set_output_value(o, dt == half ? narrow_constant(*out.value, half) : *out.value);
      continue;
    }
    ctx.set_output(o, dt, out.shape);
    if (dt == half) outs.push_back({o, half, shape_numel(out.shape)});
  }
  if (carry != nullptr) carry->through_float = true;
  if (*built == nullptr) return std::unique_ptr<Kernel>();
  // Nothing to widen or narrow (every FLOAT16 value of the node held as float):
  // the float kernel as it is.
  const bool constants = std::any_of(constant_ptrs.begin(), constant_ptrs.end(),
                                     [](const void* p) { return p != nullptr; });
  if (ins.empty() && outs.empty() && !constants) return std::move(*built);
  // FLOAT16 Add/Sub/Mul/Div, neither input nor the output held as float, each
  // input the output's shape or one element: the FEAT_FP16 kernel where the
  // host has it (aarch64), on the 16-bit buffers.
  const int bop = half_binary_op(ctx.node());
  const kernels::vec::HalfBinaryFn hfn = bop >= 0 ? kernels::vec::half_binary_select() : nullptr;
  if (hfn != nullptr && ctx.input_count() == 2 && outs.size() == 1 && outs[0].index == 0 &&
      outs[0].dtype == kFloat16) {
    const int64_t n = outs[0].count;
    size_t stride[2] = {0, 0};
    std::vector<uint16_t> bits[2];
    bool fits = true;
    for (int i = 0; i < 2 && fits; ++i) {
      fits = ctx.has_input(i) && ctx.input(i).dtype == kFloat16 && !carried(i);
      if (!fits) break;
      const ValueDesc& d = ctx.input(i);
      const int64_t m = shape_numel(d.shape);
      fits = m == n || m == 1;
      stride[i] = m == n ? 1 : 0;
      if (fits && d.value != nullptr) {
        const auto* p = static_cast<const uint16_t*>(d.value->data);
        bits[i].assign(p, p + m);
        fits = m > 0;  // an empty constant: no buffer to point at (n is 0: any path)
      }
    }
    if (fits) {
      return std::unique_ptr<Kernel>(new HalfBinaryKernel(hfn, bop, stride[0], stride[1], n,
                                                          std::move(bits[0]), std::move(bits[1])));
    }
  }
  return std::unique_ptr<Kernel>(new HalfKernel(std::move(*built), std::move(ins), std::move(outs),
                                                std::move(widened), std::move(constant_ptrs)));
}

}  // namespace onnx_prepack::runtime
