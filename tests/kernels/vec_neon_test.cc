// The NEON twins of the vec_math kernels (vec_math.h, vec_act.h, vec_quant.h,
// vec_requant.h, vec_half.h) against their portable twins on adversarial
// inputs: +-0, denormals, +-inf, quiet, signalling and negative NaNs with
// payloads, huge and tiny values, the polynomials' branch points, at every
// length 0..67 (every 4- and 8-lane tail) and with a guard past the output.
// Elementwise kernels must give ref's bits; the row reductions (softmax, layer
// norm) may differ only in their summation order. The runtime tests
// (vec_math_test.cc, half_and_cast_test.cc) and vec_quant_test.cc /
// vec_requant_test.cc run their own cases on the NEON variants too.
#if defined(__aarch64__)  // the _neon units are built on aarch64 only

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_half.h"
#include "kernels/vec_math/vec_math.h"
#include "kernels/vec_math/vec_quant.h"
#include "kernels/vec_math/vec_requant.h"

namespace onnx_prepack::kernels::vec {
namespace {

using device::IsaLevel;

constexpr size_t kMaxLen = 67;
constexpr uint32_t kGuard = 0xdeadbeefu;

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The special values first (so that short lengths see them), then the
// polynomials' thresholds and neighbours, then random values at many scales.
std::vector<float> adversarial_floats() {
  std::vector<float> x = {0.0f,
                          -0.0f,
                          from_bits(0x00000001u),
                          from_bits(0x807fffffu),
                          from_bits(0x00800000u),
                          -1e-40f,
                          INFINITY,
                          -INFINITY,
                          std::numeric_limits<float>::quiet_NaN(),
                          from_bits(0xffc00000u),  // negative quiet NaN
                          from_bits(0x7f800001u),  // signalling NaN
                          from_bits(0x7fc12345u),  // quiet NaN with a payload
                          from_bits(0xff812345u),  // negative signalling NaN with a payload
                          3.4028235e38f,
                          -3.4028235e38f,
                          1e30f,
                          -1e30f,
                          1e-30f,
                          -1e-30f,
                          1e-7f,
                          -3e-5f,
                          std::nextafter(0.375f, 0.0f),
                          0.375f,
                          -0.375f,
                          std::nextafter(0.375f, 1.0f),
                          std::nextafter(0.75f, 0.0f),
                          0.75f,
                          -0.75f,
                          std::nextafter(0.75f, 1.0f),
                          1.0f,
                          -1.0f,
                          3.0f,
                          -3.0f,
                          6.0f,
                          -6.0f,
                          9.0f,
                          -9.0f,
                          9.5f,
                          20.0f,
                          -87.0f,
                          -87.3365478515625f,
                          std::nextafter(-87.3365478515625f, 0.0f),
                          std::nextafter(-87.3365478515625f, -100.0f),
                          -100.0f,
                          87.9f,
                          88.0f,
                          std::nextafter(88.0f, 100.0f),
                          88.5f,
                          88.8f,
                          89.0f,
                          200.0f,
                          -200.0f,
                          0.5f,
                          -0.5f,
                          2.5f,
                          -2.5f};
  std::mt19937 rng(17);
  for (float scale : {1e-3f, 0.3f, 1.0f, 4.0f, 30.0f, 100.0f}) {
    std::normal_distribution<float> nd(0.0f, scale);
    for (int i = 0; i < 97; ++i) x.push_back(nd(rng));
  }
  return x;
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

bool both_nan(float a, float b) { return std::isnan(a) && std::isnan(b); }

// The first element where got and want differ in their bits (NaNs too), with
// nan_any: any NaN matches any NaN.
::testing::AssertionResult same_floats(const float* got, const float* want, const float* x,
                                       size_t n, bool nan_any = false) {
  for (size_t i = 0; i < n; ++i) {
    if (to_bits(got[i]) == to_bits(want[i]) || (nan_any && both_nan(got[i], want[i]))) continue;
    return ::testing::AssertionFailure()
           << "element " << i << " of " << n << ": x " << (x ? x[i] : 0.0f) << " ("
           << hex(x ? to_bits(x[i]) : 0) << ") got " << hex(to_bits(got[i])) << " want "
           << hex(to_bits(want[i]));
  }
  return ::testing::AssertionSuccess();
}

const VecKernels& neon() { return vec_kernels(IsaLevel::kNeon); }
const VecKernels& ref() { return vec_kernels(IsaLevel::kRef); }

TEST(VecNeon, EveryAarch64LevelSelectsTheNeonVariants) {
  for (IsaLevel l : {IsaLevel::kNeon, IsaLevel::kDotprod, IsaLevel::kI8mm}) {
    EXPECT_STREQ(vec_kernels(l).isa, "neon");
    EXPECT_EQ(act_kernel(l), &f32_act_neon);
    EXPECT_STREQ(quant_kernels(l).isa, "neon");
    EXPECT_STREQ(requant_kernels(l).isa, "neon");
    EXPECT_EQ(half_convert(l).f32_to_f16, &f32_to_f16_neon);
  }
  EXPECT_STREQ(host_vec_kernels().isa, device::host_isa_level() == IsaLevel::kRef ? "ref" : "neon");
}

TEST(VecNeon, UnaryKernelsGiveRefBitsAtEveryLength) {
  struct Case {
    const char* name;
    UnaryFn VecKernels::*fn;
  };
  const Case cases[] = {{"erf", &VecKernels::erf},
                        {"tanh", &VecKernels::tanh},
                        {"gelu", &VecKernels::gelu},
                        {"gelu_tanh", &VecKernels::gelu_tanh},
                        {"exp", &VecKernels::exp}};
  const std::vector<float> x = adversarial_floats();
  for (const Case& c : cases) {
    std::vector<float> want(x.size());
    (ref().*c.fn)(x.data(), want.data(), x.size());
    std::vector<float> got(x.size());
    (neon().*c.fn)(x.data(), got.data(), x.size());
    EXPECT_TRUE(same_floats(got.data(), want.data(), x.data(), x.size())) << c.name;
    // Every length from every offset 0..3 (the specials land in every lane).
    for (size_t off = 0; off < 4; ++off) {
      for (size_t n = 0; n <= kMaxLen; ++n) {
        std::vector<float> y(n + 1, from_bits(kGuard));
        (neon().*c.fn)(x.data() + off, y.data(), n);
        ASSERT_TRUE(same_floats(y.data(), want.data() + off, x.data() + off, n))
            << c.name << " n " << n << " off " << off;
        ASSERT_EQ(to_bits(y[n]), kGuard) << c.name << " wrote past n " << n;
      }
    }
    // In place (y == x), as the runtime calls them.
    std::vector<float> inplace = x;
    (neon().*c.fn)(inplace.data(), inplace.data(), inplace.size());
    EXPECT_TRUE(same_floats(inplace.data(), want.data(), x.data(), x.size())) << c.name;
  }
}

TEST(VecNeon, BinaryOpsGiveRefBitsAtEveryLengthAndStride) {
  const std::vector<float> a = adversarial_floats();
  std::vector<float> b = adversarial_floats();
  std::rotate(b.begin(), b.begin() + 5, b.end());  // specials against specials and numbers
  for (int op : {kAdd, kSub, kMul, kDiv}) {
    for (size_t sa : {0, 1}) {
      for (size_t sb : {0, 1}) {
        for (size_t off = 0; off < 13; off += 3) {
          for (size_t n = 0; n <= kMaxLen; ++n) {
            std::vector<float> want(n), got(n + 1, from_bits(kGuard));
            f32_binary_ref(op, a.data() + off, sa, b.data() + off, sb, want.data(), n);
            neon().binary(op, a.data() + off, sa, b.data() + off, sb, got.data(), n);
            ASSERT_TRUE(same_floats(got.data(), want.data(), nullptr, n))
                << "op " << op << " sa " << sa << " sb " << sb << " off " << off << " n " << n;
            ASSERT_EQ(to_bits(got[n]), kGuard) << "op " << op << " wrote past n " << n;
          }
        }
      }
    }
  }
}

TEST(VecNeon, ActivationsGiveRefBitsAtEveryLength) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Params {
    float p0, p1;
  };
  const Params params[] = {{-1.5f, 6.0f},         {0.2f, 0.5f},  {0.0f, -0.0f}, {-0.0f, 0.0f},
                           {-INFINITY, INFINITY}, {3.0f, -3.0f}, {nan, 1.0f},   {0.1f, nan}};
  const std::vector<float> x = adversarial_floats();
  for (int op = kActClip; op <= kActSigmoid + 1; ++op) {  // + 1: an unknown op (identity)
    for (const Params& p : params) {
      // A NaN parameter meeting a NaN input: which NaN an operation returns
      // depends on its operand order, which the compiler may commute in the
      // scalar ref (fma(p0, x, p1), x * p0) but not in the intrinsics, so
      // there any NaN matches any NaN. Everywhere else the bits are ref's.
      const bool nan_any = std::isnan(p.p0) || std::isnan(p.p1);
      std::vector<float> want(x.size());
      f32_act_ref(op, x.data(), want.data(), x.size(), p.p0, p.p1);
      for (size_t off = 0; off < 4; ++off) {
        for (size_t n = 0; n <= kMaxLen; ++n) {
          std::vector<float> y(n + 1, from_bits(kGuard));
          act_kernel(IsaLevel::kNeon)(op, x.data() + off, y.data(), n, p.p0, p.p1);
          ASSERT_TRUE(same_floats(y.data(), want.data() + off, x.data() + off, n, nan_any))
              << "op " << op << " p0 " << p.p0 << " p1 " << p.p1 << " n " << n;
          ASSERT_EQ(to_bits(y[n]), kGuard) << "op " << op << " wrote past n " << n;
        }
      }
      std::vector<float> got(x.size());
      act_kernel(IsaLevel::kNeon)(op, x.data(), got.data(), x.size(), p.p0, p.p1);
      EXPECT_TRUE(same_floats(got.data(), want.data(), x.data(), x.size(), nan_any))
          << "op " << op << " p0 " << p.p0 << " p1 " << p.p1;
    }
  }
}

// Softmax and layer norm: only the order of the sums differs from ref, so
// finite rows agree to a few ulp and non-finite results agree in kind.
void expect_close(float got, float want, double rel, const std::string& what) {
  if (std::isnan(want) || std::isinf(want)) {
    EXPECT_TRUE(to_bits(got) == to_bits(want) || both_nan(got, want))
        << what << ": got " << got << " want " << want;
    return;
  }
  EXPECT_NEAR(got, want, rel * std::max(1.0, double(std::fabs(want))))
      << what << ": got " << got << " want " << want;
}

TEST(VecNeon, SoftmaxRowsAgreeWithRefUpToTheSummationOrder) {
  std::mt19937 rng(23);
  std::normal_distribution<float> nd(0.0f, 5.0f);
  for (size_t len = 1; len <= kMaxLen; ++len) {
    const size_t rows = 4;
    std::vector<float> x(rows * len);
    for (auto& v : x) v = nd(rng);
    x[0] = -INFINITY;                                         // a masked position
    for (size_t j = 0; j < len; ++j) x[len + j] = -INFINITY;  // a fully masked row: NaN
    x[2 * len + len / 2] = 1e4f;                              // one dominant element
    std::vector<float> want(x.size()), got(x.size() + 1, from_bits(kGuard));
    ref().softmax_rows(x.data(), want.data(), rows, len);
    neon().softmax_rows(x.data(), got.data(), rows, len);
    ASSERT_EQ(to_bits(got[x.size()]), kGuard) << "len " << len;
    for (size_t i = 0; i < x.size(); ++i)
      expect_close(got[i], want[i], 1e-6, "len " + std::to_string(len) + " i " + std::to_string(i));
  }
}

TEST(VecNeon, LayerNormRowsAgreeWithRefUpToTheSummationOrder) {
  std::mt19937 rng(29);
  std::normal_distribution<float> nd(1.5f, 2.0f);
  for (size_t len = 1; len <= kMaxLen; ++len) {
    const size_t rows = 3;
    std::vector<float> x(rows * len), scale(len), bias(len);
    for (auto& v : x) v = nd(rng);
    for (auto& v : scale) v = nd(rng);
    for (auto& v : bias) v = nd(rng);
    for (size_t j = 0; j < len; ++j) x[len + j] = 7.25f;  // a constant row: variance 0
    for (bool with_bias : {false, true}) {
      std::vector<float> want(x.size()), got(x.size() + 1, from_bits(kGuard));
      std::vector<float> mw(rows), mg(rows), iw(rows), ig(rows);
      const float* bp = with_bias ? bias.data() : nullptr;
      ref().layer_norm_rows(x.data(), scale.data(), bp, want.data(), mw.data(), iw.data(), rows,
                            len, 1e-5f);
      neon().layer_norm_rows(x.data(), scale.data(), bp, got.data(), mg.data(), ig.data(), rows,
                             len, 1e-5f);
      ASSERT_EQ(to_bits(got[x.size()]), kGuard) << "len " << len;
      const std::string what = "len " + std::to_string(len) + " bias " + std::to_string(with_bias);
      for (size_t r = 0; r < rows; ++r) {
        expect_close(mg[r], mw[r], 1e-6, what + " mean");
        expect_close(ig[r], iw[r], 1e-5, what + " inv_std");
      }
      for (size_t i = 0; i < x.size(); ++i) expect_close(got[i], want[i], 2e-5, what);
    }
  }
}

TEST(VecNeon, QuantKernelsGiveRefBitsAtEveryLength) {
  const QuantKernels& q = quant_kernels(IsaLevel::kNeon);
  const QuantKernels& r = quant_kernels(IsaLevel::kRef);
  std::vector<float> x = adversarial_floats();
  // Ties of x / scale for scale 0.5 (k + 0.5 -> nearest even).
  for (int k = -20; k < 20; ++k) x.push_back(0.5f * (float(k) + 0.5f));
  for (size_t off = 0; off < 9; off += 4) {
    for (size_t n = 0; n <= kMaxLen; ++n) {
      const float* xp = x.data() + off;
      float lw = 0, hw = 0, lg = 0, hg = 0;
      r.minmax(xp, n, &lw, &hw);
      q.minmax(xp, n, &lg, &hg);
      ASSERT_EQ(to_bits(lg), to_bits(lw)) << "lo n " << n << " off " << off;
      ASSERT_EQ(to_bits(hg), to_bits(hw)) << "hi n " << n << " off " << off;
      for (float scale : {0.5f, 0.037f, 1e-3f, 1e-40f, 1e30f, 0.0f, INFINITY}) {
        for (float zp : {0.0f, 17.0f, 128.0f, 255.0f}) {
          std::vector<uint8_t> want(n), got(n + 1, 0xA5);
          r.quantize_u8(xp, want.data(), n, scale, zp);
          q.quantize_u8(xp, got.data(), n, scale, zp);
          ASSERT_EQ(got[n], 0xA5) << "wrote past n " << n;
          got.resize(n);
          ASSERT_EQ(got, want) << "n " << n << " off " << off << " scale " << scale << " zp " << zp;
        }
      }
    }
  }
  // The whole array, and the range its min / max give.
  float lo = 0, hi = 0;
  q.minmax(x.data(), x.size(), &lo, &hi);
  const DynamicQuantParams p = dynamic_quant_params(lo, hi);
  std::vector<uint8_t> want(x.size()), got(x.size());
  r.quantize_u8(x.data(), want.data(), x.size(), p.scale, p.zp);
  q.quantize_u8(x.data(), got.data(), x.size(), p.scale, p.zp);
  EXPECT_EQ(got, want);
}

TEST(VecNeon, RequantGivesRefBitsAtEveryLength) {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int32_t> acc(-400000, 400000);
  std::uniform_real_distribution<float> m(1e-5f, 2e-3f);
  const size_t total = kMaxLen + 16;
  std::vector<int32_t> c(total), bias(total);
  std::vector<float> mult(total);
  for (size_t j = 0; j < total; ++j) {
    c[j] = acc(rng);
    bias[j] = acc(rng);
    mult[j] = m(rng);
  }
  // Extremes: a wrapping sum, ties, out-of-range and non-finite products.
  c[0] = std::numeric_limits<int32_t>::max();
  bias[0] = 5;
  c[1] = std::numeric_limits<int32_t>::min();
  bias[1] = -5;
  c[2] = 5;
  mult[2] = 0.5f;  // 2.5 -> 2
  c[3] = 7;
  mult[3] = 0.5f;  // 3.5 -> 4
  c[4] = -3;
  mult[4] = 0.5f;  // -1.5 -> -2
  mult[5] = INFINITY;
  mult[6] = -INFINITY;
  mult[7] = std::numeric_limits<float>::quiet_NaN();
  mult[8] = 0.0f;
  mult[9] = -0.0f;
  mult[10] = 1e-40f;
  mult[11] = 1e30f;
  c[12] = 0;
  mult[12] = INFINITY;  // 0 * inf: NaN -> lo
  const RequantKernels& q = requant_kernels(IsaLevel::kNeon);
  for (bool y_signed : {false, true}) {
    for (int32_t zp :
         y_signed ? std::vector<int32_t>{-128, -3, 0, 127} : std::vector<int32_t>{0, 1, 128, 255}) {
      for (bool with_bias : {false, true}) {
        for (size_t off = 0; off < 9; off += 4) {
          for (size_t n = 0; n + off <= total && n <= kMaxLen; ++n) {
            const int32_t* bp = with_bias ? bias.data() + off : nullptr;
            std::vector<uint8_t> want(n), got(n + 1, 0xA5);
            requant_row_ref(c.data() + off, bp, mult.data() + off, n, zp, y_signed, want.data());
            q.row(c.data() + off, bp, mult.data() + off, n, zp, y_signed, got.data());
            ASSERT_EQ(got[n], 0xA5) << "wrote past n " << n;
            got.resize(n);
            ASSERT_EQ(got, want) << "signed " << y_signed << " zp " << zp << " bias " << with_bias
                                 << " off " << off << " n " << n;
          }
        }
      }
    }
  }
}

// Every conversion of `v` against the ref's, bit for bit.
void expect_half_ref_bits(const HalfConvert& v) {
  const HalfConvert& r = half_convert(IsaLevel::kRef);
  // Every 16-bit code (f16 signalling NaNs come out quiet in both), widened
  // from offsets that put each code in every lane.
  std::vector<uint16_t> codes(65536 + 8);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = uint16_t(i);
  for (bool bf : {false, true}) {
    auto widen_r = bf ? r.bf16_to_f32 : r.f16_to_f32;
    auto widen_v = bf ? v.bf16_to_f32 : v.f16_to_f32;
    for (size_t off = 0; off < 8; off += 3) {
      std::vector<float> want(65536), got(65536);
      widen_r(codes.data() + off, want.data(), want.size());
      widen_v(codes.data() + off, got.data(), got.size());
      ASSERT_TRUE(same_floats(got.data(), want.data(), nullptr, got.size()))
          << (bf ? "bf16" : "f16") << " off " << off;
    }
    for (size_t n = 0; n <= kMaxLen; ++n) {
      std::vector<float> want(n), got(n + 1, from_bits(kGuard));
      widen_r(codes.data() + 0x7bf0, want.data(), n);  // finite, inf and NaN codes
      widen_v(codes.data() + 0x7bf0, got.data(), n);
      ASSERT_TRUE(same_floats(got.data(), want.data(), nullptr, n)) << "n " << n;
      ASSERT_EQ(to_bits(got[n]), kGuard) << "wrote past n " << n;
    }
  }
  // Narrowing: the specials, every f16 midpoint and its neighbours (ties to
  // even, the subnormal range, the overflow threshold 65520), bf16 ties.
  std::vector<float> f = adversarial_floats();
  for (uint32_t h = 0; h < 0x7c00; h += 3) {
    const float a = half_to_float(uint16_t(h)), b = half_to_float(uint16_t(h + 1));
    const float mid = (a + b) / 2;
    for (float s : {1.0f, -1.0f}) {
      f.push_back(s * mid);
      f.push_back(s * std::nextafter(mid, 0.0f));
      f.push_back(s * std::nextafter(mid, INFINITY));
    }
  }
  for (uint32_t bits :
       {0x3f808000u, 0x3f818000u, 0x3f817fffu, 0x7f7fffffu, 0x7f7f8000u, 0x477ff000u, 0x477fefffu,
        0x33000000u, 0x33000001u, 0x32ffffffu, 0x7fffffffu, 0xffffffffu, 0x7f800001u, 0x7fbfffffu})
    f.push_back(from_bits(bits));
  for (bool bf : {false, true}) {
    auto narrow_r = bf ? r.f32_to_bf16 : r.f32_to_f16;
    auto narrow_v = bf ? v.f32_to_bf16 : v.f32_to_f16;
    std::vector<uint16_t> want(f.size()), got(f.size());
    narrow_r(f.data(), want.data(), f.size());
    narrow_v(f.data(), got.data(), f.size());
    for (size_t i = 0; i < f.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << (bf ? "bf16" : "f16") << " of " << hex(to_bits(f[i]))
                                 << " (element " << i << ")";
    for (size_t n = 0; n <= kMaxLen; ++n) {
      std::vector<uint16_t> w(n), g(n + 1, 0xA5A5);
      narrow_r(f.data() + 1, w.data(), n);
      narrow_v(f.data() + 1, g.data(), n);
      ASSERT_EQ(g[n], 0xA5A5) << "wrote past n " << n;
      g.resize(n);
      ASSERT_EQ(g, w) << (bf ? "bf16" : "f16") << " n " << n;
    }
  }
}

TEST(VecNeon, HalfConversionsGiveRefBitsAtEveryLength) {
  const HalfConvert& v = half_convert(IsaLevel::kNeon);
  EXPECT_EQ(v.f32_to_bf16, f32_to_bf16_neon);
  expect_half_ref_bits(v);
}

// BFCVTN's f32 -> bf16 (vec_half_bf16.cc), on hosts with FEAT_BF16 (qemu -cpu max).
TEST(VecNeon, Bf16ConversionGivesRefBitsAtEveryLength) {
  if (!device::detect_cpu_features().bf16) GTEST_SKIP() << "host without FEAT_BF16";
  const HalfConvert& v = half_convert(IsaLevel::kNeon, true);
  ASSERT_EQ(v.f32_to_bf16, f32_to_bf16_bfcvt);
  expect_half_ref_bits(v);
  // The host's table takes it, unless a cap at dotprod or below drops bf16.
  const bool kept = device::host_cpu_features().bf16;
  EXPECT_EQ(host_half_convert().f32_to_bf16 == f32_to_bf16_bfcvt, kept);
}

}  // namespace
}  // namespace onnx_prepack::kernels::vec

#endif  // __aarch64__
