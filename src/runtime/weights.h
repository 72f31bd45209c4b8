// Constant B operands of MatMul/Gemm. The session decides how each one is
// prepared (a mapped cache hit, packed now, or used in place) and records the
// decision; the MatMul kernel only sees a PreparedB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/f32_conv/f32_conv.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

class Workspace;

// B of C[M,N] = A[M,K] * B[K,N], ready to multiply.
class PreparedB {
 public:
  virtual ~PreparedB() = default;
  virtual int64_t k() const = 0;
  virtual int64_t n() const = 0;
  // C = A * B (+ C when accumulate); A is [m, k] with row stride lda, C [m, n] with ldc.
  // `ws` (may be null) is scratch for a B that is packed per call (slot 0 is used).
  // `bias` (not with accumulate): C[i][j] = (A B)[i][j] + bias[j * bias_cs] (bias_cs 0 or 1),
  // one rounded addition after the product, as an Add after it.
  virtual void multiply(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc,
                        bool accumulate, base::ThreadPool* pool, Workspace* ws,
                        const float* bias = nullptr, ptrdiff_t bias_cs = 1) const = 0;
};

// A float B in row-major [K, N] (or [N, K] when `transposed`) kept as it is and
// packed into the workspace at every multiply (`--weights plain`: no resident pack).
std::shared_ptr<const PreparedB> make_plain_b(const Tensor& b, bool transposed,
                                              std::shared_ptr<const void> keep_alive);

// A Conv filter in the layout its kernel reads (kernels/f32_conv/f32_conv.h):
// blocks of mr() output channels, or depthwise taps [C][kh * kw] when mr() is 0.
class PreparedConvFilter {
 public:
  virtual ~PreparedConvFilter() = default;
  virtual const float* data() const = 0;
  virtual size_t mr() const = 0;
};

// What a consumer asks the session's preparer for: input `input` of `node`,
// the constant initializer `source` with value `value`. `pack`, when set,
// fills a miss's pack from the consumer's own constants (the family's pack
// from `value` otherwise).
struct WeightRequest {
  const onnx::NodeProto* node = nullptr;
  int input = 0;
  std::string source;
  const Tensor* value = nullptr;
  int32_t model_type = 0;  // the initializer's element type in the model (0: value's)
  std::function<Status(std::span<uint8_t>)> pack;
};

// A prepared pack: a mapped hit or a fresh pack, 64-byte aligned. Empty
// bytes: not prepared (the consumer computes from the source).
struct PreparedPack {
  std::string format;  // the persisted format's name
  std::span<const uint8_t> bytes;
  std::shared_ptr<const void> keep_alive;
};

class WeightPreparer {
 public:
  virtual ~WeightPreparer() = default;
  // The default leaves packing to the kernel.
  virtual Result<PreparedPack> prepare_pack(const WeightRequest&) { return PreparedPack{}; }
};

// A consumer's view of a prepared pack of its own family: a GEMM B [k, n]
// (null when `p` is empty) and a Conv filter in its format's rows.
Result<std::shared_ptr<const PreparedB>> packed_b(const PreparedPack& p, int64_t k, int64_t n);
Result<std::shared_ptr<const PreparedConvFilter>> packed_conv_filter(const PreparedPack& p);

}  // namespace onnx_prepack::runtime
