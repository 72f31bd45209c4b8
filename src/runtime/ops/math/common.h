// Helpers shared by the math family's operator files and their builder lists
// (joined in registry.cc). The broadcast helpers are in ops/dispatch.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "runtime/kernel.h"
#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime::math {

// a + b, a - b, a * b that wrap in T's width for integers, as numpy (ONNX's
// reference) does: computed in uint64_t, where wrapping is defined (signed
// overflow is undefined, and a uint16 product would be promoted to int).
// Floating types compute as written.
template <typename T>
constexpr T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(uint64_t(a) + uint64_t(b));
  else
    return T(a + b);
}
template <typename T>
constexpr T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(uint64_t(a) - uint64_t(b));
  else
    return T(a - b);
}
template <typename T>
constexpr T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(uint64_t(a) * uint64_t(b));
  else
    return T(a * b);
}

inline std::unique_ptr<Kernel> make_kernel(std::function<void(const KernelIO&)> fn) {
  return std::make_unique<FnKernel>(std::move(fn));
}

inline bool is_float_type(int32_t dt) { return dt == kFloat || dt == kDouble; }
inline bool is_signed_int(int32_t dt) {
  return dt == kInt8 || dt == kInt16 || dt == kInt32 || dt == kInt64;
}
inline bool is_unsigned_int(int32_t dt) {
  return dt == kUint8 || dt == kUint16 || dt == kUint32 || dt == kUint64;
}

// A kernel computing out[i] = f(in[i]) over n elements, on the pool when large.
template <typename In, typename Out, typename F>
std::unique_ptr<Kernel> map_kernel(int64_t n, F f) {
  return make_kernel([n, f](const KernelIO& io) {
    const In* x = static_cast<const In*>(io.in[0]);
    Out* y = static_cast<Out*>(io.out[0]);
    parallel_range(io.pool, n, kMinChunk / 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = Out(f(x[i]));
    });
  });
}

// Calls fn(TypeTag<T>{}) for float and double; false for other types.
template <typename Fn>
bool dispatch_float(int32_t dtype, Fn&& fn) {
  if (dtype == kFloat) return fn(TypeTag<float>{}), true;
  if (dtype == kDouble) return fn(TypeTag<double>{}), true;
  return false;
}

// Calls fn(TypeTag<T>{}) for the signed integer types, float and double.
template <typename Fn>
bool dispatch_signed(int32_t dtype, Fn&& fn) {
  if (is_unsigned_int(dtype)) return false;
  return dispatch_numeric(dtype, fn);
}

inline Status unsupported_type(const BuildContext& ctx, int32_t dtype) {
  return ctx.error("type " + dtype_name(dtype) + " is not supported");
}

}  // namespace onnx_prepack::runtime::math
