// Conv kernels against a direct double-precision convolution, for every
// microkernel and depthwise row kernel the host runs (and the portable twins);
// the per-ISA unfold variants write identical bytes.
#include "kernels/f32_conv/f32_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/f32_conv/conv_folded.h"
#include "kernels/f32_conv/conv_unfold.h"

namespace onnx_prepack::kernels {
namespace {

struct Scratch {
  std::vector<std::vector<float>> slots{4};
  static float* get(void* ctx, size_t worker, size_t floats) {
    auto* s = static_cast<Scratch*>(ctx);
    if (s->slots[worker].size() < floats) s->slots[worker].resize(floats);
    return s->slots[worker].data();
  }
};

std::vector<float> random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

ConvGeometry geom(int64_t n, int64_t c, int64_t m, int64_t group, std::vector<int64_t> in,
                  std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d,
                  std::vector<int64_t> pb, std::vector<int64_t> pe) {
  ConvGeometry g;
  g.n = n;
  g.c = c;
  g.m = m;
  g.group = group;
  const size_t off = 3 - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    g.in[off + i] = in[i];
    g.kernel[off + i] = k[i];
    g.stride[off + i] = s[i];
    g.dilation[off + i] = d[i];
    g.pad_begin[off + i] = pb[i];
    g.pad_end[off + i] = pe[i];
    g.out[off + i] = (in[i] + pb[i] + pe[i] - ((k[i] - 1) * d[i] + 1)) / s[i] + 1;
  }
  return g;
}

std::vector<double> direct(const ConvGeometry& g, const std::vector<float>& x,
                           const std::vector<float>& w, const std::vector<float>& b) {
  std::vector<double> y(size_t(g.n * g.m * g.out_pixels()));
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m) {
      const int64_t gi = m / g.mg();
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            double acc = b[size_t(m)];
            for (int64_t c = 0; c < g.cg(); ++c)
              for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
                for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                    const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
                    const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
                    const int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2];
                    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 ||
                        iw >= g.in[2])
                      continue;
                    const float xv =
                        x[size_t(((n * g.c + gi * g.cg() + c) * g.in[0] + id) * g.in[1] * g.in[2] +
                                 ih * g.in[2] + iw)];
                    const float wv =
                        w[size_t(((m * g.cg() + c) * g.kernel[0] + kd) * g.kernel[1] * g.kernel[2] +
                                 kh * g.kernel[2] + kw)];
                    acc += double(xv) * wv;
                  }
            y[size_t(((n * g.m + m) * g.out[0] + od) * g.out[1] * g.out[2] + oh * g.out[2] + ow)] =
                acc;
          }
    }
  return y;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

std::vector<ConvGeometry> blocked_cases() {
  return {
      geom(1, 3, 16, 1, {20, 23}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      geom(2, 300, 17, 1, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 0}, {2, 1}),  // K > kc
      geom(1, 12, 18, 3, {15, 16}, {3, 2}, {1, 2}, {2, 1}, {0, 1}, {1, 0}),
      geom(1, 20, 30, 1, {17, 19}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}),  // pointwise
      geom(1, 6, 10, 2, {50}, {5}, {2}, {1}, {2}, {1}),
      geom(1, 4, 5, 1, {6, 7, 8}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {1, 1, 0}),
  };
}

TEST(F32Conv, BlockedMatchesDirectForEveryKernel) {
  const device::IsaLevel host = device::host_isa_level();
  base::ThreadPool pool{2};
  Scratch s;
  for (const F32GemmKernel& uk : kF32GemmKernels) {
    if (uk.isa > host) continue;
    for (const ConvGeometry& g : blocked_cases()) {
      const auto x = random(size_t(g.n * g.c * g.in_pixels()), 1);
      const auto w = random(size_t(g.m * g.k()), 2);
      const auto b = random(size_t(g.m), 3);
      std::vector<float> packed(blocked_filter_floats(g));
      pack_blocked_filter(w.data(), g, uk.mr, packed.data());
      std::vector<float> y(size_t(g.n * g.m * g.out_pixels()));
      conv_blocked(g, uk, x.data(), packed.data(), b.data(), y.data(), &pool, {&s, &Scratch::get});
      expect_close(y, direct(g, x, w, b), uk.name);
    }
  }
}

