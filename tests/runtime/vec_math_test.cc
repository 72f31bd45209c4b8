// The vectorised operator kernels (vec_math.h) against their portable twins
// (bit for bit for the elementwise ones) and against exact math; the GEMM on
// the kernels layer (ops/linalg/gemm.h) against a direct product; and a transformer
// whose outputs do not depend on the thread count.
#include "kernels/vec_math/vec_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "runtime/generate.h"
#include "runtime/kernel.h"
#include "runtime/ops/linalg/gemm.h"
#include "runtime/session.h"

namespace onnx_prepack::runtime {
namespace {

using device::IsaLevel;

// Every variant this host runs (the cap in ONNX_PREPACK_MAX_ISA included).
std::vector<const kernels::vec::VecKernels*> variants() {
  std::vector<const kernels::vec::VecKernels*> v;
  for (IsaLevel l : {IsaLevel::kRef, IsaLevel::kAvx2, IsaLevel::kAvx512, IsaLevel::kNeon}) {
    if (l <= device::host_isa_level()) v.push_back(&kernels::vec::vec_kernels(l));
  }
  return v;
}

std::vector<float> test_inputs() {
  std::vector<float> x = {0.0f,   -0.0f,  1e-30f,   -1e-30f,  1e-7f,   -3e-5f, 0.374f,
                          0.375f, 0.376f, -0.749f,  0.75f,    -0.751f, 1.0f,   -2.5f,
                          3.9f,   -4.0f,  9.0f,     -9.5f,    20.0f,   -87.0f, 88.0f,
                          1e30f,  -1e30f, INFINITY, -INFINITY};
  for (int i = -4000; i <= 4000; ++i) x.push_back(float(i) * 0.00271f);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  for (int i = 0; i < 3001; ++i) x.push_back(nd(rng));  // odd count: a masked tail
  return x;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct UnaryCase {
  const char* name;
  kernels::vec::UnaryFn kernels::vec::VecKernels::*fn;
  double (*exact)(double);
  double tol;  // absolute
};

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_exact(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double erf_exact(double x) { return std::erf(x); }
double tanh_exact(double x) { return std::tanh(x); }

TEST(VecMath, UnaryVariantsMatchTheRefTwinBitForBitAndExactMath) {
  const UnaryCase cases[] = {
      {"erf", &kernels::vec::VecKernels::erf, erf_exact, 3e-7},
      {"tanh", &kernels::vec::VecKernels::tanh, tanh_exact, 3e-7},
      {"gelu", &kernels::vec::VecKernels::gelu, gelu_exact, 4e-7},
      {"gelu_tanh", &kernels::vec::VecKernels::gelu_tanh, gelu_tanh_exact, 4e-7},
  };
  const std::vector<float> x = test_inputs();
  const kernels::vec::VecKernels& ref = kernels::vec::vec_kernels(IsaLevel::kRef);
  for (const UnaryCase& c : cases) {
    std::vector<float> want(x.size());
    (ref.*c.fn)(x.data(), want.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = c.exact(double(x[i]));
      if (std::isinf(x[i]) && std::string(c.name).rfind("gelu", 0) == 0) continue;
      // Relative for large gelu outputs (x itself), absolute elsewhere.
      const double tol = c.tol * std::max(1.0, std::fabs(e));
      ASSERT_NEAR(double(want[i]), e, tol) << c.name << "(" << x[i] << ")";
    }
    float nan = std::numeric_limits<float>::quiet_NaN(), out = 0;
    (ref.*c.fn)(&nan, &out, 1);
    EXPECT_TRUE(std::isnan(out)) << c.name;
    for (const kernels::vec::VecKernels* v : variants()) {
      // Every length up to 40 (masked tails) and the full vector.
      for (size_t n = 1; n <= 40; ++n) {
        std::vector<float> got(n);
        ((*v).*c.fn)(x.data() + 3, got.data(), n);
        ASSERT_EQ(0, std::memcmp(got.data(), want.data() + 3, n * sizeof(float)))
            << c.name << " " << v->isa << " n " << n;
      }
      std::vector<float> got(x.size());
      ((*v).*c.fn)(x.data(), got.data(), x.size());
      EXPECT_TRUE(same_bits(got, want)) << c.name << " " << v->isa;
      ((*v).*c.fn)(&nan, &out, 1);
      EXPECT_TRUE(std::isnan(out)) << c.name << " " << v->isa;
    }
  }
}

// The one exp polynomial per ISA (vec_exp_*.h) that softmax, tanh, erf and the
// activations share: each variant gives the ref twin's bits, within 2 ulp or so of exp.
TEST(VecMath, ExpVariantsMatchTheRefTwinBitForBitAndExactMath) {
  std::vector<float> x = test_inputs();
  for (float v : {-87.33f, -87.34f, -87.4f, -100.0f, 87.9f, 88.0f, 88.5f}) x.push_back(v);
  const kernels::vec::VecKernels& ref = kernels::vec::vec_kernels(IsaLevel::kRef);
  std::vector<float> want(x.size());
  ref.exp(x.data(), want.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] < -87.3365478515625f) {
      ASSERT_EQ(want[i], 0.0f) << "exp(" << x[i] << ")";
      continue;
    }
    const double e = std::exp(double(std::min(x[i], 88.0f)));
    ASSERT_NEAR(double(want[i]), e, 5e-7 * e) << "exp(" << x[i] << ")";
  }
  float nan = std::numeric_limits<float>::quiet_NaN(), out = 0;
  ref.exp(&nan, &out, 1);
  EXPECT_TRUE(std::isnan(out));
  for (const kernels::vec::VecKernels* v : variants()) {
    for (size_t n = 1; n <= 40; ++n) {
      std::vector<float> got(n);
      v->exp(x.data() + 3, got.data(), n);
      ASSERT_EQ(0, std::memcmp(got.data(), want.data() + 3, n * sizeof(float)))
          << v->isa << " n " << n;
    }
    std::vector<float> got(x.size());
    v->exp(x.data(), got.data(), x.size());
    EXPECT_TRUE(same_bits(got, want)) << v->isa;
    v->exp(&nan, &out, 1);
    EXPECT_TRUE(std::isnan(out)) << v->isa;
  }
}

TEST(VecMath, BinaryOpsMatchScalarArithmetic) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> ud(-4.0f, 4.0f);
  std::vector<float> a(77), b(78);  // b is read from offset 1
  for (auto& v : a) v = ud(rng);
  for (auto& v : b) v = ud(rng);
  b[5] = 0.0f;  // x / 0 = inf
  for (const kernels::vec::VecKernels* v : variants()) {
    for (int op :
         {kernels::vec::kAdd, kernels::vec::kSub, kernels::vec::kMul, kernels::vec::kDiv}) {
      for (size_t sa : {0, 1}) {
        for (size_t sb : {0, 1}) {
          for (size_t n : {1, 7, 8, 15, 16, 17, 33, 77}) {
            std::vector<float> got(n), want(n);
            v->binary(op, a.data(), sa, b.data() + 1, sb, got.data(), n);
            for (size_t i = 0; i < n; ++i) {
              float x = a[i * sa], y = b[1 + i * sb];
              want[i] = op == kernels::vec::kAdd   ? x + y
                        : op == kernels::vec::kSub ? x - y
                        : op == kernels::vec::kMul ? x * y
                                                   : x / y;
            }
            ASSERT_TRUE(same_bits(got, want)) << v->isa << " op " << op << " " << sa << sb << n;
          }
        }
      }
    }
  }
}

TEST(VecMath, SoftmaxRowsMatchExactMath) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 4.0f);
  for (size_t len : {1, 3, 8, 13, 16, 31, 64, 100}) {
    const size_t rows = 3;
    std::vector<float> x(rows * len);
    for (auto& v : x) v = nd(rng);
    x[0] = -INFINITY;  // a masked position
    if (len > 2) x[len + 1] = -1e4f;
    for (const kernels::vec::VecKernels* v : variants()) {
      std::vector<float> y(x.size());
      v->softmax_rows(x.data(), y.data(), rows, len);
      for (size_t r = 0; r < rows; ++r) {
        double mx = -INFINITY, sum = 0;
        for (size_t j = 0; j < len; ++j) mx = std::max(mx, double(x[r * len + j]));
        for (size_t j = 0; j < len; ++j) sum += std::exp(double(x[r * len + j]) - mx);
        for (size_t j = 0; j < len; ++j) {
          double want = std::exp(double(x[r * len + j]) - mx) / sum;
          if (std::isinf(mx)) continue;  // a row of -inf only
          ASSERT_NEAR(y[r * len + j], want, 1e-6 * std::max(1.0, want))
              << v->isa << " len " << len << " r " << r << " j " << j;
        }
      }
    }
  }
}

