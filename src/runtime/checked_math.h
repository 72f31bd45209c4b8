// Overflow-checked size arithmetic (issue 18), on base/checked_arith.h: what
// the runtime uses wherever a size, stride, index or offset is computed from values a
// model or its inputs control (dims, attributes, fed shapes). A raw `a * b` of
// two such int64 values is undefined behaviour when it overflows and a wrong
// size when it wraps; these return nothing (std::optional) or an error naming
// what was computed and the values (Result) instead. tools/check_dims.py
// flags raw products of dims in src/runtime/ops that bypass them.
//
// Once a tensor exists (its shape went through checked_tensor_bytes: feeds,
// initializers, every builder's outputs), its element count is at most
// kMaxElementCount and any product of a subset of its dims fits too, so
// shape_numel() and raw products of an existing tensor's dims need no check.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/checked_arith.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::runtime {

// The largest element count of a tensor: 2^62 leaves headroom so that a count
// plus a count, or a count times a small element size, still fits int64.
inline constexpr int64_t kMaxElementCount = int64_t(1) << 62;

// The arithmetic itself is base's (every layer shares it).
using base::checked_add;
using base::checked_mul;
using base::checked_sub;
using base::saturating_add;
using base::saturating_mul;

// d * d for an attribute such as DepthToSpace's blocksize; nothing when d is
// negative or the square passes kMaxElementCount.
constexpr std::optional<int64_t> checked_square(int64_t d) {
  if (d < 0) return std::nullopt;
  auto r = checked_mul(d, d);
  if (!r || *r > kMaxElementCount) return std::nullopt;
  return r;
}

// ceil(a / b) for a >= 0, b > 0, without the a + b - 1 that overflows when b
// is an attribute near 2^63 (a block_size, a stride).
constexpr int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// The product of `dims` (an element count); nothing when a dim is negative or
// the product passes kMaxElementCount. The empty product is 1.
constexpr std::optional<int64_t> checked_product(std::span<const int64_t> dims) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    // A zero dim makes the count 0, but the other dims must still be sane:
    // [0, 2^40, 2^40] is refused, so that its strides and any partial product
    // a kernel takes of it still fit.
    if (d == 0) {
      zero = true;
      continue;
    }
    auto r = checked_mul(n, d);
    if (!r || *r > kMaxElementCount) return std::nullopt;
    n = *r;
  }
  return zero ? 0 : n;
}
inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> dims) {
  return checked_product(std::span<const int64_t>(dims.begin(), dims.size()));
}

// Row-major strides of `shape` (the last one 1), as strides_of computes them;
// nothing when checked_product refuses the shape. Every stride is then at most
// kMaxElementCount, a zero dim included (checked_product bounds the others).
inline std::optional<std::vector<int64_t>> checked_strides(std::span<const int64_t> shape) {
  if (!checked_product(shape)) return std::nullopt;
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// The Result forms: the error is invalid_argument and reads
// "<what>: <a> * <b> overflows int64" (what names the node and the quantity,
// e.g. ctx.where() + ": blocksize * channels").
Result<int64_t> checked_mul(int64_t a, int64_t b, std::string_view what);
Result<int64_t> checked_add(int64_t a, int64_t b, std::string_view what);
// "<what>: dims [2, -1] have a negative entry" / "... [2^40, 2^40] have more
// than 2^62 elements".
Result<int64_t> checked_product(std::span<const int64_t> dims, std::string_view what);

}  // namespace onnx_prepack::runtime