TEST(F32Conv, IndirectMatchesDirectForEveryKernel) {
  const device::IsaLevel host = device::host_isa_level();
  base::ThreadPool pool{2};
  Scratch s;
  const std::vector<ConvGeometry> cases = {
      geom(2, 96, 24, 1, {20, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}),
      geom(1, 12, 18, 3, {15, 16}, {3, 2}, {2, 1}, {2, 2}, {0, 1}, {1, 0}),
      geom(1, 7, 5, 1, {9, 40}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}),
      geom(1, 6, 10, 2, {50}, {5}, {1}, {2}, {2}, {3}),
      geom(1, 3, 16, 1, {41, 45}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      geom(1, 5, 7, 1, {13, 29}, {3, 4}, {1, 3}, {1, 2}, {1, 2}, {0, 1}),
  };
  for (const ConvIndirectKernel& uk : kConvIndirectKernels) {
    if (uk.isa > host) continue;
    for (const ConvGeometry& g : cases) {
      ASSERT_TRUE(conv_indirect_applies(g));
      const auto x = random(size_t(g.n * g.c * g.in_pixels()), 1);
      const auto w = random(size_t(g.m * g.k()), 2);
      const auto b = random(size_t(g.m), 3);
      std::vector<float> packed(blocked_filter_floats(g));
      pack_blocked_filter(w.data(), g, uk.mr, packed.data());
      std::vector<float> y(size_t(g.n * g.m * g.out_pixels()));
      conv_indirect(g, uk, x.data(), packed.data(), b.data(), y.data(), &pool, {&s, &Scratch::get});
      expect_close(y, direct(g, x, w, b), uk.name);
    }
  }
}

// Every native indirect microkernel writes the bytes of its portable twin (the
// same rows and one fused chain per output), over full and partial tiles of
// rows (M not a multiple of mr) and columns (OW not a multiple of nr).
TEST(F32Conv, IndirectKernelsMatchTheirPortableTwinBitForBit) {
  const device::IsaLevel host = device::host_isa_level();
  base::ThreadPool pool{2};
  Scratch s;
  const std::vector<ConvGeometry> cases = {
      geom(1, 3, 16, 1, {41, 45}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      geom(1, 16, 32, 1, {34, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),
      geom(1, 5, 7, 1, {13, 29}, {3, 4}, {1, 3}, {1, 2}, {1, 2}, {0, 1}),
      geom(1, 3, 24, 1, {9, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}),  // OW 3 < 8
  };
  for (const ConvIndirectKernel& uk : kConvIndirectKernels) {
    if (uk.isa > host || uk.isa == device::IsaLevel::kRef) continue;
    const ConvIndirectKernel* twin = conv_indirect_select(uk.mr, device::IsaLevel::kRef);
    ASSERT_NE(twin, nullptr) << uk.name;
    ASSERT_EQ(twin->nr, uk.nr) << uk.name;
    for (const ConvGeometry& g : cases) {
      const auto x = random(size_t(g.n * g.c * g.in_pixels()), 21);
      const auto w = random(size_t(g.m * g.k()), 22);
      const auto b = random(size_t(g.m), 23);
      std::vector<float> packed(blocked_filter_floats(g));
      pack_blocked_filter(w.data(), g, uk.mr, packed.data());
      const size_t out = size_t(g.n * g.m * g.out_pixels());
      std::vector<float> got(out, -7.0f), want(out, 7.0f);
      conv_indirect(g, uk, x.data(), packed.data(), b.data(), got.data(), &pool,
                    {&s, &Scratch::get});
      conv_indirect(g, *twin, x.data(), packed.data(), b.data(), want.data(), &pool,
                    {&s, &Scratch::get});
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), out * 4)) << uk.name;
    }
  }
}

