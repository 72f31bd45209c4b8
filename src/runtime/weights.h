// Constant B operands of MatMul/Gemm. The session decides how each one is
// prepared (a mapped cache hit, packed now, or used in place) and records the
// decision; the MatMul kernel only sees a PreparedB.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/f32_conv/f32_conv.h"
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
  virtual void multiply(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc,
                        bool accumulate, base::ThreadPool* pool, Workspace* ws) const = 0;
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

// A pack that reads several initializers (MatMulNBits: B, scales, zero
// points), resolved with its lineage (SPEC 4.5). `pack` fills exactly `bytes`
// bytes on a miss.
struct LineagePackRequest {
  std::string source;  // primary initializer
  std::string consumer;
  std::string format, format_version;
  std::vector<uint64_t> dims;
  uint64_t bytes = 0;
  std::vector<std::pair<std::string, std::string>> roles;  // (role, initializer name)
  std::vector<std::pair<std::string, std::string>> attrs;  // (attribute, value)
  std::function<Status(std::span<uint8_t>)> pack;
};
struct LineagePack {
  std::span<const uint8_t> bytes;  // 64-byte aligned; empty = the preparer does not handle it
  std::shared_ptr<const void> keep_alive;
};

class WeightPreparer {
 public:
  virtual ~WeightPreparer() = default;
  // A mapped hit or a fresh pack; the default leaves packing to the kernel.
  virtual Result<LineagePack> prepare_lineage(const LineagePackRequest&) { return LineagePack{}; }
  // `source` is the initializer's name; `b` its value ([K, N], or [N, K] when
  // `transposed`). `consumer` names the node for diagnostics.
  virtual Result<std::shared_ptr<const PreparedB>> prepare(const std::string& source,
                                                           const Tensor& b, bool transposed,
                                                           const std::string& consumer) = 0;
  // A constant Conv filter `w` of geometry `g` for a kernel reading blocks of
  // `mr` rows (0: depthwise taps); `transposed`: a ConvTranspose filter
  // [C, M/group, k...] as its GEMM operand (pack/conv_filter_format.h). A null
  // result (the default) lets the kernel pack it itself.
  virtual Result<std::shared_ptr<const PreparedConvFilter>> prepare_conv(
      const std::string& source, const Tensor& w, const kernels::ConvGeometry& g, size_t mr,
      const std::string& consumer, bool transposed = false) {
    (void)source, (void)w, (void)g, (void)mr, (void)consumer, (void)transposed;
    return std::shared_ptr<const PreparedConvFilter>();
  }
};

}  // namespace onnx_prepack::runtime
