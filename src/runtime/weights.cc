#include "runtime/weights.h"

#include <vector>

#include "runtime/ops/gemm.h"

namespace onnx_prepack::runtime {
namespace {

class PlainB final : public PreparedB {
 public:
  PlainB(const float* data, int64_t k, int64_t n, std::shared_ptr<const void> keep)
      : data_(data), k_(k), n_(n), keep_(std::move(keep)) {}
  int64_t k() const override { return k_; }
  int64_t n() const override { return n_; }
  void multiply(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, bool accumulate,
                base::ThreadPool* pool) const override {
    sgemm(m, n_, k_, a, lda, data_, n_, c, ldc, accumulate, pool);
  }

 private:
  const float* data_;
  int64_t k_, n_;
  std::shared_ptr<const void> keep_;
};

}  // namespace

std::shared_ptr<const PreparedB> make_plain_b(const Tensor& b, bool transposed,
                                              std::shared_ptr<const void> keep_alive) {
  int64_t rows = b.shape[0], cols = b.shape[1];
  if (!transposed) {
    return std::make_shared<PlainB>(b.as<const float>(), rows, cols, std::move(keep_alive));
  }
  // [N, K] -> [K, N] once.
  auto t = HostTensor::allocate(kFloat, {cols, rows});
  const float* src = b.as<const float>();
  float* dst = static_cast<float*>(t.mutable_data());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
  }
  const float* p = t.as<float>();
  return std::make_shared<PlainB>(p, cols, rows, t.keep_alive());
}

}  // namespace onnx_prepack::runtime
