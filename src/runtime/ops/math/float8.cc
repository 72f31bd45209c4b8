#include "runtime/ops/math/float8.h"

#include <algorithm>
#include <cmath>

#include "runtime/tensor.h"

namespace onnx_prepack::runtime::math {
namespace {

struct Format {
  int exp_bits, man_bits, bias;
  bool fnuz;         // no -0, NaN is 0x80
  bool has_inf;      // E5M2 only
  uint8_t max_code;  // largest finite magnitude
};

Format format_of(int32_t dtype) {
  switch (dtype) {
    case kFloat8E4M3FN:
      return {4, 3, 7, false, false, 0x7e};
    case kFloat8E4M3FNUZ:
      return {4, 3, 8, true, false, 0x7f};
    case kFloat8E5M2:
      return {5, 2, 15, false, true, 0x7b};
    default:  // kFloat8E5M2FNUZ
      return {5, 2, 16, true, false, 0x7f};
  }
}

double magnitude(const Format& f, uint8_t code) {
  int e = (code >> f.man_bits) & ((1 << f.exp_bits) - 1);
  int m = code & ((1 << f.man_bits) - 1);
  if (e == 0) return std::ldexp(double(m), 1 - f.bias - f.man_bits);
  return std::ldexp(double(m + (1 << f.man_bits)), e - f.bias - f.man_bits);
}

}  // namespace

float float8_to_float(uint8_t v, int32_t dtype) {
  Format f = format_of(dtype);
  bool neg = (v & 0x80) != 0;
  uint8_t code = v & 0x7f;
  if (f.fnuz) {
    if (v == 0x80) return NAN;
  } else if (f.has_inf) {
    if ((code >> f.man_bits) == (1 << f.exp_bits) - 1)
      return (code & ((1 << f.man_bits) - 1)) ? NAN : (neg ? -INFINITY : INFINITY);
  } else if (code == 0x7f) {
    return NAN;
  }
  float m = float(magnitude(f, code));
  return neg ? -m : m;
}

uint8_t float_to_float8(float x, int32_t dtype, bool saturate) {
  Format f = format_of(dtype);
  uint8_t nan = f.fnuz ? 0x80 : (f.has_inf ? 0x7f : 0x7f);
  if (std::isnan(x)) return nan;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  double a = std::fabs(double(x));
  double max = magnitude(f, f.max_code);
  auto overflow = [&]() -> uint8_t {
    if (saturate) return uint8_t(sign | f.max_code);
    if (f.has_inf) return uint8_t(sign | 0x7c);
    return nan;
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return f.fnuz ? 0 : sign;
  int k;
  std::frexp(a, &k);  // a = m 2^k, m in [0.5, 1)
  int min_exp = 1 - f.bias;
  int e = std::max(k - 1, min_exp);
  double quantum = std::ldexp(1.0, e - f.man_bits);
  double r = std::nearbyint(a / quantum) * quantum;  // exact scaling, round half to even
  if (r > max) return overflow();
  if (r == 0) return f.fnuz ? 0 : sign;
  uint8_t code;
  if (r < std::ldexp(1.0, min_exp)) {
    code = uint8_t(r / std::ldexp(1.0, min_exp - f.man_bits));
  } else {
    std::frexp(r, &k);
    int re = k - 1;
    int m = int(r / std::ldexp(1.0, re - f.man_bits)) - (1 << f.man_bits);
    code = uint8_t(((re + f.bias) << f.man_bits) | m);
  }
  return uint8_t(sign | code);
}

}  // namespace onnx_prepack::runtime::math
