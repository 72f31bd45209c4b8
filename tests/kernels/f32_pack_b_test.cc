// B packing: layout, zero padding, FLOAT16 widening, and every pack routine
// writing the same bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/f32_gemm/f32_gemm.h"
#include "kernels/f32_gemm/gemm_driver.h"

namespace onnx_prepack::kernels {
namespace {

std::vector<uint32_t> random_bits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = rng();
  return v;
}

TEST(F32PackB, LayoutAndPaddingOfBothSourceLayouts) {
  const size_t k = 3, n = 21, nr = 16;
  std::vector<float> kn(k * n), nk(n * k);
  for (size_t r = 0; r < k; ++r) {
    for (size_t c = 0; c < n; ++c) kn[r * n + c] = nk[c * k + r] = float(r * 100 + c);
  }
  for (auto layout : {PackSourceLayout::kKN, PackSourceLayout::kNK}) {
    std::vector<float> dst(packed_b_floats(k, n, nr), -1.0f);
    F32PackBArgs args{layout == PackSourceLayout::kKN ? kn.data() : nk.data(),
                      layout,
                      PackSourceType::kFloat,
                      k,
                      n,
                      nr,
                      dst.data()};
    ASSERT_TRUE(f32_pack_b(args).ok());
    for (size_t p = 0; p < 2; ++p) {
      for (size_t r = 0; r < k; ++r) {
        for (size_t j = 0; j < nr; ++j) {
          const size_t col = p * nr + j;
          EXPECT_EQ(dst[(p * k + r) * nr + j], col < n ? float(r * 100 + col) : 0.0f);
        }
      }
    }
  }
}

TEST(F32PackB, Avx2RoutineWritesTheReferenceBytes) {
  if (device::host_isa_level() < device::IsaLevel::kAvx2) GTEST_SKIP() << "needs avx2";
  for (size_t nr : {16, 32}) {
    for (auto type : {PackSourceType::kFloat, PackSourceType::kFloat16}) {
      for (auto layout : {PackSourceLayout::kKN, PackSourceLayout::kNK}) {
        for (size_t k : {1, 7, 8, 9, 33}) {
          for (size_t n : {1, 5, 8, 16, 17, 40, 64, 65}) {
            const auto bits = random_bits(k * n, uint32_t(k * 1000 + n));
            std::vector<float> f32(k * n);
            std::vector<uint16_t> f16(k * n);
            for (size_t i = 0; i < k * n; ++i) {
              std::memcpy(&f32[i], &bits[i], 4);
              f16[i] = uint16_t(bits[i]);
            }
            const void* src =
                type == PackSourceType::kFloat ? static_cast<const void*>(f32.data()) : f16.data();
            std::vector<float> want(packed_b_floats(k, n, nr), 1.0f);
            std::vector<float> got(want.size(), 2.0f);
            F32PackBArgs a1{src, layout, type, k, n, nr, want.data()};
            F32PackBArgs a2{src, layout, type, k, n, nr, got.data()};
            f32_pack_b_ref(&a1, 0, packed_b_panels(n, nr));
#if defined(__x86_64__)
            f32_pack_b_avx2(&a2, 0, packed_b_panels(n, nr));
#else
            f32_pack_b_ref(&a2, 0, packed_b_panels(n, nr));  // no other packer in this build
#endif
            ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
                << "nr=" << nr << " k=" << k << " n=" << n
                << " nk=" << (layout == PackSourceLayout::kNK)
                << " f16=" << (type == PackSourceType::kFloat16);
          }
        }
      }
    }
  }
}

TEST(F32PackB, Float16WideningIsExactForEveryValue) {
  // Every binary16 pattern widened by the pack routine narrows back to itself
  // (NaNs: stay NaN with the sign kept).
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  std::vector<float> dst(65536);
  F32PackBArgs args{all.data(), PackSourceLayout::kKN, PackSourceType::kFloat16, 1, 65536, 16,
                    dst.data()};
  ASSERT_TRUE(f32_pack_b(args).ok());
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = dst[h];
    EXPECT_EQ(std::memcmp(&f, &dst[h], 4), 0);
    const float want = f16_bits_to_f32(uint16_t(h));
    uint32_t a, b;
    std::memcpy(&a, &f, 4);
    std::memcpy(&b, &want, 4);
    ASSERT_EQ(a, b) << "half 0x" << std::hex << h;
    const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f && man != 0) {
      ASSERT_TRUE(std::isnan(f));
      continue;
    }
    // Exact: the float has at most 11 significant bits and round-trips.
    const double mag = std::ldexp(double(exp ? (man | 0x400) : man), exp ? int(exp) - 25 : -24);
    const double v = exp == 0x1f ? INFINITY : mag;
    ASSERT_EQ(double(f), (h & 0x8000) ? -v : v) << "half 0x" << std::hex << h;
  }
}

