// f32 GEMM kernels against a double-precision reference and against each
// other: every kernel computes one FMA chain per element, so all ISAs, tiles,
// blockings and thread counts must agree bit for bit.
#include "kernels/f32_gemm/f32_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "kernels/f32_gemm/gemm_driver.h"

namespace onnx_prepack::kernels {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

bool host_has(device::IsaLevel level) { return device::host_isa_level() >= level; }

std::vector<float> pack(const std::vector<float>& b_kn, size_t k, size_t n, size_t nr) {
  std::vector<float> packed(packed_b_floats(k, n, nr), -7.0f);
  F32PackBArgs args{b_kn.data(), PackSourceLayout::kKN, PackSourceType::kFloat, k, n,
                    nr,          packed.data()};
  f32_pack_b_ref(&args, 0, packed_b_panels(n, nr));
  return packed;
}

struct Bias {
  std::vector<float> data;
  ptrdiff_t rs = 0, cs = 0;
};

// kind: 0 none, 1 row vector [n], 2 column [m, 1], 3 scalar, 4 full [m, n].
Bias make_bias(int kind, size_t m, size_t n, uint32_t seed) {
  Bias b;
  switch (kind) {
    case 1:
      b.data = random_floats(n, seed);
      b.cs = 1;
      break;
    case 2:
      b.data = random_floats(m, seed);
      b.rs = 1;
      break;
    case 3:
      b.data = random_floats(1, seed);
      break;
    case 4:
      b.data = random_floats(m * n, seed);
      b.rs = ptrdiff_t(n);
      b.cs = 1;
      break;
    default:
      break;
  }
  return b;
}

std::vector<float> run(const F32GemmKernel& kern, size_t m, size_t k, size_t n,
                       const std::vector<float>& a, const std::vector<float>& b_kn, float alpha,
                       float beta, const Bias& bias, base::ThreadPool* pool, size_t kc = 0) {
  const std::vector<float> packed = pack(b_kn, k, n, kern.nr);
  std::vector<float> c(m * n, std::nanf(""));
  F32GemmArgs g;
  g.m = m;
  g.a = a.data();
  g.lda = k;
  g.b = {packed.data(), k, n, kern.nr};
  g.c = c.data();
  g.ldc = n;
  g.alpha = alpha;
  g.beta = beta;
  g.bias = bias.data.empty() ? nullptr : bias.data.data();
  g.bias_rs = bias.rs;
  g.bias_cs = bias.cs;
  F32GemmOptions o;
  o.pool = pool;
  o.kernel = &kern;
  o.kc = kc;
  EXPECT_TRUE(f32_gemm(g, o).ok());
  return c;
}

void expect_close_to_reference(size_t m, size_t k, size_t n, const std::vector<float>& a,
                               const std::vector<float>& b, float alpha, float beta,
                               const Bias& bias, const std::vector<float>& c) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double s = 0, mag = 0;
      for (size_t p = 0; p < k; ++p) {
        s += double(a[i * k + p]) * b[p * n + j];
        mag += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      }
      s *= alpha;
      if (!bias.data.empty()) {
        const double bv = bias.data[i * bias.rs + j * bias.cs];
        s += double(beta) * bv;
        mag += std::fabs(double(beta) * bv);
      }
      ASSERT_NEAR(c[i * n + j], s, 1e-5 * (mag + 1)) << "at " << i << "," << j;
    }
  }
}

const F32GemmKernel& kernel_named(const char* name) {
  for (const F32GemmKernel& k : kF32GemmKernels) {
    if (std::strcmp(k.name, name) == 0) return k;
  }
  std::abort();
}

class F32GemmKernelTest : public ::testing::TestWithParam<F32GemmKernel> {};

