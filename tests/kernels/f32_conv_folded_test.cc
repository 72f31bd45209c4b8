// The batch-folded Conv kernel (kernels/f32_conv/conv_folded.h): against a
// direct double-precision loop for every microkernel the host runs (and the
// portable twins), bit for bit equal to the per-image path it replaces, the
// same bits at every thread count, and chosen for batches and small maps only.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device/cpu_features.h"
#include "kernels/f32_conv/conv_folded.h"

namespace onnx_prepack::kernels {
namespace {

struct Scratch {
  std::vector<std::vector<float>> slots{8};
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

// 2-D geometry (1-D when in has one dim).
ConvGeometry geom(int64_t n, int64_t c, int64_t m, int64_t group, std::vector<int64_t> in,
                  std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> pb,
                  std::vector<int64_t> pe, std::vector<int64_t> d = {}) {
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
    g.dilation[off + i] = d.empty() ? 1 : d[i];
    g.pad_begin[off + i] = pb[i];
    g.pad_end[off + i] = pe[i];
    g.out[off + i] = (in[i] + pb[i] + pe[i] - ((k[i] - 1) * g.dilation[off + i] + 1)) / s[i] + 1;
  }
  return g;
}

std::vector<double> direct(const ConvGeometry& g, const std::vector<float>& x,
                           const std::vector<float>& w, const float* b) {
  std::vector<double> y(size_t(g.n * g.m * g.out_pixels()));
  const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m) {
      const int64_t gi = m / g.mg();
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            double acc = b ? b[m] : 0.0;
            for (int64_t c = 0; c < g.cg(); ++c)
              for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
                for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                    const int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
                    const int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
                    const int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2];
                    if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    const float xv =
                        x[size_t((((n * g.c + gi * g.cg() + c) * D + id) * H + ih) * W + iw)];
                    const float wv = w[size_t(
                        (((m * g.cg() + c) * g.kernel[0] + kd) * g.kernel[1] + kh) * g.kernel[2] +
                        kw)];
                    acc += double(xv) * wv;
                  }
            y[size_t(((n * g.m + m) * g.out[0] + od) * g.out[1] * g.out[2] + oh * g.out[2] + ow)] =
                acc;
          }
    }
  return y;
}

// The shapes the folded kernel is for: batches of tiny maps (openWakeWord's
// embedding model: 1x3 and 3x1 filters on 10x2..6x2 maps), 1x1 convs on 7x7
// and 10x10 maps, K past one unfold block, groups, strides, dilations, 1-D and
// 3-D, a tile that ends inside an image, and a task whose padded rows exceed
// kFoldedMaxPaddedFloats.
std::vector<ConvGeometry> folded_cases() {
  return {
      geom(34, 24, 24, 1, {10, 2}, {1, 3}, {1, 1}, {0, 1}, {0, 1}),
      geom(34, 24, 40, 1, {8, 2}, {3, 1}, {1, 1}, {0, 0}, {0, 0}),
      geom(9, 32, 29, 1, {4, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
      geom(1, 96, 200, 1, {7, 7}, {1, 1}, {1, 1}, {0, 0}, {0, 0}),
      geom(3, 300, 33, 1, {10, 10}, {1, 1}, {1, 1}, {0, 0}, {0, 0}),  // K > kKc
      geom(5, 40, 20, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}),     // K > kKc, 3x3
      geom(2, 16, 12, 2, {9, 5}, {3, 3}, {2, 2}, {1, 0}, {1, 2}, {1, 2}),
      geom(4, 12, 18, 3, {6, 6}, {1, 1}, {1, 1}, {0, 0}, {0, 0}),
      geom(6, 6, 10, 2, {13}, {5}, {2}, {2}, {1}),
      geom(2, 4, 5, 1, {3, 4, 5}, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 0}),
      // Rows too wide for the padded-rows buffer: the generic unfold.
      geom(1, 400, 3, 1, {9, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
  };
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

TEST(F32ConvFolded, MatchesDirectForEveryKernelAndThreadCount) {
  const device::IsaLevel host = device::host_isa_level();
  base::ThreadPool two{2}, three{3};
  Scratch s;
  for (const ConvGeometry& g : folded_cases()) {
    const auto x = random(size_t(g.n * g.c * g.in_pixels()), 1);
    const auto w = random(size_t(g.m * g.k()), 2);
    const auto b = random(size_t(g.m), 3);
    for (const float* bias : {b.data(), static_cast<const float*>(nullptr)}) {
      const std::vector<double> want = direct(g, x, w, bias);  // once for every kernel
      for (const F32GemmKernel& uk : kF32GemmKernels) {
        if (uk.isa > host) continue;
        std::vector<float> packed(blocked_filter_floats(g));
        pack_blocked_filter(w.data(), g, uk.mr, packed.data());
        for (bool bias_first : {false, true}) {
          const std::string what = std::string(uk.name) + " n " + std::to_string(g.n) + " c " +
                                   std::to_string(g.c) + " m " + std::to_string(g.m) +
                                   (bias_first ? " bias first" : " bias last") +
                                   (bias ? "" : " no bias");
          std::vector<float> y1(size_t(g.n * g.m * g.out_pixels()), NAN);
          conv_folded(g, uk, bias_first, x.data(), packed.data(), bias, y1.data(), nullptr,
                      {&s, &Scratch::get});
          expect_close(y1, want, what);
          for (base::ThreadPool* pool : {&two, &three}) {
            std::vector<float> yt(y1.size(), NAN);
            conv_folded(g, uk, bias_first, x.data(), packed.data(), bias, yt.data(), pool,
                        {&s, &Scratch::get});
            EXPECT_EQ(0, std::memcmp(yt.data(), y1.data(), y1.size() * 4))
                << what << ": " << pool->size() << " threads differ from 1";
          }
        }
      }
    }
  }
}

// Folding changes which columns share a panel, never an element's chain: the
// bits are those of the indirect kernel (bias first) or the blocked kernel.
TEST(F32ConvFolded, BitwiseEqualToThePerImagePath) {
  const device::IsaLevel host = device::host_isa_level();
  base::ThreadPool two{2};
  Scratch s;
  for (const F32GemmKernel& uk : kF32GemmKernels) {
    if (uk.isa > host) continue;
    for (const ConvGeometry& g : folded_cases()) {
      const auto x = random(size_t(g.n * g.c * g.in_pixels()), 4);
      const auto w = random(size_t(g.m * g.k()), 5);
      const auto b = random(size_t(g.m), 6);
      std::vector<float> packed(blocked_filter_floats(g));
      pack_blocked_filter(w.data(), g, uk.mr, packed.data());
      const size_t out = size_t(g.n * g.m * g.out_pixels());
      std::vector<float> want(out), got(out);
      conv_blocked(g, uk, x.data(), packed.data(), b.data(), want.data(), &two,
                   {&s, &Scratch::get});
      conv_folded(g, uk, false, x.data(), packed.data(), b.data(), got.data(), &two,
                  {&s, &Scratch::get});
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), out * 4)) << uk.name << " vs blocked";
      const ConvIndirectKernel* ind = conv_indirect_select(uk.mr, uk.isa);
      if (!conv_indirect_applies(g) || ind == nullptr) continue;
      conv_indirect(g, *ind, x.data(), packed.data(), b.data(), want.data(), &two,
                    {&s, &Scratch::get});
      conv_folded(g, uk, true, x.data(), packed.data(), b.data(), got.data(), &two,
                  {&s, &Scratch::get});
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), out * 4)) << ind->name << " vs indirect";
    }
  }
}