TEST(VecMath, LayerNormRowsMatchExactMath) {
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(1.5f, 2.0f);
  for (size_t len : {1, 5, 8, 17, 32, 47, 512}) {
    const size_t rows = 4;
    std::vector<float> x(rows * len), scale(len), bias(len);
    for (auto& v : x) v = nd(rng);
    for (auto& v : scale) v = nd(rng);
    for (auto& v : bias) v = nd(rng);
    for (const kernels::vec::VecKernels* v : variants()) {
      for (bool with_bias : {false, true}) {
        std::vector<float> y(x.size()), mean(rows), inv(rows);
        v->layer_norm_rows(x.data(), scale.data(), with_bias ? bias.data() : nullptr, y.data(),
                           mean.data(), inv.data(), rows, len, 1e-5f);
        for (size_t r = 0; r < rows; ++r) {
          double mu = 0, var = 0;
          for (size_t j = 0; j < len; ++j) mu += x[r * len + j];
          mu /= double(len);
          for (size_t j = 0; j < len; ++j) var += std::pow(x[r * len + j] - mu, 2);
          const double is = 1.0 / std::sqrt(var / double(len) + 1e-5);
          ASSERT_NEAR(mean[r], mu, 1e-5) << v->isa;
          ASSERT_NEAR(inv[r], is, 1e-5 * is) << v->isa;
          for (size_t j = 0; j < len; ++j) {
            double want = (x[r * len + j] - mu) * is * scale[j] + (with_bias ? bias[j] : 0.0);
            ASSERT_NEAR(y[r * len + j], want, 2e-5 * std::max(1.0, std::fabs(want)))
                << v->isa << " len " << len << " j " << j;
          }
        }
      }
    }
  }
}