// Every native GEMM microkernel, run by the blocked and batch-folded Conv
// drivers on filters blocked in its rows, writes the bytes of its portable twin
// (f32_gemm_8x12_neon of f32_gemm_8x12_ref on aarch64: one fma chain per
// output over k), over full and partial row blocks (M % mr != 0), groups,
// K > kc, pointwise and 3-D cases.
TEST(F32Conv, BlockedKernelsMatchTheirPortableTwinBitForBit) {
  const device::IsaLevel host = device::host_isa_level();
  base::ThreadPool pool{2};
  Scratch s;
  std::vector<ConvGeometry> cases = blocked_cases();
  cases.push_back(geom(3, 8, 20, 2, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}));  // a batch
  size_t compared = 0;
  for (const F32GemmKernel& uk : kF32GemmKernels) {
    if (uk.isa > host || uk.isa == device::IsaLevel::kRef) continue;
    const F32GemmKernel* twin = conv_gemm_kernel_rows(uk.mr, device::IsaLevel::kRef);
    ASSERT_NE(twin, nullptr) << uk.name;
    ASSERT_EQ(twin->nr, uk.nr) << uk.name;
    for (const ConvGeometry& g : cases) {
      const auto x = random(size_t(g.n * g.c * g.in_pixels()), 31);
      const auto w = random(size_t(g.m * g.k()), 32);
      const auto b = random(size_t(g.m), 33);
      std::vector<float> packed(blocked_filter_floats(g));
      pack_blocked_filter(w.data(), g, uk.mr, packed.data());
      const size_t out = size_t(g.n * g.m * g.out_pixels());
      std::vector<float> got(out, -7.0f), want(out, 7.0f);
      conv_blocked(g, uk, x.data(), packed.data(), b.data(), got.data(), &pool,
                   {&s, &Scratch::get});
      conv_blocked(g, *twin, x.data(), packed.data(), b.data(), want.data(), &pool,
                   {&s, &Scratch::get});
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), out * 4)) << uk.name << " blocked";
      for (bool bias_first : {false, true}) {
        std::fill(got.begin(), got.end(), -7.0f);
        std::fill(want.begin(), want.end(), 7.0f);
        conv_folded(g, uk, bias_first, x.data(), packed.data(), b.data(), got.data(), &pool,
                    {&s, &Scratch::get});
        conv_folded(g, *twin, bias_first, x.data(), packed.data(), b.data(), want.data(), &pool,
                    {&s, &Scratch::get});
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), out * 4)) << uk.name << " folded";
      }
      ++compared;
    }
  }
#if defined(__aarch64__)
  if (host >= device::IsaLevel::kNeon) {
    EXPECT_EQ(compared, cases.size());  // the NEON tile ran
  }
#endif
  (void)compared;
}

// The Conv microkernel per level: the native GEMM tile (on aarch64 the NEON
// 8 x 12 one, whose 8-row blocks have no indirect kernel: the runtime runs
// them on the blocked or folded driver), the portable 6 x 16 tile at ref.
TEST(F32Conv, ConvKernelIsTheLevelsNativeTile) {
  EXPECT_STREQ(conv_gemm_kernel(device::IsaLevel::kRef)->name, "f32_gemm_6x16_ref");
#if defined(__aarch64__)
  for (device::IsaLevel l :
       {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm})
    EXPECT_STREQ(conv_gemm_kernel(l)->name, "f32_gemm_8x12_neon");
  EXPECT_STREQ(conv_gemm_kernel_rows(8, device::IsaLevel::kNeon)->name, "f32_gemm_8x12_neon");
  // An x86-64 level on aarch64 (nothing native): the portable tile.
  EXPECT_STREQ(conv_gemm_kernel(device::IsaLevel::kAvx512)->name, "f32_gemm_6x16_ref");
#else
  EXPECT_STREQ(conv_gemm_kernel(device::IsaLevel::kAvx512)->name, "f32_gemm_14x32_avx512");
  EXPECT_STREQ(conv_gemm_kernel(device::IsaLevel::kAvx2)->name, "f32_gemm_6x16_avx2");
  // No NEON kernel in this build: an aarch64 level gets the portable tile.
  EXPECT_STREQ(conv_gemm_kernel(device::IsaLevel::kNeon)->name, "f32_gemm_6x16_ref");
#endif
  EXPECT_STREQ(conv_gemm_kernel_rows(8, device::IsaLevel::kRef)->name, "f32_gemm_8x12_ref");
  EXPECT_EQ(conv_indirect_select(8, device::IsaLevel::kNeon), nullptr);
  EXPECT_EQ(conv_indirect_select(8, device::IsaLevel::kRef), nullptr);
}

