// Overflow-checked integer arithmetic: the one helper set every layer uses
// where a size, count, offset or index is computed from values a file, a model
// or its inputs control. A raw product of two such values is undefined
// behaviour when a signed one overflows and a wrong size when an unsigned one
// wraps; these say so instead. runtime/checked_math.h adds the tensor forms
// (element counts, strides, errors naming the node).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace onnx_prepack::base {

// a + b, a - b, a * b; nothing when the exact result does not fit T. The
// second operand takes the first one's type, so a literal or a narrower value
// never picks another overload: checked_mul(dim, 2), checked_mul(bytes, w).
template <std::integral T>
constexpr std::optional<T> checked_add(T a, std::type_identity_t<T> b) {
  T r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
template <std::integral T>
constexpr std::optional<T> checked_sub(T a, std::type_identity_t<T> b) {
  T r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
template <std::integral T>
constexpr std::optional<T> checked_mul(T a, std::type_identity_t<T> b) {
  T r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a * b and a + b, or UINT64_MAX when they do not fit: for step, bit and byte
// counts that are only compared with a bound, where "too many" is the answer.
constexpr uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return checked_mul(a, b).value_or(std::numeric_limits<uint64_t>::max());
}
constexpr uint64_t saturating_add(uint64_t a, uint64_t b) {
  return checked_add(a, b).value_or(std::numeric_limits<uint64_t>::max());
}

}  // namespace onnx_prepack::base