TEST(F32PackB, RejectsPanelWidthsThatAreNotMultiplesOfFour) {
  float x = 0, y[16] = {};
  for (size_t nr : {0, 6, 10, 14}) {
    F32PackBArgs args{&x, PackSourceLayout::kKN, PackSourceType::kFloat, 1, 1, nr, y};
    EXPECT_FALSE(f32_pack_b(args).ok()) << nr;
  }
}

// 12-column panels (the NEON formats), packed on any host: the dispatcher's
// routine (the portable one for widths the AVX2 packer cannot take) writes
// the bytes of f32_pack_b_ref, tail zeros included.
TEST(F32PackB, TwelveColumnPanelsMatchThePortablePack) {
  const size_t k = 19, n = 29, nr = 12;
  std::vector<float> f32(k * n);
  std::vector<uint16_t> f16(k * n);
  for (size_t i = 0; i < k * n; ++i) {
    f32[i] = float(int(i * 37 % 101) - 50) / 8.0f;
    f16[i] = uint16_t(0x3c00 + (i * 7 % 512));
  }
  for (auto layout : {PackSourceLayout::kKN, PackSourceLayout::kNK}) {
    for (auto type : {PackSourceType::kFloat, PackSourceType::kFloat16}) {
      const void* src =
          type == PackSourceType::kFloat ? static_cast<const void*>(f32.data()) : f16.data();
      const size_t floats = packed_b_floats(k, n, nr);
      std::vector<float> got(floats, -1.0f), want(floats, -2.0f);
      F32PackBArgs a{src, layout, type, k, n, nr, got.data()};
      ASSERT_TRUE(f32_pack_b(a).ok());
      F32PackBArgs r = a;
      r.dst = want.data();
      f32_pack_b_ref(&r, 0, packed_b_panels(n, nr));
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), floats * 4));
      EXPECT_EQ(want[2 * k * nr + 5], 0.0f);  // column 29 of the 3-panel tail: zero
    }
  }
}

// A strided source (rows ld elements apart, as a head of [T, N, D] keys read in place) packs
// into the bytes of its dense copy, with every pack routine; a stride below the row is refused.
TEST(F32PackB, StridedSourcePacksLikeItsDenseCopy) {
  const size_t k = 21, n = 37, pad = 11;
  const std::vector<uint32_t> bits = random_bits((k + pad) * (n + pad), 5);
  for (auto layout : {PackSourceLayout::kKN, PackSourceLayout::kNK}) {
    const size_t rows = layout == PackSourceLayout::kKN ? k : n;
    const size_t len = layout == PackSourceLayout::kKN ? n : k, ld = len + pad;
    for (auto type : {PackSourceType::kFloat, PackSourceType::kFloat16}) {
      const size_t esize = type == PackSourceType::kFloat ? 4 : 2;
      std::vector<uint8_t> strided(rows * ld * esize), dense(rows * len * esize);
      std::memcpy(strided.data(), bits.data(), strided.size());
      if (type == PackSourceType::kFloat16) {  // finite halves only: NaN payloads aside
        for (size_t i = 0; i + 1 < strided.size(); i += 2) strided[i + 1] &= 0x7b;
      }
      for (size_t r = 0; r < rows; ++r) {
        std::memcpy(&dense[r * len * esize], &strided[r * ld * esize], len * esize);
      }
      for (size_t nr : {size_t(12), size_t(16), size_t(32)}) {
        const size_t floats = packed_b_floats(k, n, nr);
        std::vector<float> want(floats, -1.0f), got(floats, -2.0f), got_ref(floats, -3.0f);
        F32PackBArgs d{dense.data(), layout, type, k, n, nr, want.data()};
        ASSERT_TRUE(f32_pack_b(d).ok());
        F32PackBArgs a = d;
        a.src = strided.data();
        a.ld = ld;
        a.dst = got.data();
        ASSERT_TRUE(f32_pack_b(a).ok());
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), floats * 4)) << nr;
        a.dst = got_ref.data();
        f32_pack_b_ref(&a, 0, packed_b_panels(n, nr));
        EXPECT_EQ(0, std::memcmp(got_ref.data(), want.data(), floats * 4)) << nr;
        a.ld = len - 1;
        const Status st = f32_pack_b(a);
        EXPECT_FALSE(st.ok());
        EXPECT_NE(st.message().find("row stride"), std::string::npos) << st.message();
      }
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels
