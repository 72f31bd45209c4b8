// Block-quantized GEMM kernels (q4_gemm.h): the reference against float64 sums
// of the same formulas (level 4 on the same int8 A, so both levels agree to
// float rounding); every ISA variant the host runs bitwise equal to the
// reference (4 and 8 bits, blocks 16..256, K not a multiple of the block, N not
// a multiple of 16 with odd and even panel counts, packed, float and default
// zero points, M from 1 to 17, with and without a thread pool); and each row's
// result independent of M (batch invariance, docs/decisions.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/q4_gemm/q4_gemm.h"

namespace onnx_prepack::kernels {
namespace {

struct Operands {
  std::vector<uint8_t> b, zp;
  std::vector<float> scales, a, bias, zp_float;
};

Operands make(const QGemmShape& s, int64_t M, uint32_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(x >> 32);
  };
  Operands o;
  o.b.resize(size_t(s.N * s.k_blocks() * s.block * s.bits / 8));
  for (auto& v : o.b) v = uint8_t(next());
  o.scales.resize(size_t(s.N * s.k_blocks()));
  for (auto& v : o.scales) v = float(next() >> 8) / float(1 << 24) * 0.1f + 0.001f;
  o.zp.resize(size_t(s.N * ((s.k_blocks() * s.bits + 7) / 8)));
  for (auto& v : o.zp) v = uint8_t(next());
  o.a.resize(size_t(M * s.K));
  for (auto& v : o.a) v = float(next() >> 8) / float(1 << 23) - 1.0f;
  o.bias.resize(size_t(s.N));
  for (auto& v : o.bias) v = float(next() >> 8) / float(1 << 23) - 1.0f;
  o.zp_float.resize(size_t(s.N * s.k_blocks()));
  for (auto& v : o.zp_float) v = float(next() >> 8) / float(1 << 24) * float((1 << s.bits) - 1);
  return o;
}

// W[n][k] dequantized in double.
double weight(const QGemmShape& s, const Operands& o, int64_t n, int64_t k) {
  const int64_t kb = k / s.block, i = k % s.block;
  const size_t bit = (size_t(n * s.k_blocks() + kb) * size_t(s.block) + size_t(i)) * size_t(s.bits);
  const int q = s.bits == 8 ? o.b[bit / 8] : (o.b[bit / 8] >> (bit % 8)) & 15;
  const size_t zbit =
      (size_t(n) * size_t((s.k_blocks() * s.bits + 7) / 8) * 8) + size_t(kb) * size_t(s.bits);
  const int z = s.bits == 8 ? o.zp[zbit / 8] : (o.zp[zbit / 8] >> (zbit % 8)) & 15;
  return double(q - z) * double(o.scales[size_t(n * s.k_blocks() + kb)]);
}

// A row as level 4 sees it: per block int8 codes times sa.
std::vector<double> level4_row(const QGemmShape& s, const float* a) {
  std::vector<double> out(size_t(s.K));
  for (int64_t b = 0; b < s.k_blocks(); ++b) {
    const int64_t k0 = b * s.block, k1 = std::min<int64_t>(k0 + s.block, s.K);
    float amax = 0;
    for (int64_t k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(a[k]));
    const float inv = amax > 0 ? 127.0f / amax : 0.0f;
    for (int64_t k = k0; k < k1; ++k) {
      out[size_t(k)] = double(std::nearbyint(a[k] * inv)) * double(amax / 127.0f);
    }
  }
  return out;
}

void check(const QGemmKernels& fns, const QGemmShape& s, int64_t M, int level,
           base::ThreadPool* pool) {
  const Operands o = make(s, M, uint32_t(s.K * 31 + s.N * 7 + s.bits + M));
  std::vector<uint8_t> packed_storage(s.packed_bytes() + 64);
  uint8_t* packed = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(packed_storage.data()) + 63) / 64 * 64);
  QWeightSource src{o.b.data(), o.scales.data(), o.zp.data(), nullptr};
  q_pack_weights(s, src, packed);
  std::vector<float> c(size_t(M * s.N), -1.0f);
  q_gemm(fns, s, level, packed, M, o.a.data(), size_t(s.K), c.data(), size_t(s.N), o.bias.data(),
         pool);
  for (int64_t m = 0; m < M; ++m) {
    const float* a = o.a.data() + m * s.K;
    std::vector<double> arow(a, a + s.K);
    if (level == 4) arow = level4_row(s, a);
    for (int64_t n = 0; n < s.N; ++n) {
      double want = o.bias[size_t(n)], mag = std::fabs(want);
      for (int64_t k = 0; k < s.K; ++k) {
        want += arow[size_t(k)] * weight(s, o, n, k);
        mag += std::fabs(arow[size_t(k)] * weight(s, o, n, k));
      }
      ASSERT_NEAR(c[size_t(m * s.N + n)], want, 1e-5 * mag + 1e-6)
          << fns.name << " level " << level << " bits " << s.bits << " block " << s.block << " K "
          << s.K << " N " << s.N << " m " << m << " n " << n;
    }
  }
}

