// The consumers' views of a PreparedPack: a GEMM B in panels (PackedB) and a
// Conv filter in blocks of its format's rows (PackedConvFilter). The kernels
// read the bytes in place, mapped (a hit) or owned (a miss).
#include <cstdlib>
#include <memory>

#include "pack/conv_filter_format.h"
#include "pack/format_list.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {
namespace {

class PackedB final : public PreparedB {
 public:
  PackedB(pack::PackedGemmB b, std::shared_ptr<const void> keep) : b_(b), keep_(std::move(keep)) {}
  int64_t k() const override { return int64_t(b_.k); }
  int64_t n() const override { return int64_t(b_.n); }
  void multiply(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, bool accumulate,
                base::ThreadPool* pool, Workspace*, const float* bias,
                ptrdiff_t bias_cs) const override {
    pack::GemmCall call;
    call.m = size_t(m);
    call.a = a;
    call.lda = size_t(lda);
    // The kernels' epilogue: v = fma(beta = 1, bias, v), the one rounding of an Add.
    call.bias = bias;
    call.bias_cs = bias_cs;
    // The driver writes C; accumulation goes through a temporary (its bias
    // epilogue may not alias C: a tile is stored before its bias is read).
    std::unique_ptr<float[]> tmp;
    if (accumulate) tmp.reset(new float[size_t(m * n())]);
    call.c = accumulate ? tmp.get() : c;
    call.ldc = accumulate ? size_t(n()) : size_t(ldc);
    Status s = pack::run_gemm(b_, call, pool);
    if (!s.ok()) std::abort();  // sizes were checked when the kernel was built
    if (accumulate) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n(); ++j) c[i * ldc + j] += tmp[size_t(i * n() + j)];
      }
    }
  }

 private:
  pack::PackedGemmB b_;
  std::shared_ptr<const void> keep_;
};

class PackedConvFilter final : public PreparedConvFilter {
 public:
  PackedConvFilter(const float* data, size_t mr, std::shared_ptr<const void> keep)
      : data_(data), mr_(mr), keep_(std::move(keep)) {}
  const float* data() const override { return data_; }
  size_t mr() const override { return mr_; }

 private:
  const float* data_;
  size_t mr_;
  std::shared_ptr<const void> keep_;
};

}  // namespace

Result<std::shared_ptr<const PreparedB>> packed_b(const PreparedPack& p, int64_t k, int64_t n) {
  if (p.bytes.empty()) return std::shared_ptr<const PreparedB>();
  const pack::GemmBFormat* f = pack::find_gemm_b_format(p.format);
  if (f == nullptr) return internal_error("'" + p.format + "' is not a GEMM B format");
  pack::PackedGemmB b{f, p.bytes, size_t(k), size_t(n)};
  if (b.payload.size() != pack::gemm_b_payload_bytes(*f, b.k, b.n)) {
    return internal_error("pack of format '" + p.format + "' does not hold a " + std::to_string(k) +
                          " x " + std::to_string(n) + " B");
  }
  return std::shared_ptr<const PreparedB>(std::make_shared<PackedB>(b, p.keep_alive));
}

Result<std::shared_ptr<const PreparedConvFilter>> packed_conv_filter(const PreparedPack& p) {
  if (p.bytes.empty()) return std::shared_ptr<const PreparedConvFilter>();
  const pack::ConvFilterFormat* f = pack::find_conv_filter_format(p.format);
  if (f == nullptr) return internal_error("'" + p.format + "' is not a Conv filter format");
  return std::shared_ptr<const PreparedConvFilter>(std::make_shared<PackedConvFilter>(
      reinterpret_cast<const float*>(p.bytes.data()), f->mr, p.keep_alive));
}

}  // namespace onnx_prepack::runtime
