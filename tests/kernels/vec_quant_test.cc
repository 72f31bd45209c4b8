// DynamicQuantizeLinear's kernels (vec_math/vec_quant.h): every ISA variant the
// host runs (capped by ONNX_PREPACK_MAX_ISA) against the portable twin and
// against the operator's former scalar loop (copied below), bitwise: random
// data of every length around the vector widths, all zeros, infinities, NaN,
// denormals, -0, ties x / scale = k + 0.5, and a range that overflows.
#include "kernels/vec_math/vec_quant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels::vec {
namespace {

// The operator before vectorisation (runtime/ops/quant/linear_quant.cc), with
// one change: uint8_t(NaN) was undefined behaviour (x86 gave 0); 0 here.
struct Quantized {
  std::vector<uint8_t> y;
  float scale;
  uint8_t zp;
};
Quantized scalar_dql(const std::vector<float>& x) {
  const int64_t n = int64_t(x.size());
  const float* xp = x.data();
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, xp[i]);
    hi = std::max(hi, xp[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  const float zpf = scale == 0 ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
  Quantized out;
  out.y.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const float q = scale == 0 ? 0.0f : std::nearbyint(xp[i] / scale);
    const float v = std::clamp(q + zpf, 0.0f, 255.0f);
    out.y[size_t(i)] = std::isnan(v) ? 0 : uint8_t(v);
  }
  out.scale = scale;
  out.zp = std::isnan(zpf) ? 0 : uint8_t(zpf);
  return out;
}

Quantized run(const QuantKernels& k, const std::vector<float>& x) {
  float lo = 0, hi = 0;
  k.minmax(x.data(), x.size(), &lo, &hi);
  const DynamicQuantParams p = dynamic_quant_params(lo, hi);
  Quantized out;
  out.y.assign(x.size(), 0xAB);
  k.quantize_u8(x.data(), out.y.data(), x.size(), p.scale, p.zp);
  out.scale = p.scale;
  out.zp = uint8_t(p.zp);
  return out;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::vector<const QuantKernels*> variants() {
  std::vector<const QuantKernels*> v = {&quant_kernels(device::IsaLevel::kRef)};
  const device::IsaLevel host = device::host_isa_level();
  if (host >= device::IsaLevel::kAvx2) v.push_back(&quant_kernels(device::IsaLevel::kAvx2));
  if (host >= device::IsaLevel::kAvx512) v.push_back(&quant_kernels(device::IsaLevel::kAvx512));
  if (host >= device::IsaLevel::kNeon) v.push_back(&quant_kernels(device::IsaLevel::kNeon));
  return v;
}

void expect_all_equal(const std::vector<float>& x, const std::string& what) {
  const Quantized want = scalar_dql(x);
  for (const QuantKernels* k : variants()) {
    const Quantized got = run(*k, x);
    EXPECT_EQ(bits(got.scale), bits(want.scale)) << what << " " << k->isa;
    EXPECT_EQ(got.zp, want.zp) << what << " " << k->isa;
    size_t bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (got.y[i] != want.y[i] && bad++ < 3) {
        ADD_FAILURE() << what << " " << k->isa << " n " << x.size() << " at " << i << ": x " << x[i]
                      << " got " << int(got.y[i]) << " want " << int(want.y[i]);
      }
    }
  }
}

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 7) {}
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(s >> 32);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 8) * 0x1p-24f; }
};

TEST(VecQuant, HostLevelIsListed) {
  EXPECT_STREQ(quant_kernels(device::IsaLevel::kRef).isa, "ref");
  EXPECT_STREQ(host_quant_kernels().isa, variants().back()->isa);
}

TEST(VecQuant, RandomEveryLengthMatchesScalar) {
  Rng r(1);
  for (size_t n = 0; n <= 140; ++n) {
    std::vector<float> x(n);
    for (auto& v : x) v = r.uniform(-3.0f, 5.0f);
    expect_all_equal(x, "random");
    for (auto& v : x) v = r.uniform(0.5f, 2.0f);  // all positive: lo stays 0
    expect_all_equal(x, "positive");
    for (auto& v : x) v = -r.uniform(0.5f, 2.0f);  // all negative: hi stays 0
    expect_all_equal(x, "negative");
  }
  for (size_t n : {1000u, 4099u, 65536u + 13u}) {
    std::vector<float> x(n);
    for (auto& v : x) v = r.uniform(-1e3f, 1e2f);
    expect_all_equal(x, "large");
  }
}