TEST(F32Conv, DepthwiseMatchesDirectForEveryRowKernel) {
  const device::IsaLevel host = device::host_isa_level();
  Scratch s;
  std::vector<std::pair<DwRowFn, device::IsaLevel>> rows = {{dw_row_ref, device::IsaLevel::kRef}};
#if defined(__x86_64__)
  rows.push_back({dw_row_avx2, device::IsaLevel::kAvx2});
  rows.push_back({dw_row_avx512, device::IsaLevel::kAvx512});
#elif defined(__aarch64__)
  rows.push_back({dw_row_neon, device::IsaLevel::kNeon});
#else
  rows.push_back({dw_row_select(host), host});  // this machine's pick (ref: it has no kernels)
#endif
  for (auto [row, level] : rows) {
    if (level > host) continue;
    for (const ConvGeometry& g :
         {geom(2, 16, 16, 16, {23, 41}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}),
          geom(1, 8, 8, 8, {12, 30}, {5, 5}, {1, 2}, {1, 1}, {2, 2}, {2, 2}),
          geom(1, 4, 4, 4, {9, 37}, {3, 3}, {1, 3}, {2, 2}, {0, 1}, {2, 0})}) {
      const auto x = random(size_t(g.n * g.c * g.in_pixels()), 4);
      const auto w = random(size_t(g.m * g.k()), 5);
      const auto b = random(size_t(g.m), 6);
      std::vector<float> y(size_t(g.n * g.m * g.out_pixels()));
      conv_depthwise(g, row, x.data(), w.data(), b.data(), y.data(), nullptr, {&s, &Scratch::get});
      expect_close(y, direct(g, x, w, b), "depthwise");
    }
  }
}

// The depthwise row kernels of every level the host runs give the portable
// one's bits (one fused multiply-add per tap in tap order), for every length
// around the vector steps (4, 8, 16, 32) and tap counts 1 to 25, signed zeros,
// infinities and NaNs included; the output is written exactly n floats.
TEST(F32Conv, DepthwiseRowVariantsGiveTheRefBits) {
  const device::IsaLevel host = device::host_isa_level();
  std::vector<std::pair<DwRowFn, device::IsaLevel>> rows = {{dw_row_select(host), host}};
#if defined(__x86_64__)
  rows.push_back({dw_row_avx2, device::IsaLevel::kAvx2});
  rows.push_back({dw_row_avx512, device::IsaLevel::kAvx512});
#elif defined(__aarch64__)
  rows.push_back({dw_row_neon, device::IsaLevel::kNeon});
#endif
  const float specials[] = {0.0f, -0.0f, 1e-40f, -3e38f, 3e38f, INFINITY, -INFINITY, NAN};
  for (size_t taps : {1, 2, 3, 9, 25}) {
    for (size_t n = 0; n <= 70; ++n) {
      auto w = random(taps, 11 + uint32_t(taps));
      std::vector<std::vector<float>> in(taps);
      std::vector<const float*> src(taps);
      for (size_t t = 0; t < taps; ++t) {
        in[t] = random(n, uint32_t(100 * taps + t + n));
        if (n > 3) in[t][(t * 7 + n) % n] = specials[(t + n) % 8];
        src[t] = in[t].data();
      }
      if (n % 5 == 0) w[0] = specials[n % 8];
      std::vector<float> want(n + 1, 9.0f);
      dw_row_ref(want.data(), n, src.data(), w.data(), taps, 0.25f);
      for (auto [fn, level] : rows) {
        if (level > host) continue;
        std::vector<float> got(n + 1, 9.0f);
        fn(got.data(), n, src.data(), w.data(), taps, 0.25f);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), (n + 1) * 4))
            << "taps " << taps << " n " << n << " level " << int(level);
      }
    }
  }
}

