#include "runtime/tensor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/checked_math.h"
#include "runtime/memory_account.h"

namespace onnx_prepack::runtime {

bool has_non_canonical_bools(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  uint8_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= uint8_t(b[i] & 0xFE);
  return any != 0;
}

void canonicalize_bools(void* p, size_t n) {
  auto* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = b[i] != 0;
}

size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case kFloat:
    case kInt32:
    case kUint32:
      return 4;
    case kUint8:
    case kInt8:
    case kBool:
    case kFloat8E4M3FN:
    case kFloat8E4M3FNUZ:
    case kFloat8E5M2:
    case kFloat8E5M2FNUZ:
      return 1;
    case kUint16:
    case kInt16:
    case kFloat16:
    case kBfloat16:
      return 2;
    case kInt64:
    case kDouble:
    case kUint64:
      return 8;
    default:
      return 0;
  }
}

std::string dtype_name(int32_t dtype) {
  switch (dtype) {
    case kFloat:
      return "float";
    case kUint8:
      return "uint8";
    case kInt8:
      return "int8";
    case kUint16:
      return "uint16";
    case kInt16:
      return "int16";
    case kInt32:
      return "int32";
    case kInt64:
      return "int64";
    case kString:
      return "string";
    case kBool:
      return "bool";
    case kFloat16:
      return "float16";
    case kDouble:
      return "double";
    case kUint32:
      return "uint32";
    case kUint64:
      return "uint64";
    case kBfloat16:
      return "bfloat16";
    case kFloat8E4M3FN:
      return "float8e4m3fn";
    case kFloat8E4M3FNUZ:
      return "float8e4m3fnuz";
    case kFloat8E5M2:
      return "float8e5m2";
    case kFloat8E5M2FNUZ:
      return "float8e5m2fnuz";
    case 21:
      return "uint4";
    case 22:
      return "int4";
    case 23:
      return "float4e2m1";
    case 24:
      return "float8e8m0";
    case 25:
      return "uint2";
    case 26:
      return "int2";
    default:
      return "type " + std::to_string(dtype);
  }
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  // Raw on purpose: the precondition (tensor.h) is a shape already checked.
  for (int64_t d : shape) n *= d;  // dims-lint: ok (checked shape)
  return n;
}

int64_t checked_numel(const Shape& shape) { return checked_product(shape).value_or(-1); }

uint64_t memory_budget_bytes() {
  static const uint64_t budget = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGE_SIZE);
    // Half the physical memory: one tensor of that size leaves room for the rest.
    uint64_t b = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) / 2 : uint64_t(1) << 33;
    if (const char* env = std::getenv("ONNX_PREPACK_MEMORY_BUDGET")) {
      char* end = nullptr;
      unsigned long long v = std::strtoull(env, &end, 10);
      int shift = 0;
      if (end != nullptr && (*end == 'K' || *end == 'k')) shift = 10;
      if (end != nullptr && (*end == 'M' || *end == 'm')) shift = 20;
      if (end != nullptr && (*end == 'G' || *end == 'g')) shift = 30;
      if (end != env && v > 0 && v < (1ull << (63 - shift))) b = std::min<uint64_t>(b, v << shift);
    }
    return b;
  }();
  return budget;
}

Result<uint64_t> checked_tensor_bytes(int32_t dtype, const Shape& shape, std::string_view what) {
  for (int64_t d : shape) {
    if (d < 0) {
      return invalid_argument(std::string(what) + ": shape " + shape_string(shape) +
                              " has a negative dimension");
    }
  }
  const std::optional<int64_t> n = checked_product(shape);
  const std::optional<uint64_t> bytes =
      n ? checked_mul(uint64_t(*n), uint64_t(std::max<size_t>(1, dtype_size(dtype))))
        : std::nullopt;
  if (!bytes) {
    return resource_exhausted(std::string(what) + ": " + dtype_name(dtype) + " " +
                              shape_string(shape) + " overflows a 64-bit byte count");
  }
  if (*bytes > memory_budget_bytes()) {
    return resource_exhausted(std::string(what) + ": " + dtype_name(dtype) + " " +
                              shape_string(shape) + " needs " + std::to_string(*bytes) +
                              " bytes, over the memory budget of " +
                              std::to_string(memory_budget_bytes()) + " bytes");
  }
  return *bytes;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

HostTensor HostTensor::allocate(int32_t dtype, Shape shape) {
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  size_t bytes = t.nbytes();
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  auto held = std::make_shared<MemoryReservation>(account_memory(rounded));
  t.keep_ = std::shared_ptr<const void>(p, [held](const void* q) mutable {
    std::free(const_cast<void*>(q));
    held.reset();
  });
  t.data_ = p;
  t.owned_ = true;
  return t;
}

Result<HostTensor> HostTensor::try_allocate(int32_t dtype, Shape shape, std::string_view what) {
  OP_ASSIGN_OR_RETURN(uint64_t bytes, checked_tensor_bytes(dtype, shape, what));
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  const uint64_t rounded = std::max<uint64_t>(64, (bytes + 63) / 64 * 64);
  OP_ASSIGN_OR_RETURN(MemoryReservation reserved, reserve_memory(rounded, what));
  void* p = std::aligned_alloc(64, size_t(rounded));
  if (p == nullptr) {
    return resource_exhausted(std::string(what) + ": cannot allocate " + std::to_string(bytes) +
                              " bytes for " + dtype_name(dtype) + " " + shape_string(t.shape_) +
                              " (within the memory budget of " +
                              std::to_string(memory_budget_bytes()) + " bytes)");
  }
  std::memset(p, 0, size_t(rounded));
  auto held = std::make_shared<MemoryReservation>(std::move(reserved));
  t.keep_ = std::shared_ptr<const void>(p, [held](const void* q) mutable {
    std::free(const_cast<void*>(q));
    held.reset();
  });
  t.data_ = p;
  t.owned_ = true;
  return t;
}

HostTensor HostTensor::borrow(int32_t dtype, Shape shape, const void* data,
                              std::shared_ptr<const void> keep_alive) {
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = const_cast<void*>(data);
  t.keep_ = std::move(keep_alive);
  return t;
}

Result<std::vector<int64_t>> to_int64_vector(const Tensor& t, std::string_view what) {
  std::vector<int64_t> v(size_t(t.numel()));
  if (t.dtype == kInt64) {
    if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * 8);
  } else if (t.dtype == kInt32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<const int32_t*>(t.data)[i];
  } else {
    return invalid_argument(std::string(what) + ": expected an int32 or int64 tensor, got " +
                            dtype_name(t.dtype));
  }
  return v;
}

}  // namespace onnx_prepack::runtime