TEST_P(F32GemmKernelTest, MatchesReferenceAndRefTwinBitwise) {
  const F32GemmKernel& kern = GetParam();
  if (!host_has(kern.isa)) GTEST_SKIP() << kern.name << " needs " << isa_level_name(kern.isa);
  const F32GemmKernel& twin = kern.nr == 32   ? kernel_named("f32_gemm_14x32_ref")
                              : kern.nr == 12 ? kernel_named("f32_gemm_8x12_ref")
                                              : kernel_named("f32_gemm_6x16_ref");
  uint32_t seed = 1;
  for (size_t m : {1, 2, 5, 6, 7, 8, 9, 13, 14, 15, 29, 64}) {
    for (size_t n : {1, 7, 8, 11, 12, 13, 15, 16, 17, 31, 32, 33, 100}) {
      for (size_t k : {1, 3, 17, 64}) {
        const auto a = random_floats(m * k, seed++);
        const auto b = random_floats(k * n, seed++);
        const Bias bias = make_bias(int(seed % 5), m, n, seed);
        const float alpha = seed % 3 == 0 ? 0.5f : 1.0f, beta = seed % 2 ? 1.0f : -2.0f;
        const auto c = run(kern, m, k, n, a, b, alpha, beta, bias, nullptr);
        expect_close_to_reference(m, k, n, a, b, alpha, beta, bias, c);
        const auto c_twin = run(twin, m, k, n, a, b, alpha, beta, bias, nullptr);
        ASSERT_EQ(0, std::memcmp(c.data(), c_twin.data(), c.size() * 4))
            << kern.name << " m=" << m << " n=" << n << " k=" << k;
      }
    }
  }
}