// The stride-2 gathers of every level the host runs write the portable one's
// bytes, for every length around the vector step (8) and both source parities;
// odd source elements are NaN so a wrong lane cannot pass.
TEST(F32Conv, Stride2GatherVariantsWriteTheSameBytes) {
  const device::IsaLevel host = device::host_isa_level();
  std::vector<std::pair<Stride2GatherFn, device::IsaLevel>> fns = {
      {stride2_gather_select(host), host}};
#if defined(__x86_64__)
  fns.insert(fns.begin(), {stride2_gather_avx2, device::IsaLevel::kAvx2});
#elif defined(__aarch64__)
  fns.insert(fns.begin(), {stride2_gather_neon, device::IsaLevel::kNeon});
#endif
  for (size_t n = 1; n <= 41; ++n) {
    for (size_t shift = 0; shift < 2; ++shift) {
      std::vector<float> src(shift + 2 * (n - 1) + 1);
      for (size_t i = 0; i < src.size(); ++i) {
        src[i] = (i - shift) % 2 == 0 ? float(i) * 0.5f - 3.0f : std::nanf("");
      }
      std::vector<float> want(n + 1, 9.0f);
      stride2_gather_ref(want.data(), src.data() + shift, n);
      ASSERT_EQ(want[n], 9.0f);
      for (size_t q = 0; q < n; ++q) ASSERT_EQ(want[q], src[shift + 2 * q]);
      for (auto [fn, level] : fns) {
        if (level > host) continue;
        std::vector<float> got(n + 1, 9.0f);
        fn(got.data(), src.data() + shift, n);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), (n + 1) * 4)) << "n " << n;
      }
    }
  }
}