TEST(QGemm, EveryKernelMatchesTheReferenceFormulas) {
  const device::CpuFeatures host = device::detect_cpu_features();
  std::vector<QGemmKernels> kernels = {q_gemm_ref_kernels()};
  for (auto level : {device::IsaLevel::kAvx2, device::IsaLevel::kAvx512}) {
    if (level > device::isa_level_of(host)) continue;
    kernels.push_back(q_gemm_select(device::cap_cpu_features(host, level)));
  }
  if (host.avx512vnni) {
    device::CpuFeatures no_vnni = host;
    no_vnni.avx512vnni = false;
    kernels.push_back(q_gemm_select(no_vnni));
  }
  base::ThreadPool pool(3);
  for (const QGemmKernels& fns : kernels) {
    for (int bits : {4, 8}) {
      for (int block : {16, 32, 256}) {
        for (auto [K, N] : std::vector<std::pair<int64_t, int64_t>>{{70, 20}, {300, 33}}) {
          QGemmShape s;
          s.K = K;
          s.N = N;
          s.bits = bits;
          s.block = block;
          for (int64_t M : {1, 2, 5, 9}) {
            for (int level : {0, 4}) check(fns, s, M, level, M == 5 ? &pool : nullptr);
          }
        }
      }
    }
  }
}

enum class Zp { kPacked, kFloat, kDefault };

// A 64-byte aligned pack of `o`'s weight with the zero points `zp`.
struct Packed {
  std::vector<uint8_t> storage;
  uint8_t* data = nullptr;
};
Packed pack(const QGemmShape& s, const Operands& o, Zp zp) {
  Packed p;
  p.storage.resize(s.packed_bytes() + 64);
  p.data =
      reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p.storage.data()) + 63) / 64 * 64);
  QWeightSource src{o.b.data(), o.scales.data(), zp == Zp::kPacked ? o.zp.data() : nullptr,
                    zp == Zp::kFloat ? o.zp_float.data() : nullptr};
  q_pack_weights(s, src, p.data);
  return p;
}

std::vector<float> run(const QGemmKernels& fns, const QGemmShape& s, const Packed& w, int level,
                       const float* a, int64_t M, const float* bias, base::ThreadPool* pool) {
  std::vector<float> c(size_t(M * s.N), -7.0f);
  q_gemm(fns, s, level, w.data, M, a, size_t(s.K), c.data(), size_t(s.N), bias, pool);
  return c;
}

// The SIMD kernel sets the host runs (AVX2, AVX-512, AVX-512 VNNI, AVX-512
// without VNNI; aarch64 NEON and dotprod).
std::vector<QGemmKernels> simd_kernels() {
  const device::CpuFeatures host = device::detect_cpu_features();
  std::vector<QGemmKernels> kernels;
  for (auto level : {device::IsaLevel::kAvx2, device::IsaLevel::kAvx512, device::IsaLevel::kNeon,
                     device::IsaLevel::kDotprod}) {
    if (level > device::isa_level_of(host)) continue;
    kernels.push_back(q_gemm_select(device::cap_cpu_features(host, level)));
  }
  if (host.avx512vnni) {
    device::CpuFeatures no_vnni = host;
    no_vnni.avx512vnni = false;
    kernels.push_back(q_gemm_select(no_vnni));
  }
  return kernels;
}

