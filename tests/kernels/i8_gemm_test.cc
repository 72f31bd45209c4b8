// Int8 GEMM kernels (i8_gemm.h) against a naive loop accumulating in int64
// and wrapped to int32: every ISA variant the host runs (capped by
// ONNX_PREPACK_MAX_ISA), the four signedness combinations, per-tensor and
// per-row/column zero points, shapes around the tile and panel edges, extreme
// operands, K large enough to wrap, and threaded runs equal to single-threaded.
#include "kernels/i8_gemm/i8_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels {

// i8_gemm_vnni256_emulated_avx2.cc: the AVX-VNNI kernel's tiles on AVX2.
void i8_gemm_vnni256_emulated(const I8GemmShape&, const I8Tile&, const uint8_t*, int64_t, int64_t);

namespace {

struct Rng {
  uint64_t x;
  explicit Rng(uint64_t seed) : x(seed * 0x9e3779b97f4a7c15ull + 1) {}
  uint32_t next() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(x >> 32);
  }
  int64_t below(int64_t n) { return int64_t(next() % uint32_t(n)); }
};

// What to fill the operands with.
enum class Fill { kRandom, kMax, kMin };

struct Case {
  int64_t M, K, N;
  bool a_signed, b_signed;
  int64_t za_n, zb_n;  // 0: no zero point
  Fill fill = Fill::kRandom;
};

struct Operands {
  std::vector<uint8_t> a, b;  // raw bytes of the int8 / uint8 values
  std::vector<int32_t> za, zb;
};

int32_t value(uint8_t raw, bool is_signed) { return is_signed ? int32_t(int8_t(raw)) : raw; }

uint8_t extreme(bool is_signed, bool high) {
  return is_signed ? uint8_t(high ? 127 : 0x80) : uint8_t(high ? 255 : 0);
}

Operands make(const Case& c, uint32_t seed) {
  Rng r(seed);
  Operands o;
  o.a.resize(size_t(c.M * c.K));
  o.b.resize(size_t(c.K * c.N));
  auto fill = [&](std::vector<uint8_t>& v, bool is_signed, bool high) {
    for (auto& x : v) {
      x = c.fill == Fill::kRandom ? uint8_t(r.next()) : extreme(is_signed, high);
    }
  };
  // kMax: A at its top, B at its bottom, zero points at the opposite ends: every product is
  // the largest magnitude the types allow.
  fill(o.a, c.a_signed, c.fill != Fill::kMin);
  fill(o.b, c.b_signed, c.fill == Fill::kMin);
  auto zp = [&](int64_t n, bool is_signed, bool high) {
    std::vector<int32_t> z(static_cast<size_t>(n));
    for (auto& x : z) {
      x = value(c.fill == Fill::kRandom ? uint8_t(r.next()) : extreme(is_signed, high), is_signed);
    }
    return z;
  };
  o.za = zp(c.za_n, c.a_signed, c.fill == Fill::kMin);
  o.zb = zp(c.zb_n, c.b_signed, c.fill != Fill::kMin);
  return o;
}

std::vector<int32_t> naive(const Case& c, const Operands& o) {
  std::vector<int32_t> out(size_t(c.M * c.N));
  for (int64_t m = 0; m < c.M; ++m) {
    const int64_t za = c.za_n ? o.za[size_t(m % c.za_n)] : 0;
    for (int64_t n = 0; n < c.N; ++n) {
      const int64_t zb = c.zb_n ? o.zb[size_t(c.zb_n == 1 ? 0 : n)] : 0;
      int64_t s = 0;
      for (int64_t k = 0; k < c.K; ++k) {
        s += (value(o.a[size_t(m * c.K + k)], c.a_signed) - za) *
             (value(o.b[size_t(k * c.N + n)], c.b_signed) - zb);
      }
      out[size_t(m * c.N + n)] = int32_t(uint32_t(uint64_t(s)));
    }
  }
  return out;
}