TEST(VecQuant, ZerosAndSignedZeros) {
  for (size_t n : {1u, 7u, 16u, 33u, 100u}) {
    expect_all_equal(std::vector<float>(n, 0.0f), "zeros");
    expect_all_equal(std::vector<float>(n, -0.0f), "negative zeros");
    std::vector<float> x(n, -0.0f);
    x[n / 2] = 1.0f;
    expect_all_equal(x, "-0 and 1");
    x[n / 2] = -1.0f;
    expect_all_equal(x, "-0 and -1");
  }
}

TEST(VecQuant, InfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Rng r(2);
  for (size_t n : {1u, 5u, 8u, 17u, 64u, 131u}) {
    std::vector<float> base(n);
    for (auto& v : base) v = r.uniform(-2.0f, 2.0f);
    for (size_t at : {size_t(0), n / 2, n - 1}) {
      for (float special : {inf, -inf, nan, -nan}) {
        std::vector<float> x = base;
        x[at] = special;
        expect_all_equal(x, "one special " + std::to_string(special));
      }
      std::vector<float> x = base;
      x[at] = inf;
      x[(at + 1) % n] = -inf;
      expect_all_equal(x, "+inf and -inf");
    }
    expect_all_equal(std::vector<float>(n, nan), "all NaN");
    std::vector<float> x(n, nan);
    x[n - 1] = 3.0f;
    expect_all_equal(x, "NaN then 3");
  }
}

TEST(VecQuant, DenormalsAndOverflow) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float big = std::numeric_limits<float>::max();
  Rng r(3);
  for (size_t n : {3u, 16u, 40u, 129u}) {
    std::vector<float> x(n);
    for (auto& v : x) v = tiny * float(int(r.next() % 2001) - 1000);  // denormals only
    expect_all_equal(x, "denormals");
    for (auto& v : x) v = 1e-39f * r.uniform(-1.0f, 1.0f);
    expect_all_equal(x, "small");
    for (auto& v : x) v = big * r.uniform(-1.0f, 1.0f);  // hi - lo overflows to inf
    x[0] = big;
    x[1] = -big;
    expect_all_equal(x, "overflowing range");
  }
}

TEST(VecQuant, TiesRoundToEven) {
  // lo -100, hi 155: scale exactly 1, zero point 100; x = k + 0.5 are ties.
  for (size_t n : {20u, 64u, 255u}) {
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = float(int(i % 200) - 100) + 0.5f;
    x[0] = -100.0f;
    x[1] = 155.0f;
    expect_all_equal(x, "ties");
    const Quantized q = run(*variants().back(), x);
    EXPECT_EQ(q.scale, 1.0f);
    EXPECT_EQ(q.zp, 100);
    EXPECT_EQ(q.y[2], uint8_t(100 - 98));  // -97.5 -> -98 (even), + 100
    EXPECT_EQ(q.y[3], uint8_t(100 - 96));  // -96.5 -> -96
  }
}

TEST(VecQuant, QuantizeParametersDirectly) {
  // The pass alone, scale 0 (fills with sat(zp)) and saturation at both ends.
  Rng r(4);
  std::vector<float> x(77);
  for (auto& v : x) v = r.uniform(-600.0f, 600.0f);
  for (float scale : {0.0f, 1.0f, 0.37f, 3.0f}) {
    for (float zp : {0.0f, 7.0f, 255.0f}) {
      std::vector<uint8_t> want(x.size()), got(x.size());
      f32_quantize_u8_ref(x.data(), want.data(), x.size(), scale, zp);
      for (size_t i = 0; i < x.size(); ++i) {
        const float q = scale == 0 ? 0.0f : std::nearbyint(x[i] / scale);
        ASSERT_EQ(want[i], uint8_t(std::clamp(q + zp, 0.0f, 255.0f))) << i;
      }
      for (const QuantKernels* k : variants()) {
        k->quantize_u8(x.data(), got.data(), x.size(), scale, zp);
        EXPECT_EQ(got, want) << k->isa << " scale " << scale << " zp " << zp;
      }
    }
  }
}

TEST(VecQuant, ChunkedReductionIsTheWhole) {
  // The operator reduces chunks on pool workers and combines them.
  Rng r(5);
  std::vector<float> x(10000);
  for (auto& v : x) v = r.uniform(-4.0f, 9.0f);
  x[1234] = -0.0f;
  for (const QuantKernels* k : variants()) {
    float lo = 0, hi = 0;
    k->minmax(x.data(), x.size(), &lo, &hi);
    float clo = 0, chi = 0;
    for (size_t b = 0; b < x.size(); b += 997) {
      float l = 0, h = 0;
      k->minmax(x.data() + b, std::min<size_t>(997, x.size() - b), &l, &h);
      clo = l < clo ? l : clo;
      chi = h > chi ? h : chi;
    }
    EXPECT_EQ(bits(lo), bits(clo)) << k->isa;
    EXPECT_EQ(bits(hi), bits(chi)) << k->isa;
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels::vec