TEST(F32ConvFolded, ChosenForBatchesAndSmallMapsOnly) {
  // The 14 x 32 tile: AVX-512's on x86-64, its _ref twin (same geometry) elsewhere.
  const F32GemmKernel& k = *conv_gemm_kernel_rows(14, device::IsaLevel::kAvx512);
  // Batches of tiny maps and 1x1 convs on small maps.
  EXPECT_TRUE(
      conv_folded_applies(geom(34, 24, 24, 1, {10, 2}, {1, 3}, {1, 1}, {0, 1}, {0, 1}), k, true));
  EXPECT_TRUE(
      conv_folded_applies(geom(1, 96, 256, 1, {7, 7}, {1, 1}, {1, 1}, {0, 0}, {0, 0}), k, false));
  EXPECT_TRUE(
      conv_folded_applies(geom(1, 128, 128, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}), k, true));
  // Wide rows and large maps keep the per-image paths.
  EXPECT_FALSE(
      conv_folded_applies(geom(1, 3, 16, 1, {320, 320}, {3, 3}, {2, 2}, {1, 1}, {1, 1}), k, true));
  EXPECT_FALSE(
      conv_folded_applies(geom(1, 1, 24, 1, {76, 32}, {3, 3}, {1, 1}, {0, 1}, {0, 1}), k, true));
  // Any batch: one round of tasks over packed panels.
  EXPECT_TRUE(
      conv_folded_applies(geom(34, 1, 24, 1, {76, 32}, {3, 3}, {1, 1}, {0, 1}, {0, 1}), k, true));
  EXPECT_FALSE(
      conv_folded_applies(geom(1, 64, 64, 1, {64, 64}, {1, 1}, {1, 1}, {0, 0}, {0, 0}), k, false));
  // A 1x1 conv on one 7x7 map: no better fill from folding, but too few tiles for the threads.
  EXPECT_DOUBLE_EQ(conv_per_image_column_fill(
                       geom(1, 8, 8, 1, {7, 7}, {1, 1}, {1, 1}, {0, 0}, {0, 0}), 32, false),
                   49.0 / 64.0);
  // Output tiles past the bound (very wide layers) are not folded.
  EXPECT_FALSE(
      conv_folded_applies(geom(8, 64, 1024, 1, {4, 4}, {1, 1}, {1, 1}, {0, 0}, {0, 0}), k, false));
}

}  // namespace
}  // namespace onnx_prepack::kernels
