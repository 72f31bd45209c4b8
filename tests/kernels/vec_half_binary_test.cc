// The FEAT_FP16 float16 Add/Sub/Mul/Div kernel (vec_half_binary_fp16.cc)
// against its portable twin bit for bit: every float16 value against a sample
// of the other operand that holds +-0, subnormals, the largest finite values,
// +-inf, quiet and signalling NaNs of both signs with payloads, for each op,
// in both operand orders, with strides 0 and 1 and every length 0..40 (every
// 8-lane tail). On every host, the ref against hand-checked values.
#include "kernels/vec_math/vec_half_binary.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/vec_math/vec_half.h"

namespace onnx_prepack::kernels::vec {
namespace {

uint16_t ref1(int op, uint16_t a, uint16_t b) {
  uint16_t o = 0;
  f16_binary_ref(op, &a, 1, &b, 1, &o, 1);
  return o;
}

TEST(VecHalfBinary, RefAgreesWithHandCheckedValues) {
  const uint16_t one = 0x3c00, ulp_half = 0x1000;   // 1 and 2^-11 (half of 1's ulp)
  EXPECT_EQ(ref1(kAdd, one, ulp_half), one);        // 1 + 2^-11: a tie, to even (1)
  EXPECT_EQ(ref1(kAdd, 0x3c01, ulp_half), 0x3c02);  // (1 + 2^-10) + 2^-11: a tie, to even
  EXPECT_EQ(ref1(kAdd, 0x7bff, 0x4c00), 0x7c00);    // 65504 + 16: a tie at the top, to inf
  EXPECT_EQ(ref1(kAdd, 0x7bff, 0x4b00), 0x7bff);    // 65504 + 14: below the tie
  EXPECT_EQ(ref1(kMul, 0x7bff, 0x4000), 0x7c00);    // 65504 * 2 = inf
  EXPECT_EQ(ref1(kMul, 0xfbff, 0x4000), 0xfc00);    // -inf
  EXPECT_EQ(ref1(kMul, 0x0001, 0x3800), 0x0000);    // 2^-24 * 0.5: a tie, to even (0)
  EXPECT_EQ(ref1(kMul, 0x0003, 0x3800), 0x0002);    // 3 * 2^-25: a tie, to even (2^-23)
  EXPECT_EQ(ref1(kDiv, 0x0400, 0x4000), 0x0200);    // smallest normal / 2: subnormal
  EXPECT_EQ(ref1(kSub, 0x3c00, 0x3c00), 0x0000);    // 1 - 1 = +0
  EXPECT_EQ(ref1(kAdd, 0x8000, 0x8000), 0x8000);    // -0 + -0 = -0
  EXPECT_EQ(ref1(kDiv, 0x3c00, 0x0000), 0x7c00);    // 1 / +0 = inf
  EXPECT_EQ(ref1(kDiv, 0x3c00, 0x8000), 0xfc00);    // 1 / -0 = -inf
  EXPECT_EQ(ref1(kDiv, 0x4200, 0x4000), 0x3e00);    // 3 / 2 = 1.5
  EXPECT_EQ(ref1(kDiv, 0x3c00, 0x4200), 0x3555);    // 1 / 3 = 0x3555 (0.33325)
  EXPECT_EQ(ref1(kMul, 0x4200, 0xc500), 0xcb80);    // 3 * -5 = -15
  EXPECT_EQ(ref1(kAdd, 0x7e01, one), 0x7e01);       // a quiet NaN keeps its payload
  EXPECT_EQ(ref1(kAdd, one, 0x7c01), 0x7e01);       // a signalling one comes out quiet
  // Invalid operations: a NaN (the sign of the default NaN is the machine's).
  EXPECT_EQ(ref1(kSub, 0x7c00, 0x7c00) & 0x7fff, 0x7e00);  // inf - inf
  EXPECT_EQ(ref1(kMul, 0x0000, 0x7c00) & 0x7fff, 0x7e00);  // 0 * inf
  // Strides: 0 repeats the one element.
  const uint16_t a[3] = {0x3c00, 0x4000, 0x4200}, two = 0x4000;
  uint16_t o[3] = {};
  f16_binary_ref(kMul, a, 1, &two, 0, o, 3);
  EXPECT_EQ(o[0], 0x4000);
  EXPECT_EQ(o[1], 0x4400);
  EXPECT_EQ(o[2], 0x4600);
  f16_binary_ref(kSub, &two, 0, a, 1, o, 3);
  EXPECT_EQ(o[0], 0x3c00);
  EXPECT_EQ(o[1], 0x0000);
  EXPECT_EQ(o[2], 0xbc00);
}

TEST(VecHalfBinary, SelectsTheFp16KernelOnlyWithFp16) {
  const HalfBinaryFn fn = half_binary_select();
#if defined(__aarch64__)
  const bool want =
      device::host_cpu_features().fp16 && device::host_isa_level() >= device::IsaLevel::kNeon;
  EXPECT_EQ(fn != nullptr, want);
  if (fn != nullptr) {
    EXPECT_EQ(fn, &f16_binary_fp16);
  }
  device::set_max_isa(device::IsaLevel::kNeon);  // a neon cap drops fp16
  EXPECT_EQ(half_binary_select(), nullptr);
  device::set_max_isa(device::IsaLevel::kRef);
  EXPECT_EQ(half_binary_select(), nullptr);
  device::set_max_isa(std::nullopt);
#else
  EXPECT_EQ(fn, nullptr);  // x86-64 and others: the adapter widens as before
#endif
}

#if defined(__aarch64__)

// The second operands: specials first, then a spread of every exponent.
std::vector<uint16_t> sample_values() {
  std::vector<uint16_t> v = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0200, 0x0400,
                             0x8400, 0x0401, 0x3c00, 0xbc00, 0x3c01, 0x3bff, 0x3800, 0x4000,
                             0x4200, 0xc500, 0x1000, 0x0c00, 0x7bff, 0xfbff, 0x7bfe, 0x4c00,
                             0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7e01, 0xfe55, 0x7fff, 0x7c01,
                             0xfc01, 0x7d55, 0xfdff, 0x7c80, 0x5bff, 0x2001, 0xe3ab, 0x1555};
  uint32_t s = 0x12345678u;
  while (v.size() < 160) {
    s = s * 1664525u + 1013904223u;
    v.push_back(uint16_t(s >> 16));
  }
  return v;
}

TEST(VecHalfBinary, Fp16KernelGivesRefBitsForEveryValue) {
  if (half_binary_select() == nullptr)
    GTEST_SKIP() << "the host has no FEAT_FP16 (or a cap below it): the ref path only";
  std::vector<uint16_t> all(65536), got(65536), want(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  const std::vector<uint16_t> sample = sample_values();
  for (int op = kAdd; op <= kDiv; ++op) {
    for (const uint16_t y : sample) {
      // every a op y (b stride 0), then y op every b (a stride 0)
      f16_binary_fp16(op, all.data(), 1, &y, 0, got.data(), all.size());
      f16_binary_ref(op, all.data(), 1, &y, 0, want.data(), all.size());
      for (size_t i = 0; i < all.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << "op " << op << ": " << std::hex << all[i] << " op " << y;
      }
      f16_binary_fp16(op, &y, 0, all.data(), 1, got.data(), all.size());
      f16_binary_ref(op, &y, 0, all.data(), 1, want.data(), all.size());
      for (size_t i = 0; i < all.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << "op " << op << ": " << std::hex << y << " op " << all[i];
      }
    }
  }
}

TEST(VecHalfBinary, Fp16KernelGivesRefBitsAtEveryLengthAndStride) {
  if (half_binary_select() == nullptr)
    GTEST_SKIP() << "the host has no FEAT_FP16 (or a cap below it): the ref path only";
  const std::vector<uint16_t> v = sample_values();
  constexpr uint16_t kGuard = 0xbeef;
  for (int op = kAdd; op <= kDiv; ++op) {
    for (size_t n = 0; n <= 40; ++n) {
      for (size_t sa = 0; sa <= 1; ++sa) {
        for (size_t sb = 0; sb <= 1; ++sb) {
          for (size_t off = 0; off < 3; ++off) {
            const uint16_t* a = v.data() + off;
            const uint16_t* b = v.data() + 100 - off * 7;
            std::vector<uint16_t> got(n + 1, kGuard), want(n + 1, kGuard);
            f16_binary_fp16(op, a, sa, b, sb, got.data(), n);
            f16_binary_ref(op, a, sa, b, sb, want.data(), n);
            ASSERT_EQ(got, want) << "op " << op << " n " << n << " sa " << sa << " sb " << sb;
            ASSERT_EQ(got[n], kGuard);
          }
        }
      }
    }
  }
}

#endif  // __aarch64__

}  // namespace
}  // namespace onnx_prepack::kernels::vec
