// The Result forms of checked_math.h: the same checks with an error that names
// what was computed and the values.
#include "runtime/checked_math.h"

#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

Result<int64_t> checked_mul(int64_t a, int64_t b, std::string_view what) {
  if (auto r = checked_mul(a, b)) return *r;
  return invalid_argument(std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                          " overflows int64");
}

Result<int64_t> checked_add(int64_t a, int64_t b, std::string_view what) {
  if (auto r = checked_add(a, b)) return *r;
  return invalid_argument(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                          " overflows int64");
}

Result<int64_t> checked_product(std::span<const int64_t> dims, std::string_view what) {
  if (auto r = checked_product(dims)) return *r;
  const Shape shape(dims.begin(), dims.end());
  for (int64_t d : dims) {
    if (d < 0) {
      return invalid_argument(std::string(what) + ": dims " + shape_string(shape) +
                              " have a negative entry");
    }
  }
  return invalid_argument(std::string(what) + ": dims " + shape_string(shape) +
                          " have more than 2^62 elements");
}

}  // namespace onnx_prepack::runtime
