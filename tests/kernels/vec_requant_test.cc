// QLinearConv's requantize kernels (vec_math/vec_requant.h): every ISA variant
// the host runs (capped by ONNX_PREPACK_MAX_ISA) against the portable twin and
// against the operator's former expression (copied below: round, add the zero
// point, then saturate), bitwise, for finite multipliers: random accumulators
// and multipliers of every length around the vector widths, with and without
// bias, int8 and uint8 y, exact ties (k + 0.5, nearest even), products far out
// of range and infinite ones, int32 extremes with a wrapping bias. NaN
// products (a NaN or infinite multiplier) are the one place the former
// expression was undefined (int32(NaN)): every variant gives lo there.
#include "kernels/vec_math/vec_requant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels::vec {
namespace {

// The QLinearConv loops' expression before the kernels (integer_conv.cc).
uint8_t former(int32_t acc, int32_t bias, float mult, int32_t zp, bool y_signed) {
  const int32_t lo = y_signed ? -128 : 0, hi = y_signed ? 127 : 255;
  const int32_t a = int32_t(uint32_t(acc) + uint32_t(bias));
  const float v = std::nearbyint(float(a) * mult) + float(zp);
  return uint8_t(int32_t(std::clamp(v, float(lo), float(hi))));
}

std::vector<const RequantKernels*> variants() {
  std::vector<const RequantKernels*> v = {&requant_kernels(device::IsaLevel::kRef)};
  const device::IsaLevel host = device::host_isa_level();
  if (host >= device::IsaLevel::kAvx2) v.push_back(&requant_kernels(device::IsaLevel::kAvx2));
  if (host >= device::IsaLevel::kAvx512) v.push_back(&requant_kernels(device::IsaLevel::kAvx512));
  if (host >= device::IsaLevel::kNeon) v.push_back(&requant_kernels(device::IsaLevel::kNeon));
  return v;
}

struct Case {
  std::vector<int32_t> c, bias;
  std::vector<float> mult;
  int32_t zp = 0;
  bool y_signed = false;
};

void expect_all(const Case& k, bool compare_former, const std::string& what) {
  const size_t n = k.c.size();
  const int32_t* bias = k.bias.empty() ? nullptr : k.bias.data();
  std::vector<uint8_t> want(n);
  requant_row_ref(k.c.data(), bias, k.mult.data(), n, k.zp, k.y_signed, want.data());
  if (compare_former) {
    for (size_t j = 0; j < n; ++j) {
      ASSERT_EQ(want[j], former(k.c[j], bias ? bias[j] : 0, k.mult[j], k.zp, k.y_signed))
          << what << " j " << j << " acc " << k.c[j] << " mult " << k.mult[j];
    }
  }
  for (const RequantKernels* v : variants()) {
    // One guard byte past the row: the tails must not write it.
    std::vector<uint8_t> got(n + 1, 0xA5);
    v->row(k.c.data(), bias, k.mult.data(), n, k.zp, k.y_signed, got.data());
    EXPECT_EQ(got[n], 0xA5) << what << " " << v->isa << " wrote past the row";
    got.resize(n);
    EXPECT_EQ(got, want) << what << " " << v->isa;
  }
}

TEST(VecRequant, RandomRowsEqualTheFormerExpressionOnEveryIsa) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> acc(-300000, 300000), bz(-50000, 50000), u(0, 255);
  std::uniform_real_distribution<float> m(1e-5f, 2e-3f);
  for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100}) {
    for (bool y_signed : {false, true}) {
      for (bool with_bias : {false, true}) {
        Case k;
        k.y_signed = y_signed;
        k.zp = y_signed ? u(rng) - 128 : u(rng);
        for (size_t j = 0; j < n; ++j) {
          k.c.push_back(acc(rng));
          k.mult.push_back(m(rng));
          if (with_bias) k.bias.push_back(bz(rng));
        }
        expect_all(k, true,
                   "n " + std::to_string(n) + (y_signed ? " int8" : " uint8") +
                       (with_bias ? " bias" : ""));
      }
    }
  }
}

TEST(VecRequant, TiesRoundToEvenAndExtremesSaturate) {
  Case k;
  // mult 0.5: odd accumulators are exact ties k + 0.5.
  for (int32_t a = -301; a <= 301; ++a) {
    k.c.push_back(a);
    k.mult.push_back(0.5f);
  }
  const float inf = std::numeric_limits<float>::infinity();
  const int32_t big = std::numeric_limits<int32_t>::max(),
                small = std::numeric_limits<int32_t>::min();
  for (int32_t a : {big, small, big - 1, small + 1, 1, -1, 0}) {
    for (float mult : {1.0f, 3e38f, inf, 1e-30f, 0.0f, -2.0f}) {
      k.c.push_back(a);
      k.mult.push_back(mult);
    }
  }
  for (bool y_signed : {false, true}) {
    for (int32_t zp : {0, 17, 127}) {
      Case t = k;
      t.y_signed = y_signed;
      t.zp = y_signed ? zp - 128 : zp;
      // inf * 0 is NaN: no comparison with the former expression for those.
      bool any_nan = false;
      for (size_t j = 0; j < t.c.size(); ++j) any_nan |= std::isnan(float(t.c[j]) * t.mult[j]);
      ASSERT_TRUE(any_nan);
      Case finite = t, nan = t;
      finite.c.clear();
      finite.mult.clear();
      nan.c.clear();
      nan.mult.clear();
      for (size_t j = 0; j < t.c.size(); ++j) {
        Case& to = std::isnan(float(t.c[j]) * t.mult[j]) ? nan : finite;
        to.c.push_back(t.c[j]);
        to.mult.push_back(t.mult[j]);
      }
      expect_all(finite, true, "extremes zp " + std::to_string(t.zp));
      expect_all(t, false, "with NaN products zp " + std::to_string(t.zp));
      std::vector<uint8_t> y(nan.c.size());
      requant_row_ref(nan.c.data(), nullptr, nan.mult.data(), y.size(), nan.zp, nan.y_signed,
                      y.data());
      for (uint8_t v : y) EXPECT_EQ(v, uint8_t(y_signed ? -128 : 0)) << "NaN gives lo";
    }
  }
  // A bias that wraps int32.
  Case w;
  w.c = std::vector<int32_t>(20, big);
  w.bias = std::vector<int32_t>(20, 5);
  w.mult = std::vector<float>(20, 1e-9f);
  expect_all(w, true, "wrapping bias");
}

}  // namespace
}  // namespace onnx_prepack::kernels::vec
