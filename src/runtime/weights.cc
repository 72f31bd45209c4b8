#include "runtime/weights.h"

#include "runtime/ops/linalg/gemm.h"

namespace onnx_prepack::runtime {
namespace {

class PlainB final : public PreparedB {
 public:
  PlainB(const float* data, int64_t k, int64_t n, bool nk, std::shared_ptr<const void> keep)
      : data_(data), k_(k), n_(n), nk_(nk), keep_(std::move(keep)) {}
  int64_t k() const override { return k_; }
  int64_t n() const override { return n_; }
  void multiply(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, bool accumulate,
                base::ThreadPool* pool, Workspace* ws, const float* bias,
                ptrdiff_t bias_cs) const override {
    gemm_f32(size_t(m), size_t(n_), size_t(k_), a, size_t(lda), data_,
             nk_ ? kernels::PackSourceLayout::kNK : kernels::PackSourceLayout::kKN, c, size_t(ldc),
             accumulate, ws, 0, pool);
    if (bias == nullptr) return;
    // A pass over C, the Add's one rounding (a packed B adds it in the GEMM's epilogue).
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n_; ++j) c[i * ldc + j] += bias[j * bias_cs];
    }
  }

 private:
  const float* data_;
  int64_t k_, n_;
  bool nk_;
  std::shared_ptr<const void> keep_;
};

}  // namespace

std::shared_ptr<const PreparedB> make_plain_b(const Tensor& b, bool transposed,
                                              std::shared_ptr<const void> keep_alive) {
  int64_t rows = b.shape[0], cols = b.shape[1];
  if (!transposed) {
    return std::make_shared<PlainB>(b.as<const float>(), rows, cols, false, std::move(keep_alive));
  }
  return std::make_shared<PlainB>(b.as<const float>(), cols, rows, true, std::move(keep_alive));
}

}  // namespace onnx_prepack::runtime