TEST(F32Conv, UnfoldVariantsWriteTheSameBytes) {
  const device::IsaLevel host = device::host_isa_level();
#if defined(__x86_64__)
  const std::pair<ConvUnfoldFn, device::IsaLevel> unfolds[] = {
      {conv_unfold_avx2, device::IsaLevel::kAvx2}, {conv_unfold_avx512, device::IsaLevel::kAvx512}};
#else
  const std::pair<ConvUnfoldFn, device::IsaLevel> unfolds[] = {
      {conv_unfold_select(host), host}};  // this machine's pick (ref until it has kernels)
#endif
  for (const ConvGeometry& g : blocked_cases()) {
    const auto x = random(size_t(g.c * g.in_pixels()), 7);
    const size_t nr = 32, kc = std::min<size_t>(kKc, size_t(g.k()));
    std::vector<Segment> segs;
    const int64_t count = std::min<int64_t>(g.out_pixels(), int64_t(kTilePanels * nr));
    conv_segments(g, 0, count, nr, segs);
    std::vector<float> ref(kTilePanels * kKc * nr, 0.0f);
    conv_unfold_ref(g, x.data(), 0, kc, segs, 0, nr, ref.data());
    for (auto [fn, level] : unfolds) {
      if (level > host) continue;
      std::vector<float> got(ref.size(), 0.0f);
      fn(g, x.data(), 0, kc, segs, 0, nr, got.data());
      EXPECT_EQ(0, std::memcmp(got.data(), ref.data(), ref.size() * 4));
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels

namespace onnx_prepack::kernels {
namespace {

// What ConvOutputEpilogue promises, checked on every driver: each output element
// is handed to the epilogue exactly once, and when it is, it already holds the
// value the driver computes without an epilogue (bit for bit). The recorder
// copies each run as it is reported (runs never overlap, so workers write
// disjoint elements).
struct Recorder {
  const ConvGeometry* g;
  const float* y;
  std::vector<float> seen;
  std::vector<int> count;
  static void fn(const void* ctx, int64_t n, int64_t m, int64_t p0, size_t len) {
    auto* r = const_cast<Recorder*>(static_cast<const Recorder*>(ctx));
    const int64_t base = (n * r->g->m + m) * r->g->out_pixels() + p0;
    ASSERT_LE(p0 + int64_t(len), r->g->out_pixels());
    for (size_t i = 0; i < len; ++i) {
      r->seen[size_t(base) + i] = r->y[size_t(base) + i];
      ++r->count[size_t(base) + i];
    }
  }
};

template <typename Run>
void expect_epilogue_contract(const ConvGeometry& g, Run run, const char* what) {
  const size_t n = size_t(g.n * g.m * g.out_pixels());
  std::vector<float> plain(n), y(n);
  run(plain.data(), nullptr);
  Recorder r{&g, y.data(), std::vector<float>(n), std::vector<int>(n, 0)};
  const ConvOutputEpilogue post{&Recorder::fn, &r};
  run(y.data(), &post);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(r.count[i], 1) << what << ": element " << i;
    ASSERT_EQ(std::memcmp(&r.seen[i], &plain[i], 4), 0) << what << ": element " << i;
  }
  EXPECT_EQ(std::memcmp(y.data(), plain.data(), n * 4), 0) << what;
}

TEST(F32Conv, EveryDriverHandsEachFinalOutputToTheEpilogueOnce) {
  const device::IsaLevel host = device::host_isa_level();
  const F32GemmKernel& uk = *conv_gemm_kernel(host);
  base::ThreadPool pool(3);
  Scratch s;
  for (const ConvGeometry& g : blocked_cases()) {
    const auto x = random(size_t(g.n * g.c * g.in_pixels()), 1);
    const auto w = random(size_t(g.m * g.k()), 2);
    const auto b = random(size_t(g.m), 3);
    std::vector<float> packed(blocked_filter_floats(g));
    pack_blocked_filter(w.data(), g, uk.mr, packed.data());
    expect_epilogue_contract(
        g,
        [&](float* y, const ConvOutputEpilogue* post) {
          conv_blocked(g, uk, x.data(), packed.data(), b.data(), y, &pool, {&s, &Scratch::get},
                       post);
        },
        "blocked");
    for (bool bias_first : {false, true}) {
      expect_epilogue_contract(
          g,
          [&](float* y, const ConvOutputEpilogue* post) {
            conv_folded(g, uk, bias_first, x.data(), packed.data(), b.data(), y, &pool,
                        {&s, &Scratch::get}, post);
          },
          "folded");
    }
    if (const ConvIndirectKernel* ind = conv_indirect_select(uk.mr, host);
        ind != nullptr && conv_indirect_applies(g)) {
      expect_epilogue_contract(
          g,
          [&](float* y, const ConvOutputEpilogue* post) {
            conv_indirect(g, *ind, x.data(), packed.data(), b.data(), y, &pool, {&s, &Scratch::get},
                          post);
          },
          "indirect");
    }
  }
  for (const ConvGeometry& g :
       {geom(2, 16, 16, 16, {23, 41}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {1, 1}),
        geom(1, 8, 8, 8, {12, 30}, {5, 5}, {1, 2}, {1, 1}, {2, 2}, {2, 2})}) {
    const auto x = random(size_t(g.n * g.c * g.in_pixels()), 4);
    const auto w = random(size_t(g.m * g.k()), 5);
    const auto b = random(size_t(g.m), 6);
    expect_epilogue_contract(
        g,
        [&](float* y, const ConvOutputEpilogue* post) {
          conv_depthwise(g, dw_row_select(host), x.data(), w.data(), b.data(), y, &pool,
                         {&s, &Scratch::get}, post);
        },
        "depthwise");
  }
}

}  // namespace
}  // namespace onnx_prepack::kernels