TEST_P(F32GemmKernelTest, BlockingAndThreadsDoNotChangeBits) {
  const F32GemmKernel& kern = GetParam();
  if (!host_has(kern.isa)) GTEST_SKIP() << kern.name << " needs " << isa_level_name(kern.isa);
  const size_t m = 300, k = 777, n = 161;
  const auto a = random_floats(m * k, 11), b = random_floats(k * n, 12);
  const Bias bias = make_bias(1, m, n, 13);
  const auto base = run(kern, m, k, n, a, b, 1.0f, 1.0f, bias, nullptr, 100000);
  expect_close_to_reference(m, k, n, a, b, 1.0f, 1.0f, bias, base);
  for (size_t threads : {1, 2, 3}) {
    base::ThreadPool pool(threads);
    for (size_t kc : {0, 1, 7, 256}) {
      const auto c = run(kern, m, k, n, a, b, 1.0f, 1.0f, bias, &pool, kc);
      ASSERT_EQ(0, std::memcmp(c.data(), base.data(), c.size() * 4))
          << kern.name << " threads=" << threads << " kc=" << kc;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, F32GemmKernelTest, ::testing::ValuesIn(kF32GemmKernels),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(F32Gemm, AllKernelsAgreeAcrossTiles) {
  const size_t m = 37, k = 129, n = 75;
  const auto a = random_floats(m * k, 21), b = random_floats(k * n, 22);
  const Bias bias = make_bias(4, m, n, 23);
  const auto want =
      run(kernel_named("f32_gemm_6x16_ref"), m, k, n, a, b, 0.25f, 3.0f, bias, nullptr);
  for (const F32GemmKernel& kern : kF32GemmKernels) {
    if (!host_has(kern.isa)) continue;
    const auto c = run(kern, m, k, n, a, b, 0.25f, 3.0f, bias, nullptr);
    EXPECT_EQ(0, std::memcmp(c.data(), want.data(), c.size() * 4)) << kern.name;
  }
}

TEST(F32Gemm, KZeroGivesBiasOnly) {
  // Every kernel the host runs, below and above the small-M path (M <= 28).
  for (const F32GemmKernel& kern : kF32GemmKernels) {
    if (!host_has(kern.isa)) continue;
    for (size_t m : {3, 40}) {
      const Bias bias = make_bias(1, m, 37, 3);
      const auto c = run(kern, m, 0, 37, {}, {}, 1.0f, 2.0f, bias, nullptr);
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < 37; ++j) {
          ASSERT_EQ(c[i * 37 + j], 2.0f * bias.data[j]) << kern.name << " m " << m;
        }
      }
    }
  }
}

TEST(F32Gemm, RejectsMismatchedPanelWidthAndStrides) {
  std::vector<float> a(4), b(16), c(4);
  F32GemmArgs g;
  g.m = 1;
  g.a = a.data();
  g.lda = 1;
  g.b = {b.data(), 1, 4, 16};
  g.c = c.data();
  g.ldc = 4;
  F32GemmOptions o;
  o.kernel = &kernel_named("f32_gemm_14x32_ref");
  EXPECT_FALSE(f32_gemm(g, o).ok());
  o.kernel = nullptr;
  g.b.nr = 24;
  EXPECT_FALSE(f32_gemm(g, o).ok());
  g.b.nr = 16;
  g.ldc = 3;
  const Status s = f32_gemm(g, o);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ldc 3"), std::string::npos) << s.message();
}

TEST(F32Gemm, SelectPrefersTheWidestIsaTheLevelAllows) {
#if defined(__x86_64__)
  EXPECT_STREQ(f32_gemm_select(32, device::IsaLevel::kAvx512)->name, "f32_gemm_14x32_avx512");
  EXPECT_STREQ(f32_gemm_select(16, device::IsaLevel::kAvx512)->name, "f32_gemm_6x16_avx2");
#else
  // No x86 kernel in this build: the level falls back to the _ref twins.
  EXPECT_STREQ(f32_gemm_select(32, device::IsaLevel::kAvx512)->name, "f32_gemm_14x32_ref");
  EXPECT_STREQ(f32_gemm_select(16, device::IsaLevel::kAvx512)->name, "f32_gemm_6x16_ref");
#endif
  EXPECT_STREQ(f32_gemm_select(32, device::IsaLevel::kAvx2)->name, "f32_gemm_14x32_ref");
  EXPECT_STREQ(f32_gemm_select(16, device::IsaLevel::kRef)->name, "f32_gemm_6x16_ref");
  EXPECT_EQ(f32_gemm_select(8, device::IsaLevel::kAvx512), nullptr);
  // aarch64 levels never select an x86 kernel (the levels are unordered).
  EXPECT_STREQ(f32_gemm_select(16, device::IsaLevel::kI8mm)->name, "f32_gemm_6x16_ref");
#if defined(__aarch64__)
  EXPECT_STREQ(f32_gemm_select(12, device::IsaLevel::kNeon)->name, "f32_gemm_8x12_neon");
  EXPECT_STREQ(f32_gemm_native(device::IsaLevel::kDotprod).name, "f32_gemm_8x12_neon");
  EXPECT_STREQ(f32_gemm_native(device::IsaLevel::kNeon).name, "f32_gemm_8x12_neon");
#else
  EXPECT_STREQ(f32_gemm_select(12, device::IsaLevel::kNeon)->name, "f32_gemm_8x12_ref");
  EXPECT_STREQ(f32_gemm_native(device::IsaLevel::kDotprod).name, "f32_gemm_6x16_ref");
#endif
  // ...and x86 levels never the NEON one.
  EXPECT_STREQ(f32_gemm_select(12, device::IsaLevel::kAvx512)->name, "f32_gemm_8x12_ref");
  EXPECT_STREQ(f32_gemm_native(device::IsaLevel::kRef).name, "f32_gemm_6x16_ref");
}

// ---- the 8 x 12 tile, called directly: every mr <= 8, nr <= 12, short and odd
// kc (0 included), both flags and every epilogue. C and bias rows are wider than
// nr and filled with a sentinel past it, so a write or read outside the nr
// columns shows.

using Ukernel = void (*)(size_t, size_t, size_t, const float*, const float*, float*, size_t,
                         uint32_t, const F32GemmEpilogue*);

// The contract, spelled out: one std::fma chain per element from 0 (or c),
// then alpha * v and fma(beta, bias, v).
void naive_fma_8x12(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                    size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  for (size_t i = 0; i < mr; ++i) {
    for (size_t j = 0; j < nr; ++j) {
      float v = (flags & kGemmAccumulate) ? c[i * ldc + j] : 0.0f;
      for (size_t k = 0; k < kc; ++k) v = std::fma(a[k * mr + i], b[k * 12 + j], v);
      if (flags & kGemmFinal) {
        if (ep->alpha != 1.0f) v = ep->alpha * v;
        if (ep->bias != nullptr)
          v = std::fma(ep->beta, ep->bias[ptrdiff_t(i) * ep->bias_rs + ptrdiff_t(j) * ep->bias_cs],
                       v);
      }
      c[i * ldc + j] = v;
    }
  }
}

// Runs every case through `fn` and `want`, asserting bitwise equal C (the
// whole ldc-wide buffer, sentinels included). Returns the number of cases.
size_t compare_8x12_tiles(Ukernel fn, Ukernel want, const char* what) {
  constexpr size_t kLdc = 17;
  size_t cases = 0;
  uint32_t seed = 100;
  for (size_t kc : {0, 1, 2, 3, 5, 8, 17, 64}) {
    const std::vector<float> b = random_floats(std::max<size_t>(kc, 1) * 12, seed++);
    for (size_t mr = 1; mr <= 8; ++mr) {
      // Tight A micro-panel, exactly kc * mr floats (no slack to over-read).
      std::vector<float> a = random_floats(std::max<size_t>(kc * mr, 1), seed++);
      a.resize(kc * mr);
      const std::vector<float> c0 = random_floats(8 * kLdc, seed++);
      const std::vector<float> bias_full = random_floats(8 * kLdc, seed++);
      for (size_t nr = 1; nr <= 12; ++nr) {
        for (uint32_t flags = 0; flags < 4; ++flags) {
          // bias kinds: none, row vector, column, scalar, full (rs = kLdc).
          for (int bk = 0; bk < 5; ++bk) {
            for (int ab = 0; ab < 3; ++ab) {
              F32GemmEpilogue ep;
              ep.alpha = ab == 1 ? 0.5f : ab == 2 ? -3.0f : 1.0f;
              ep.beta = ab == 2 ? 1.0f : -2.0f;
              ep.bias = bk == 0 ? nullptr : bias_full.data();
              ep.bias_rs = bk == 2 || bk == 4 ? (bk == 2 ? 1 : ptrdiff_t(kLdc)) : 0;
              ep.bias_cs = bk == 1 || bk == 4 ? 1 : 0;
              std::vector<float> got = c0, exp = c0;
              for (size_t i = 0; i < 8; ++i) {
                for (size_t j = nr; j < kLdc; ++j) got[i * kLdc + j] = exp[i * kLdc + j] = 1e30f;
              }
              fn(mr, nr, kc, a.data(), b.data(), got.data(), kLdc, flags, &ep);
              want(mr, nr, kc, a.data(), b.data(), exp.data(), kLdc, flags, &ep);
              EXPECT_EQ(0, std::memcmp(got.data(), exp.data(), got.size() * 4))
                  << what << " mr=" << mr << " nr=" << nr << " kc=" << kc << " flags=" << flags
                  << " bias=" << bk << " alpha/beta=" << ab;
              if (::testing::Test::HasFailure()) return cases;
              ++cases;
            }
          }
        }
      }
    }
  }
  return cases;
}

TEST(F32Gemm8x12, RefTwinIsTheNaiveFmaLoop) {
  const size_t cases = compare_8x12_tiles(f32_gemm_8x12_ref, naive_fma_8x12, "f32_gemm_8x12_ref");
  EXPECT_EQ(cases, 8u * 8 * 12 * 4 * 5 * 3);
  std::printf("f32_gemm_8x12_ref vs naive fma loop: %zu tiles bitwise equal\n", cases);
}

#if defined(__aarch64__)
TEST(F32Gemm8x12, NeonMatchesRefTwinBitwise) {
  if (!host_has(device::IsaLevel::kNeon)) GTEST_SKIP() << "needs neon";
  const size_t cases =
      compare_8x12_tiles(f32_gemm_8x12_neon, f32_gemm_8x12_ref, "f32_gemm_8x12_neon");
  EXPECT_EQ(cases, 8u * 8 * 12 * 4 * 5 * 3);
  std::printf("f32_gemm_8x12_neon vs f32_gemm_8x12_ref: %zu tiles bitwise equal\n", cases);
}
#endif

}  // namespace
}  // namespace onnx_prepack::kernels