std::vector<int32_t> run(const I8GemmKernels& kern, const Case& c, const Operands& o,
                         base::ThreadPool* pool) {
  const I8GemmShape s{c.K, c.N, c.b_signed};
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> packed(
      static_cast<uint8_t*>(::operator new[](s.packed_bytes() + 1, std::align_val_t(64))),
      [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
  i8_pack_b(s, o.b.data(), size_t(c.N), packed.get());
  std::vector<int32_t> out(size_t(c.M * c.N), 0x5a5a5a5a);
  I8GemmArgs g;
  g.M = c.M;
  g.a = o.a.data();
  g.lda = size_t(c.K);
  g.a_signed = c.a_signed;
  g.za = c.za_n ? o.za.data() : nullptr;
  g.za_n = std::max<int64_t>(c.za_n, 1);
  g.zb = c.zb_n ? o.zb.data() : nullptr;
  g.zb_n = std::max<int64_t>(c.zb_n, 1);
  g.c = out.data();
  g.ldc = size_t(c.N);
  i8_gemm(kern, s, packed.get(), g, nullptr, pool);
  return out;
}

// The variants this host runs (host_cpu_features() honours ONNX_PREPACK_MAX_ISA).
std::vector<I8GemmKernels> host_kernels() {
  std::vector<I8GemmKernels> out = {i8_gemm_ref_kernels()};
#if defined(__x86_64__)
  const device::CpuFeatures f = device::host_cpu_features();
  if (f.avx2) out.push_back({"i8_gemm_avx2", i8_gemm_avx2});
  if (f.avx2) out.push_back({"i8_gemm_vnni256_emulated", i8_gemm_vnni256_emulated});
  if (f.avx2 && f.avxvnni) out.push_back({"i8_gemm_avxvnni", i8_gemm_avxvnni});
  if (device::host_isa_level() >= device::IsaLevel::kAvx512 && f.avx512vnni) {
    out.push_back({"i8_gemm_avx512vnni", i8_gemm_avx512vnni});
  }
#elif defined(__aarch64__)
  const device::CpuFeatures f = device::host_cpu_features();
  if (f.dotprod) out.push_back({"i8_gemm_dotprod", i8_gemm_dotprod});
  if (f.dotprod && f.i8mm) out.push_back({"i8_gemm_i8mm", i8_gemm_i8mm});
#endif
  return out;
}

std::string describe(const Case& c) {
  return "M=" + std::to_string(c.M) + " K=" + std::to_string(c.K) + " N=" + std::to_string(c.N) +
         " a" + (c.a_signed ? "s8" : "u8") + " b" + (c.b_signed ? "s8" : "u8") +
         " za_n=" + std::to_string(c.za_n) + " zb_n=" + std::to_string(c.zb_n);
}

void check_all(const Case& c, uint32_t seed) {
  const Operands o = make(c, seed);
  const std::vector<int32_t> want = naive(c, o);
  for (const I8GemmKernels& kern : host_kernels()) {
    ASSERT_EQ(run(kern, c, o, nullptr), want) << kern.name << " " << describe(c);
  }
}

constexpr int64_t kSizes[] = {1, 3, 15, 16, 17, 63, 64, 65, 255, 300};

TEST(I8Gemm, EveryKernelMatchesTheNaiveLoopOnEdgeShapes) {
  Rng r(7);
  uint32_t seed = 1;
  // Each size once as M, K and N, with the other two drawn from the list.
  for (int axis = 0; axis < 3; ++axis) {
    for (int64_t v : kSizes) {
      int64_t d[3] = {kSizes[r.below(10)], kSizes[r.below(10)], kSizes[r.below(10)]};
      d[axis] = v;
      Case c{d[0], d[1], d[2], r.below(2) == 1, r.below(2) == 1, 0, 0};
      const int64_t za_opts[] = {0, 1, c.M}, zb_opts[] = {0, 1, c.N};
      c.za_n = za_opts[r.below(3)];
      c.zb_n = zb_opts[r.below(3)];
      check_all(c, seed++);
    }
  }
}

TEST(I8Gemm, AllSignednessAndZeroPointForms) {
  uint32_t seed = 100;
  for (bool as : {false, true}) {
    for (bool bs : {false, true}) {
      for (int64_t za : {0, 1, 17}) {
        for (int64_t zb : {0, 1, 33}) check_all({17, 65, 33, as, bs, za, zb}, seed++);
      }
    }
  }
}

TEST(I8Gemm, ExtremeOperandsAndZeroPoints) {
  for (Fill f : {Fill::kMax, Fill::kMin}) {
    for (bool as : {false, true}) {
      for (bool bs : {false, true}) {
        check_all({9, 255, 40, as, bs, 1, 1, f}, 1);
        check_all({9, 255, 40, as, bs, 9, 40, f}, 2);
        check_all({5, 300, 17, as, bs, 0, 0, f}, 3);
      }
    }
  }
}

TEST(I8Gemm, SumsPastInt32WrapLikeTheNaiveLoop) {
  // 255 * 255 * 40000 > 2^31: the int32 result is the int64 sum mod 2^32.
  check_all({3, 40000, 17, false, false, 1, 1, Fill::kMax}, 5);
  check_all({2, 40001, 33, true, false, 2, 33, Fill::kRandom}, 6);
}

TEST(I8Gemm, ThreadedEqualsSingleThreaded) {
  base::ThreadPool pool(3);
  uint32_t seed = 200;
  for (const Case& c : {Case{300, 255, 65, false, true, 1, 65}, Case{1, 300, 300, true, true, 1, 1},
                        Case{65, 64, 17, false, false, 65, 1}, Case{3, 17, 1000, true, false, 0, 0},
                        Case{255, 63, 16, false, true, 1, 0}}) {
    const Operands o = make(c, seed++);
    const std::vector<int32_t> want = naive(c, o);
    for (const I8GemmKernels& kern : host_kernels()) {
      EXPECT_EQ(run(kern, c, o, &pool), want) << kern.name << " " << describe(c);
      EXPECT_EQ(run(kern, c, o, nullptr), want) << kern.name << " " << describe(c);
    }
  }
}

TEST(I8Gemm, StridedUint8AIsReadAtItsStride) {
  // uint8 A whose K is whole groups of 4 is read where it lies (no copy): the bytes between
  // rows (0xFF here) must not reach the product, and the last row ends exactly at K.
  for (const Case& c :
       {Case{37, 64, 40, false, true, 1, 40}, Case{9, 300, 17, false, false, 9, 1}}) {
    const Operands o = make(c, 11);
    const std::vector<int32_t> want = naive(c, o);
    const size_t lda = size_t(c.K) + 13;
    std::vector<uint8_t> strided((size_t(c.M) - 1) * lda + size_t(c.K), 0xFF);
    for (int64_t m = 0; m < c.M; ++m) {
      std::memcpy(&strided[size_t(m) * lda], &o.a[size_t(m * c.K)], size_t(c.K));
    }
    const I8GemmShape s{c.K, c.N, c.b_signed};
    std::vector<uint8_t> packed(s.packed_bytes());
    i8_pack_b(s, o.b.data(), size_t(c.N), packed.data());
    base::ThreadPool pool(2);
    for (const I8GemmKernels& kern : host_kernels()) {
      for (base::ThreadPool* p : {static_cast<base::ThreadPool*>(nullptr), &pool}) {
        std::vector<int32_t> out(size_t(c.M * c.N), 0x5a5a5a5a);
        I8GemmArgs g;
        g.M = c.M;
        g.a = strided.data();
        g.lda = lda;
        g.za = o.za.data();
        g.za_n = c.za_n;
        g.zb = o.zb.data();
        g.zb_n = c.zb_n;
        g.c = out.data();
        g.ldc = size_t(c.N);
        i8_gemm(kern, s, packed.data(), g, nullptr, p);
        EXPECT_EQ(out, want) << kern.name << " " << describe(c);
      }
    }
  }
}

TEST(I8Gemm, BatchPeriodicRowZeroPoint) {
  // A batch folded into M: row m uses za[m % za_n].
  check_all({4 * 7, 33, 19, false, true, 7, 1}, 9);
}

TEST(I8Gemm, SelectFallsBackToAvx2WithoutVnni) {
#if !defined(__x86_64__)
  device::CpuFeatures all;
  all.avx2 = all.fma = all.f16c = all.avxvnni = all.avx512vnni = true;
  all.neon = all.dotprod = all.i8mm = true;
#if defined(__aarch64__)
  EXPECT_STREQ(i8_gemm_select(all).name, "i8_gemm_i8mm");  // no x86 kernel in this build
  // Capped at neon (ONNX_PREPACK_MAX_ISA=neon, or a Cortex-A53): no SDOT, the ref kernel.
  EXPECT_STREQ(i8_gemm_select(device::cap_cpu_features(all, device::IsaLevel::kNeon)).name,
               "i8_gemm_ref");
  EXPECT_STREQ(i8_gemm_select(device::cap_cpu_features(all, device::IsaLevel::kDotprod)).name,
               "i8_gemm_dotprod");
  EXPECT_STREQ(i8_gemm_select(device::cap_cpu_features(all, device::IsaLevel::kI8mm)).name,
               "i8_gemm_i8mm");
#else
  EXPECT_STREQ(i8_gemm_select(all).name, "i8_gemm_ref");  // no x86 kernel in this build
#endif
  GTEST_SKIP() << "x86-64 kernels only";
#endif
  device::CpuFeatures f;
  f.avx2 = f.fma = f.f16c = true;
  EXPECT_STREQ(i8_gemm_select(f).name, "i8_gemm_avx2");
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = true;
  EXPECT_STREQ(i8_gemm_select(f).name, "i8_gemm_avx2");
  f.avxvnni = true;
  EXPECT_STREQ(i8_gemm_select(f).name, "i8_gemm_avxvnni");
  f.avx512vnni = true;
  EXPECT_STREQ(i8_gemm_select(f).name, "i8_gemm_avx512vnni");
  EXPECT_STREQ(i8_gemm_select(device::CpuFeatures{}).name, "i8_gemm_ref");
  // Capped at avx2, AVX-VNNI (a VEX extension) stays; without it, AVX2.
  EXPECT_STREQ(i8_gemm_select(device::cap_cpu_features(f, device::IsaLevel::kAvx2)).name,
               "i8_gemm_avxvnni");
  f.avxvnni = false;
  EXPECT_STREQ(i8_gemm_select(device::cap_cpu_features(f, device::IsaLevel::kAvx2)).name,
               "i8_gemm_avx2");
}

TEST(I8Gemm, PackWritesZerosPastKAndN) {
  const I8GemmShape s{5, 3, true};
  std::vector<int8_t> b(15, -1);
  std::vector<uint8_t> packed(s.packed_bytes(), 0xEE);
  i8_pack_b(s, b.data(), 3, packed.data());
  for (size_t j = 0; j < 16; ++j) {
    for (size_t k = 0; k < 8; ++k) {
      const uint8_t want = (j < 3 && k < 5) ? 0xFF : 0;
      EXPECT_EQ(packed[(k / 4) * 64 + j * 4 + k % 4], want) << j << "," << k;
    }
    int32_t sum;
    std::memcpy(&sum, packed.data() + 128 + j * 4, 4);
    EXPECT_EQ(sum, j < 3 ? -5 : 0);
  }
}

// The transposed source (a conv's W [N, K] as B, row stride ldb >= K) packs
// the same bytes as its explicit transpose, int8 and uint8.
TEST(I8Gemm, TransposedSourcePacksLikeTheTranspose) {
  for (bool b_signed : {true, false}) {
    const I8GemmShape s{37, 21, b_signed};
    const size_t ldt = 40;  // padded rows of the [N, K] source
    std::vector<uint8_t> bt(size_t(s.N) * ldt), b(size_t(s.K * s.N));
    for (size_t i = 0; i < bt.size(); ++i) bt[i] = uint8_t(i * 37 + 11);
    for (int64_t k = 0; k < s.K; ++k) {
      for (int64_t n = 0; n < s.N; ++n) b[size_t(k * s.N + n)] = bt[size_t(n) * ldt + size_t(k)];
    }
    std::vector<uint8_t> want(s.packed_bytes()), got(s.packed_bytes(), 0xEE);
    i8_pack_b(s, b.data(), size_t(s.N), want.data());
    i8_pack_b(s, bt.data(), ldt, got.data(), /*transposed=*/true);
    EXPECT_EQ(got, want) << b_signed;
  }
}

// The float epilogue (I8GemmArgs::scale): float(C) * scale (+ bias) (Relu) from
// the naive int32 product, one IEEE operation per step, in the bias's operand
// order; per-tensor and per-column scale and bias, with and without a per-row
// scale (the multiplier row_scale[m] * scale[n] rounded first), every kernel,
// threaded (rows split across tasks keep their own scale).
TEST(I8Gemm, FloatEpilogueIsTheChainBitwise) {
  base::ThreadPool pool(3);
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 300;
  for (const Case& c :
       {Case{17, 65, 33, false, true, 1, 33}, Case{9, 300, 17, false, true, 1, 1},
        Case{130, 64, 65, true, false, 0, 0}, Case{1, 16, 16, false, false, 1, 0}}) {
    const Operands o = make(c, seed++);
    const std::vector<int32_t> prod = naive(c, o);
    Rng r(seed);
    std::vector<float> scale(size_t(c.N)), bias(size_t(c.N)), rows(size_t(c.M));
    for (auto& v : scale) v = float(r.next() % 1000 + 1) * 1.37e-5f;
    for (auto& v : rows) v = float(r.next() % 997 + 1) * 2.9e-3f;
    rows[0] = 1.0f;  // a row whose multiplier is the column scale itself
    for (auto& v : bias) v = (float(r.next() % 2001) - 1000.0f) * 3.1e-3f;
    scale[0] = inf;  // with a zero product: NaN; bias NaN too where present
    bias[1] = std::numeric_limits<float>::quiet_NaN();
    for (int form = 0; form < 4; ++form) {
      const int64_t scale_n = form % 2 == 0 ? 1 : c.N;
      const bool per_row = form >= 2;
      for (int64_t bias_n : {int64_t(0), int64_t(1), c.N}) {
        for (bool bias_first : {false, true}) {
          for (bool relu : {false, true}) {
            std::vector<float> want(prod.size());
            for (int64_t m = 0; m < c.M; ++m) {
              for (int64_t n = 0; n < c.N; ++n) {
                const size_t i = size_t(m * c.N + n);
                const float col = scale[size_t(scale_n == 1 ? 0 : n)];
                float y = float(prod[i]) * (per_row ? rows[size_t(m)] * col : col);
                if (bias_n > 0) {
                  const float b = bias[size_t(bias_n == 1 ? 0 : n)];
                  y = bias_first ? b + y : y + b;
                }
                if (relu) y = y < 0.0f ? 0.0f : y;
                want[i] = y;
              }
            }
            const I8GemmShape s{c.K, c.N, c.b_signed};
            std::unique_ptr<uint8_t[], void (*)(uint8_t*)> packed(
                static_cast<uint8_t*>(::operator new[](s.packed_bytes() + 1, std::align_val_t(64))),
                [](uint8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
            i8_pack_b(s, o.b.data(), size_t(c.N), packed.get());
            for (const I8GemmKernels& kern : host_kernels()) {
              for (base::ThreadPool* p : {static_cast<base::ThreadPool*>(nullptr), &pool}) {
                std::vector<float> got(prod.size(), 12345.0f);
                I8GemmArgs g;
                g.M = c.M;
                g.a = o.a.data();
                g.lda = size_t(c.K);
                g.a_signed = c.a_signed;
                g.za = c.za_n ? o.za.data() : nullptr;
                g.za_n = std::max<int64_t>(c.za_n, 1);
                g.zb = c.zb_n ? o.zb.data() : nullptr;
                g.zb_n = std::max<int64_t>(c.zb_n, 1);
                g.ldc = size_t(c.N);
                g.scale = scale.data();
                g.scale_n = scale_n;
                g.row_scale = per_row ? rows.data() : nullptr;
                g.bias = bias_n ? bias.data() : nullptr;
                g.bias_n = std::max<int64_t>(bias_n, 1);
                g.bias_first = bias_first;
                g.relu = relu;
                g.cf = got.data();
                i8_gemm(kern, s, packed.get(), g, nullptr, p);
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0)
                    << kern.name << " " << describe(c) << " scale_n " << scale_n << " per_row "
                    << per_row << " bias_n " << bias_n << " bias_first " << bias_first << " relu "
                    << relu;
              }
            }
          }
        }
      }
    }
  }
}

// The aarch64 SDOT and USMMLA kernels against the _ref kernel, called directly (no driver),
// bitwise: random shapes around their 6- and 4-row tiles (odd rows: USMMLA's row pairs), the
// 16-column panel and the 4-group / 2-group A loads (K not a multiple of 4, 8 or 16), both
// signednesses, random zero-point terms and row sums (any int32: the identity holds mod 2^32 for
// every value, not only the driver's), panel sub-ranges, strided A and C, the int32 output and
// every float epilogue form. A is given exactly k_groups() * 4 bytes per row (lda = that), so a
// read past the contract would leave the buffer (ASan) or change bits.
TEST(I8Gemm, DotprodAndI8mmKernelsEqualRefBitwise) {
#if !defined(__aarch64__)
  GTEST_SKIP() << "aarch64 dotprod / i8mm kernels only";
#else
  const device::CpuFeatures features = device::host_cpu_features();
  if (!features.dotprod) GTEST_SKIP() << "host (capped) lacks dotprod";
  std::vector<I8GemmKernels> kerns = {{"i8_gemm_dotprod", i8_gemm_dotprod}};
  if (features.i8mm) kerns.push_back({"i8_gemm_i8mm", i8_gemm_i8mm});
  Rng r(4242);
  int checked = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int64_t K = 1 + r.below(iter % 5 == 0 ? 300 : 70);
    const int64_t N = 1 + r.below(70);
    const size_t rows = size_t(1 + r.below(20));
    const I8GemmShape s{K, N, r.below(2) == 1};
    std::vector<uint8_t> b(size_t(K * N));
    for (auto& x : b) x = uint8_t(r.next());
    std::vector<uint8_t> packed(s.packed_bytes());
    i8_pack_b(s, b.data(), size_t(N), packed.data());
    const size_t lda = size_t(s.k_groups()) * 4 + (iter % 3 == 0 ? 0 : size_t(r.below(9)));
    std::vector<uint8_t> a(rows * lda);
    for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(r.next());
    for (size_t m = 0; m < rows; ++m) {  // zeros past K, as the driver prepares A
      for (size_t k = size_t(K); k < size_t(s.k_groups()) * 4; ++k) a[m * lda + k] = 0;
    }
    const size_t cols = size_t(s.panels() * kI8Panel);
    std::vector<int32_t> row_za(rows), row_sum(rows), col_zb(cols, 0);
    for (auto& x : row_za) x = iter % 4 == 0 ? int32_t(r.next()) : int32_t(r.below(384));
    for (auto& x : row_sum) x = int32_t(r.next());
    for (size_t n = 0; n < size_t(N); ++n) col_zb[n] = int32_t(r.below(384)) - 128;
    std::vector<float> col_scale(cols), row_scale(rows), col_bias(cols);
    for (auto& x : col_scale) x = float(r.below(2000) - 1000) * 1.7e-6f;
    for (auto& x : row_scale) x = float(r.below(999) + 1) * 3.1e-3f;
    for (auto& x : col_bias) x = float(r.below(2001) - 1000) * 2.3e-3f;
    const int64_t p0 = r.below(s.panels()), p1 = p0 + 1 + r.below(s.panels() - p0);
    const size_t ldc = size_t(N) + size_t(r.below(5));
    for (int form = 0; form < 5; ++form) {
      I8Tile t;
      t.a = a.data();
      t.lda = lda;
      t.rows = rows;
      t.row_za = row_za.data();
      t.row_sum = row_sum.data();
      t.col_zb = col_zb.data();
      t.ldc = ldc;
      std::vector<int32_t> want_i(rows * ldc, 0x5a5a5a5a), got_i = want_i;
      std::vector<float> want_f(rows * ldc, 777.0f), got_f = want_f;
      if (form > 0) {  // 1: scale; 2: + row scale, bias; 3: bias first, relu; 4: all
        t.col_scale = col_scale.data();
        t.row_scale = form == 2 || form == 4 ? row_scale.data() : nullptr;
        t.col_bias = form >= 2 ? col_bias.data() : nullptr;
        t.bias_first = form >= 3;
        t.relu = form >= 3;
      }
      I8Tile tw = t, tg = t;
      tw.c = want_i.data();
      tg.c = got_i.data();
      tw.cf = want_f.data();
      tg.cf = got_f.data();
      i8_gemm_ref(s, tw, packed.data(), p0, p1);
      for (const I8GemmKernels& kern : kerns) {
        std::fill(got_i.begin(), got_i.end(), 0x5a5a5a5a);
        std::fill(got_f.begin(), got_f.end(), 777.0f);
        kern.fn(s, tg, packed.data(), p0, p1);
        const std::string what = std::string(kern.name) + " K=" + std::to_string(K) +
                                 " N=" + std::to_string(N) + " rows=" + std::to_string(rows) +
                                 " b_signed=" + std::to_string(s.b_signed) +
                                 " form=" + std::to_string(form);
        ASSERT_EQ(got_i, want_i) << what;
        ASSERT_EQ(std::memcmp(got_f.data(), want_f.data(), got_f.size() * 4), 0) << what;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2000 * int(kerns.size()));
#endif
}

}  // namespace
}  // namespace onnx_prepack::kernels
