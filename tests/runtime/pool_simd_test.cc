// Float 2-D MaxPool / AveragePool through the row kernels (f32_conv.h) give
// the bits of the scalar definition: random shapes, kernels, strides, pads,
// ceil_mode and count_include_pad, with NaN, +-inf and -0 among the values.
// The row kernels of every level the host runs are compared directly; the
// session uses the host's capped level (run with ONNX_PREPACK_MAX_ISA=ref,
// avx2 and unset).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/f32_conv/f32_conv.h"
#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

struct PoolCase {
  bool max = true;
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool ceil = false, include_pad = false;
};

std::shared_ptr<const format::Model> pool_model(const PoolCase& pc) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(19);
  auto* g = m.mutable_graph();
  g->set_name("pool");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(kFloat);
  for (int64_t d : {pc.n, pc.c, pc.h, pc.w}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  auto* nd = g->add_node();
  nd->set_op_type(pc.max ? "MaxPool" : "AveragePool");
  nd->add_input("x");
  nd->add_output("y");
  auto ints = [&](const char* name, std::vector<int64_t> v) {
    auto* a = nd->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  };
  auto one = [&](const char* name, int64_t v) {
    auto* a = nd->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  ints("kernel_shape", {pc.kh, pc.kw});
  ints("strides", {pc.sh, pc.sw});
  ints("pads", {pc.pt, pc.pl, pc.pb, pc.pr});
  one("ceil_mode", pc.ceil ? 1 : 0);
  if (!pc.max) one("count_include_pad", pc.include_pad ? 1 : 0);
  return std::shared_ptr<const format::Model>(format::Model::from_proto(std::move(m), "."));
}

// The scalar definition (pool.cc before the row kernels).
std::vector<float> reference(const PoolCase& pc, const std::vector<float>& x, int64_t OH,
                             int64_t OW) {
  std::vector<float> y;
  for (int64_t p = 0; p < pc.n * pc.c; ++p) {
    const float* xp = x.data() + p * pc.h * pc.w;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = oh * pc.sh - pc.pt;
      const int64_t ph = std::clamp<int64_t>(pc.h + pc.pb - h0, 0, pc.kh);
      const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h0 + pc.kh, pc.h);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = ow * pc.sw - pc.pl;
        const int64_t pw = std::clamp<int64_t>(pc.w + pc.pr - w0, 0, pc.kw);
        const int64_t ws = std::max<int64_t>(w0, 0), we = std::min(w0 + pc.kw, pc.w);
        if (pc.max) {
          float best = -std::numeric_limits<float>::infinity();
          bool first = true;
          for (int64_t h = hs; h < he; ++h) {
            for (int64_t w = ws; w < we; ++w) {
              if (first || xp[h * pc.w + w] > best) best = xp[h * pc.w + w];
              first = false;
            }
          }
          y.push_back(best);
        } else {
          double sum = 0;
          for (int64_t h = hs; h < he; ++h) {
            for (int64_t w = ws; w < we; ++w) sum += double(xp[h * pc.w + w]);
          }
          const int64_t valid = std::max<int64_t>(he - hs, 0) * std::max<int64_t>(we - ws, 0);
          const int64_t div = pc.include_pad ? ph * pw : valid;
          y.push_back(float(div > 0 ? sum / double(div) : 0.0));
        }
      }
    }
  }
  return y;
}

float special(std::mt19937& rng) {
  static const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(),
                                   -std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   -0.0f,
                                   0.0f,
                                   std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::denorm_min()};
  return kSpecial[rng() % 8];
}

std::vector<float> values(std::mt19937& rng, size_t n, int mode) {
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  std::vector<float> x(n);
  for (auto& v : x) {
    // Few distinct values so that ties (and +-0) are common.
    v = mode == 0 ? u(rng) : float(int(rng() % 5) - 2) * 0.5f;
    if (rng() % 16 == 0) v = special(rng);
    if (mode == 1 && v == 0.0f && rng() % 2) v = -0.0f;
  }
  return x;
}

bool same_bits(const std::vector<float>& a, const float* b, std::string* where) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      *where = "at " + std::to_string(i) + ": want " + std::to_string(a[i]) + " got " +
               std::to_string(b[i]);
      return false;
    }
  }
  return true;
}

TEST(PoolSimd, RandomPoolsMatchTheScalarDefinitionBitwise) {
  std::mt19937 rng(19);
  int run = 0;
  for (int it = 0; it < 400; ++it) {
    PoolCase pc;
    pc.max = it % 2 == 0;
    pc.n = 1 + rng() % 2;
    pc.c = 1 + rng() % 3;
    pc.kh = 1 + rng() % 7;
    pc.kw = 1 + rng() % 7;
    pc.sh = 1 + rng() % 3;
    pc.sw = it % 4 < 2 ? 1 + it % 2 : 1 + rng() % 3;  // strides 1 and 2 most often
    pc.pt = rng() % pc.kh;
    pc.pb = rng() % pc.kh;
    pc.pl = rng() % pc.kw;
    pc.pr = rng() % pc.kw;
    if (rng() % 3 == 0) pc.pt = pc.pb = pc.pl = pc.pr = 0;
    pc.w = 1 + rng() % 67;
    pc.h = 1 + rng() % 12;
    pc.ceil = rng() % 2;
    pc.include_pad = rng() % 2;
    if (pc.h + pc.pt + pc.pb < pc.kh || pc.w + pc.pl + pc.pr < pc.kw) continue;
    const auto x = values(rng, size_t(pc.n * pc.c * pc.h * pc.w), it % 3 == 0 ? 1 : 0);
    auto s = Session::create(pool_model(pc), {});
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE(testing::plan_status((*s)->plan({{"x", {kFloat, {pc.n, pc.c, pc.h, pc.w}}}})).ok());
    auto out =
        (*s)->run({{"x", Tensor{kFloat, {pc.n, pc.c, pc.h, pc.w}, const_cast<float*>(x.data())}}});
    ASSERT_TRUE(out.ok()) << out.status().message();
    const Shape& ys = (*out)[0].shape();
    ASSERT_EQ(ys.size(), 4u);
    const auto want = reference(pc, x, ys[2], ys[3]);
    ASSERT_EQ(size_t(ys[0] * ys[1] * ys[2] * ys[3]), want.size());
    std::string where;
    EXPECT_TRUE(same_bits(want, (*out)[0].as<float>(), &where))
        << (pc.max ? "MaxPool" : "AveragePool") << " " << pc.h << "x" << pc.w << " k " << pc.kh
        << "x" << pc.kw << " s " << pc.sh << "," << pc.sw << " pads " << pc.pt << "," << pc.pl
        << "," << pc.pb << "," << pc.pr << " ceil " << pc.ceil << " incl " << pc.include_pad << " "
        << where;
    ++run;
  }
  EXPECT_GT(run, 300);
}

// The row kernels this CPU can run (whatever ONNX_PREPACK_MAX_ISA caps a session
// at); cmake/isa.cmake builds the _avx* units on x86-64 and the _neon one on aarch64.
struct PoolRowVariant {
  const char* name;
  kernels::MaxPoolRowFn max;
  kernels::AvgPoolRowFn avg;
};
std::vector<PoolRowVariant> row_variants_of_this_cpu() {
  const base::IsaLevel cpu = base::isa_level_of(base::detect_cpu_features());
  std::vector<PoolRowVariant> v;
#if defined(__x86_64__)
  if (cpu >= base::IsaLevel::kAvx2 && cpu <= base::IsaLevel::kAvx512)
    v.push_back({"avx2", kernels::max_pool_row_avx2, kernels::avg_pool_row_avx2});
  if (cpu == base::IsaLevel::kAvx512)
    v.push_back({"avx512", kernels::max_pool_row_avx512, kernels::avg_pool_row_avx512});
#elif defined(__aarch64__)
  if (cpu >= base::IsaLevel::kNeon)
    v.push_back({"neon", kernels::max_pool_row_neon, kernels::avg_pool_row_neon});
#else
  (void)cpu;
#endif
  return v;
}

TEST(PoolSimd, RowKernelsOfEveryLevelGiveTheRefBits) {
  const std::vector<PoolRowVariant> variants = row_variants_of_this_cpu();
  if (variants.empty()) GTEST_SKIP() << "no SIMD row kernels on this CPU: only the ref rows";
  std::mt19937 rng(7);
  for (int it = 0; it < 3000; ++it) {
    const size_t rows = 1 + rng() % 7, kw = 1 + rng() % 7, stride = 1 + rng() % 3;
    const size_t n = 1 + rng() % 67;
    const size_t len = (n - 1) * stride + kw;
    std::vector<std::vector<float>> in(rows);
    std::vector<const float*> src(rows);
    for (size_t r = 0; r < rows; ++r) {
      in[r] = values(rng, len, int(it % 2));  // exact length: reads past it would be caught by asan
      src[r] = in[r].data();
    }
    std::vector<float> a(n), b(n);
    std::string where;
    const double div = double(rows * kw + rng() % 3);
    for (const PoolRowVariant& k : variants) {
      kernels::max_pool_row_ref(a.data(), n, src.data(), rows, kw, stride);
      k.max(b.data(), n, src.data(), rows, kw, stride);
      EXPECT_TRUE(same_bits(a, b.data(), &where))
          << k.name << " max " << rows << "x" << kw << " s" << stride << " n" << n << " " << where;
      kernels::avg_pool_row_ref(a.data(), n, src.data(), rows, kw, stride, div);
      k.avg(b.data(), n, src.data(), rows, kw, stride, div);
      EXPECT_TRUE(same_bits(a, b.data(), &where))
          << k.name << " avg " << rows << "x" << kw << " s" << stride << " n" << n << " " << where;
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