TEST(RuntimeGemm, PacksBOnTheFlyAndMatchesADirectProduct) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
  base::ThreadPool pool(3);
  Workspace ws;
  ws.reserve_workers(pool.size());
  for (auto [m, n, k] : {std::tuple<size_t, size_t, size_t>{1, 1, 1},
                         {2, 33, 17},
                         {64, 64, 64},
                         {13, 100, 300},
                         {70, 40, 0},
                         {3, 513, 9}}) {
    std::vector<float> a(m * k), b(k * n), bt(n * k), c0(m * n);
    for (auto& v : a) v = ud(rng);
    for (auto& v : b) v = ud(rng);
    for (auto& v : c0) v = ud(rng);
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < n; ++j) bt[j * k + i] = b[i * n + j];
    }
    for (bool accumulate : {false, true}) {
      std::vector<float> want(m * n);
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double s = accumulate ? c0[i * n + j] : 0.0;
          for (size_t q = 0; q < k; ++q) s += double(a[i * k + q]) * b[q * n + j];
          want[i * n + j] = float(s);
        }
      }
      std::vector<float> c_kn = c0, c_nk = c0, c_one = c0;
      gemm_f32(m, n, k, a.data(), k, b.data(), kernels::PackSourceLayout::kKN, c_kn.data(), n,
               accumulate, &ws, 0, &pool);
      gemm_f32(m, n, k, a.data(), k, bt.data(), kernels::PackSourceLayout::kNK, c_nk.data(), n,
               accumulate, nullptr, 0, nullptr);
      gemm_f32(m, n, k, a.data(), k, b.data(), kernels::PackSourceLayout::kKN, c_one.data(), n,
               accumulate, &ws, 1, nullptr);
      // Same FMA chain whatever the source layout or the thread count.
      EXPECT_TRUE(same_bits(c_kn, c_nk)) << m << "x" << n << "x" << k;
      EXPECT_TRUE(same_bits(c_kn, c_one)) << m << "x" << n << "x" << k;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(c_kn[i], want[i], 1e-5 * double(k + 1))
            << m << "x" << n << "x" << k << " acc " << accumulate << " i " << i << " c0 " << c0[i];
      }
    }
  }
  EXPECT_GT(ws.bytes_held(), 0u);
}

std::vector<HostTensor> run_transformer(base::ThreadPool* pool, int64_t seq) {
  GenerateOptions o;
  o.kind = "transformer";
  o.layers = 2;
  o.width = 96;
  o.heads = 3;
  o.seq = int(seq);
  o.vocab = 50;
  auto model =
      std::shared_ptr<const format::Model>(format::Model::from_proto(generate_model(o), "."));
  SessionOptions so;
  so.pool = pool;
  auto s = Session::create(model, so);
  EXPECT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE((*s)->plan({{"input_ids", {kInt64, {2, seq}}}}).ok());
  std::vector<int64_t> ids(size_t(2 * seq));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int64_t((i * 7 + 3) % 50);
  ids[3] = 0;  // a padding position (masked in attention)
  auto out = (*s)->run({{"input_ids", Tensor{kInt64, {2, seq}, ids.data()}}});
  EXPECT_TRUE(out.ok()) << out.status().message();
  auto again = (*s)->run({{"input_ids", Tensor{kInt64, {2, seq}, ids.data()}}});
  EXPECT_TRUE(again.ok());
  EXPECT_EQ(0, std::memcmp((*out)[0].data(), (*again)[0].data(), (*out)[0].nbytes()));
  return std::move(*out);
}

TEST(RuntimeThreads, TransformerOutputsDoNotDependOnTheThreadCount) {
  base::ThreadPool one(1), three(3);
  for (int64_t seq : {5, 37}) {
    auto a = run_transformer(&one, seq);
    auto b = run_transformer(&three, seq);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].nbytes(), b[i].nbytes());
      EXPECT_EQ(0, std::memcmp(a[i].data(), b[i].data(), a[i].nbytes())) << "seq " << seq;
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