TEST(QGemm, EverySimdKernelIsBitwiseTheReference) {
  const std::vector<QGemmKernels> kernels = simd_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no SIMD level on this host";
  base::ThreadPool pool(3);
  int compared = 0;
  for (int bits : {4, 8}) {
    for (int block : {16, 32, 64, 128}) {
      // N = 20: 2 panels (one pair, rows split over the pool); 33: 3 panels
      // (a single-panel tile at the end); 50: 4 panels, 2 columns in the last.
      for (auto [K, N] : std::vector<std::pair<int64_t, int64_t>>{{70, 20}, {300, 33}, {257, 50}}) {
        const QGemmShape s{K, N, bits, block};
        const Operands o = make(s, 17, uint32_t(K * 13 + N + bits + block));
        for (Zp zp : {Zp::kPacked, Zp::kFloat, Zp::kDefault}) {
          const Packed w = pack(s, o, zp);
          for (int64_t M : {1, 2, 3, 4, 5, 7, 8, 9, 13, 17}) {
            const float* bias = M % 2 ? o.bias.data() : nullptr;
            for (int level : {0, 4}) {
              const std::vector<float> want =
                  run(q_gemm_ref_kernels(), s, w, level, o.a.data(), M, bias, nullptr);
              for (const QGemmKernels& fns : kernels) {
                base::ThreadPool* p = M % 3 == 1 ? &pool : nullptr;
                const std::vector<float> got = run(fns, s, w, level, o.a.data(), M, bias, p);
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0)
                    << fns.name << " level " << level << " bits " << bits << " block " << block
                    << " K " << K << " N " << N << " M " << M << " zp " << int(zp);
                ++compared;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, int(kernels.size()) * 2 * 4 * 3 * 3 * 10 * 2);
}

#if defined(__aarch64__)
// The aarch64 microkernels called directly (no driver: any panel range, any
// row count, rows 1..9 covering the 2-row NEON and 4-row SDOT tiles and their
// remainders) against the ref twins, bitwise, over blocks 16..128, K not a
// multiple of the block, N not a multiple of 16, packed / float / default zero
// points, with and without bias.
TEST(QGemmAarch64, MicrokernelsAreBitwiseTheReference) {
  const device::CpuFeatures host = device::detect_cpu_features();
  if (!host.neon) GTEST_SKIP() << "no NEON";
  struct Pair {
    const char* name;
    QGemmUkernel got, want;
    int level;
  };
  std::vector<Pair> pairs = {{"q_gemm_l0_neon", q_gemm_l0_neon, q_gemm_l0_ref, 0}};
  if (host.dotprod) pairs.push_back({"q_gemm_l4_dotprod", q_gemm_l4_dotprod, q_gemm_l4_ref, 4});
  if (host.dotprod && host.i8mm)
    pairs.push_back({"q_gemm_l4_i8mm", q_gemm_l4_i8mm, q_gemm_l4_ref, 4});
  // The capped selector picks them: NEON level 0 everywhere, SDOT only with dotprod.
  EXPECT_EQ(q_gemm_select(device::cap_cpu_features(host, device::IsaLevel::kNeon)).l0,
            q_gemm_l0_neon);
  EXPECT_EQ(q_gemm_select(device::cap_cpu_features(host, device::IsaLevel::kNeon)).l4,
            q_gemm_l4_ref);
  EXPECT_EQ(q_gemm_select(device::cap_cpu_features(host, device::IsaLevel::kRef)).l0,
            q_gemm_l0_ref);
  if (host.dotprod) {
    EXPECT_EQ(q_gemm_select(device::cap_cpu_features(host, device::IsaLevel::kDotprod)).l4,
              q_gemm_l4_dotprod);
  }
  if (host.dotprod && host.i8mm) {
    EXPECT_EQ(q_gemm_select(device::cap_cpu_features(host, device::IsaLevel::kI8mm)).l4,
              q_gemm_l4_i8mm);
  }
  int compared = 0;
  for (int bits : {4, 8}) {
    for (int block : {16, 32, 64, 128}) {
      for (auto [K, N] : std::vector<std::pair<int64_t, int64_t>>{{40, 7}, {129, 33}, {300, 50}}) {
        const QGemmShape s{K, N, bits, block};
        const int64_t kMaxRows = 9;
        const Operands o = make(s, kMaxRows, uint32_t(K * 3 + N * 5 + bits + block));
        for (Zp zp : {Zp::kPacked, Zp::kFloat, Zp::kDefault}) {
          const Packed w = pack(s, o, zp);
          for (const Pair& f : pairs) {
            // Rows prepared by hand: A padded with zeros past K and its block
            // sums (level 0), int8 codes over the whole [-127, 127] range with
            // their scale and scaled sum (level 4).
            const size_t kp = size_t(s.k_padded()), kbs = size_t(s.k_blocks());
            std::vector<float> a(kp * kMaxRows, 0.0f), a_sum(kbs * kMaxRows);
            std::vector<int8_t> qa(kp * kMaxRows + 16);
            std::vector<float> sa(kbs * kMaxRows), qsum(kbs * kMaxRows);
            std::vector<QARow> rows(kMaxRows);
            for (int64_t m = 0; m < kMaxRows; ++m) {
              const float* src = o.a.data() + m * K;
              float* am = a.data() + size_t(m) * kp;
              std::copy(src, src + K, am);
              for (size_t b = 0; b < kbs; ++b) {
                float sum = 0, amax = 0;
                for (size_t k = b * size_t(block); k < (b + 1) * size_t(block); ++k) {
                  sum += am[k];
                  amax = std::max(amax, std::fabs(am[k]));
                }
                a_sum[size_t(m) * kbs + b] = sum;
                int32_t isum = 0;
                for (size_t k = b * size_t(block); k < (b + 1) * size_t(block); ++k) {
                  const int8_t q = int8_t(int32_t((k * 37 + size_t(m) * 11 + b) % 255) - 127);
                  qa[size_t(m) * kp + k] = q;
                  isum += q;
                }
                sa[size_t(m) * kbs + b] = amax / 127.0f;
                qsum[size_t(m) * kbs + b] = amax / 127.0f * float(isum);
              }
              rows[size_t(m)] = {am, a_sum.data() + size_t(m) * kbs, qa.data() + size_t(m) * kp,
                                 sa.data() + size_t(m) * kbs, qsum.data() + size_t(m) * kbs};
            }
            for (int64_t M = 1; M <= kMaxRows; ++M) {
              const float* bias = M % 2 ? o.bias.data() : nullptr;
              // All panels, and a range starting past the first.
              for (auto [p0, p1] : std::vector<std::pair<int64_t, int64_t>>{
                       {0, s.panels()}, {s.panels() > 1 ? 1 : 0, s.panels()}}) {
                std::vector<float> want(size_t(M * N), -3.0f), got(size_t(M * N), -3.0f);
                f.want(s, rows.data(), size_t(M), w.data, p0, p1, want.data(), size_t(N), bias);
                f.got(s, rows.data(), size_t(M), w.data, p0, p1, got.data(), size_t(N), bias);
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0)
                    << f.name << " bits " << bits << " block " << block << " K " << K << " N " << N
                    << " M " << M << " zp " << int(zp) << " panels " << p0 << ".." << p1;
                ++compared;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, int(pairs.size()) * 2 * 4 * 3 * 3 * 9 * 2);
}
#else
TEST(QGemmAarch64, MicrokernelsAreBitwiseTheReference) {
  GTEST_SKIP() << "aarch64 kernels: built and run on aarch64 only (tools/test_aarch64.sh)";
}
#endif

// A row's output is the same bits whether it runs alone (decode) or among M
// rows (prompt), threaded or not: the host's kernels and the reference.
TEST(QGemm, ARowsResultDoesNotDependOnM) {
  std::vector<QGemmKernels> kernels = simd_kernels();
  kernels.push_back(q_gemm_ref_kernels());
  base::ThreadPool pool(2);
  for (const QGemmKernels& fns : kernels) {
    const bool ref = fns.l0 == q_gemm_l0_ref;
    for (int bits : {4, 8}) {
      const QGemmShape s{ref ? 256 : 1000, ref ? 40 : 200, bits, 32};
      const int64_t M = ref ? 6 : 23;
      const Operands o = make(s, M, uint32_t(bits * 5 + 1));
      const Packed w = pack(s, o, Zp::kPacked);
      for (int level : {0, 4}) {
        const std::vector<float> all = run(fns, s, w, level, o.a.data(), M, o.bias.data(), &pool);
        const std::vector<float> serial =
            run(fns, s, w, level, o.a.data(), M, o.bias.data(), nullptr);
        ASSERT_EQ(std::memcmp(all.data(), serial.data(), all.size() * 4), 0) << fns.name;
        for (int64_t m = 0; m < M; ++m) {
          const std::vector<float> one =
              run(fns, s, w, level, o.a.data() + m * s.K, 1, o.bias.data(), nullptr);
          ASSERT_EQ(std::memcmp(one.data(), all.data() + m * s.N, size_t(s.N) * 4), 0)
              << fns.name << " level " << level << " bits " << bits << " row " << m;
        }
      }
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels
