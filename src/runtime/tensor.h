// Tensors as the runtime sees them: an element type, a shape and a pointer.
// A Tensor never owns memory; HostTensor does (constants folded at plan time,
// typed-field initializers, outputs handed back to the caller).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/vec_math/vec_half.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::runtime {

using Shape = std::vector<int64_t>;

// ONNX TensorProto.DataType values the runtime computes with.
enum DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
  // 8-bit floats (opset 19): held and cast, computed with only through Cast.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
};

// Kernels read BOOL elements as C++ bool, for which a byte other than 0 or 1 is
// undefined behaviour; every BOOL tensor entering the runtime (feeds, pinned
// feeds, initializers, constants) is normalised to 0/1 at that boundary.
// True when any byte of [p, p + n) is neither 0 nor 1.
bool has_non_canonical_bools(const void* p, size_t n);
void canonicalize_bools(void* p, size_t n);  // any non-zero byte -> 1

// Bytes per element, 0 for types the runtime does not hold (string, sub-byte, ...).
size_t dtype_size(int32_t dtype);
std::string dtype_name(int32_t dtype);
// Product of dims, unchecked. Precondition: the shape is one the runtime
// already checked (checked_tensor_bytes / checked_numel: a feed, an
// initializer, a builder's output once the session accepted it, or an input a
// builder sees). A shape computed from attributes or values goes through
// checked_product (runtime/checked_math.h) first.
int64_t shape_numel(const Shape& shape);
std::string shape_string(const Shape& shape);  // "[1, 128, 768]"
// Element count with overflow and sign checks; -1 when a dim is negative or
// the product of the non-zero dims passes 2^62 (checked_product).
int64_t checked_numel(const Shape& shape);

// The memory budget of a process's runs: half the machine's physical memory,
// lowered by ONNX_PREPACK_MEMORY_BUDGET (bytes, or with a K/M/G suffix) when
// set. Every size from a model is checked against it before any allocation
// (one tensor), and what is live at once is held within it
// (runtime/memory_account.h), so a hostile shape fails with an error instead
// of bad_alloc or swapping.
uint64_t memory_budget_bytes();
// Bytes of a tensor of `dtype` and `shape`, with overflow and sign checks and
// against memory_budget_bytes(); the error names `what` and the shape.
Result<uint64_t> checked_tensor_bytes(int32_t dtype, const Shape& shape, std::string_view what);

struct Tensor {
  int32_t dtype = kUndefined;
  Shape shape;
  void* data = nullptr;

  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// A tensor with its own 64-byte aligned storage, or a view that keeps some
// other owner (a mapped file, a parsed model) alive.
class HostTensor {
 public:
  HostTensor() = default;
  static HostTensor allocate(int32_t dtype, Shape shape);  // zero-filled
  // allocate() for sizes that come from a model or a user: checked against the
  // memory budget, and a failed allocation is an error, never bad_alloc.
  static Result<HostTensor> try_allocate(int32_t dtype, Shape shape, std::string_view what);
  static HostTensor borrow(int32_t dtype, Shape shape, const void* data,
                           std::shared_ptr<const void> keep_alive);

  int32_t dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype_); }
  const void* data() const { return data_; }
  void* mutable_data() { return owned_ ? data_ : nullptr; }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }
  Tensor view() const { return Tensor{dtype_, shape_, const_cast<void*>(data_)}; }
  const std::shared_ptr<const void>& keep_alive() const { return keep_; }

 private:
  int32_t dtype_ = kUndefined;
  Shape shape_;
  void* data_ = nullptr;
  bool owned_ = false;
  std::shared_ptr<const void> keep_;
};

// Integer values of a small int32/int64 tensor (shapes, axes, indices).
Result<std::vector<int64_t>> to_int64_vector(const Tensor& t, std::string_view what);

// fp16 / bf16 conversions (round to nearest even), from the kernels layer.
using kernels::vec::bfloat16_to_float;
using kernels::vec::float_to_bfloat16;
using kernels::vec::float_to_half;
using kernels::vec::half_to_float;

}  // namespace onnx_prepack::runtime
