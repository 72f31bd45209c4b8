// MatMul and Gemm on double, int32, int64, uint32 and uint64
// (src/runtime/ops/linalg/matmul_typed.cc) against products computed here by
// plain index arithmetic: numpy broadcasting of batches, 1-D operands,
// transA/transB, alpha/beta, C broadcast, K = 0 and integer wrap-around (and
// Gemm's saturating conversion when alpha or beta is not 1).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

template <typename T>
constexpr int32_t dtype_of() {
  if constexpr (std::is_same_v<T, double>) return kDouble;
  if constexpr (std::is_same_v<T, int32_t>) return kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return kInt64;
  if constexpr (std::is_same_v<T, uint32_t>) return kUint32;
  if constexpr (std::is_same_v<T, uint64_t>) return kUint64;
  return kUndefined;
}

struct Input {
  std::string name;
  HostTensor value;
};

onnx::AttributeProto attr_int(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto attr_float(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

// Runs one `op` node over graph inputs `ins` (opset 13); its one output, or the error.
Result<HostTensor> run_node(const std::string& op, const std::vector<Input>& ins,
                            const std::vector<onnx::AttributeProto>& attrs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("case");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("node");
  std::map<std::string, Session::Feed> feeds;
  std::map<std::string, Tensor> views;
  for (const Input& i : ins) {
    auto* v = g->add_input();
    v->set_name(i.name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(i.value.dtype());
    for (int64_t d : i.value.shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    n->add_input(i.name);
    Session::Feed f;
    f.dtype = i.value.dtype();
    f.shape = i.value.shape();
    feeds[i.name] = f;
    views[i.name] = i.value.view();
  }
  n->add_output("y");
  g->add_output()->set_name("y");
  for (const auto& a : attrs) *n->add_attribute() = a;
  auto s = Session::create(
      std::shared_ptr<const format::Model>(format::Model::from_proto(std::move(m), ".")), {});
  if (!s.ok()) return s.status();
  Status planned = testing::plan_status((*s)->plan(feeds));
  if (!planned.ok()) return planned;
  OP_ASSIGN_OR_RETURN(auto out, (*s)->run(views));
  return std::move(out[0]);
}

// Deterministic values: integers in [lo, lo + span) (converted to T).
template <typename T>
HostTensor values(const Shape& shape, uint32_t seed, int64_t lo, int64_t span) {
  HostTensor t = HostTensor::allocate(dtype_of<T>(), shape);
  T* d = static_cast<T*>(t.mutable_data());
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    d[i] = T(lo + int64_t((s >> 8) % uint32_t(span)));
  }
  return t;
}

template <typename T>
HostTensor tensor(const Shape& shape, const std::vector<T>& v) {
  HostTensor t = HostTensor::allocate(dtype_of<T>(), shape);
  EXPECT_EQ(size_t(t.numel()), v.size());
  if (!v.empty()) std::memcpy(t.mutable_data(), v.data(), v.size() * sizeof(T));
  return t;
}

// acc + a * b in T with wrap-around: in uint64 (modulo 2^64), reduced to T's width.
template <typename T>
T mul_add(T acc, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return acc + a * b;
  } else {
    using U = std::make_unsigned_t<T>;
    const uint64_t r = uint64_t(U(acc)) + uint64_t(U(a)) * uint64_t(U(b));
    return T(U(sizeof(T) == 8 ? r : r & 0xffffffffu));
  }
}

// numpy's matmul by index arithmetic: a of shape sa, b of shape sb.
template <typename T>
HostTensor reference_matmul(const HostTensor& a, const HostTensor& b) {
  Shape as = a.shape(), bs = b.shape();
  const bool av = as.size() == 1, bv = bs.size() == 1;
  if (av) as.insert(as.begin(), 1);
  if (bv) bs.push_back(1);
  const size_t rank = std::max(as.size(), bs.size());
  as.insert(as.begin(), rank - as.size(), 1);
  bs.insert(bs.begin(), rank - bs.size(), 1);
  const int64_t m = as[rank - 2], k = as[rank - 1], n = bs[rank - 1];
  Shape batch(rank - 2);
  for (size_t d = 0; d + 2 < rank; ++d) batch[d] = as[d] == 1 ? bs[d] : as[d];
  Shape out = batch;
  if (!av) out.push_back(m);
  if (!bv) out.push_back(n);
  HostTensor y = HostTensor::allocate(dtype_of<T>(), out);
  T* yp = static_cast<T*>(y.mutable_data());
  const T* ap = a.as<T>();
  const T* bp = b.as<T>();
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  for (int64_t q = 0; q < batches; ++q) {
    // The batch index, then each operand's (a dim of 1 repeats).
    int64_t rem = q, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      ia += (as[d] == 1 ? 0 : idx) * sa;
      ib += (bs[d] == 1 ? 0 : idx) * sb;
      sa *= as[d];
      sb *= bs[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T acc = T(0);
        for (int64_t p = 0; p < k; ++p)
          acc = mul_add(acc, ap[(ia * m + i) * k + p], bp[(ib * k + p) * n + j]);
        yp[(q * m + i) * n + j] = acc;
      }
    }
  }
  return y;
}

template <typename T>
void expect_equal(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    // double too: the same products summed in the same (k) order.
    ASSERT_EQ(got.as<T>()[i], want.as<T>()[i]) << what << ", element " << i;
  }
}

template <typename T>
void check_matmul(const Shape& sa, const Shape& sb, int64_t lo, int64_t span) {
  const std::string what =
      "MatMul " + dtype_name(dtype_of<T>()) + " " + shape_string(sa) + " x " + shape_string(sb);
  HostTensor a = values<T>(sa, 1, lo, span), b = values<T>(sb, 2, lo, span);
  auto y = run_node("MatMul", {{"a", a}, {"b", b}}, {});
  ASSERT_TRUE(y.ok()) << what << ": " << y.status().message();
  expect_equal<T>(*y, reference_matmul<T>(a, b), what);
}

const std::vector<std::pair<Shape, Shape>> kMatMulShapes = {
    {{3, 4}, {4, 5}},              // plain
    {{2, 3, 4}, {4, 5}},           // batched A, 2-D B
    {{3, 4}, {2, 4, 5}},           // 2-D A, batched B
    {{3, 1, 2, 4}, {5, 4, 3}},     // batches broadcast both ways: [3, 5, 2, 3]
    {{2, 1, 3, 4}, {1, 6, 4, 2}},  // [2, 6, 3, 2]
    {{4}, {4, 3}},                 // 1-D A: [3]
    {{3, 4}, {4}},                 // 1-D B: [3]
    {{4}, {4}},                    // both: a scalar
    {{4}, {2, 4, 3}},              // 1-D A, batched B: [2, 3]
    {{2, 3, 4}, {4}},              // batched A, 1-D B: [2, 3]
    {{2, 0}, {0, 3}},              // K = 0: zeros
    {{2, 3, 0}, {0, 4}},           // K = 0, batched
    {{0, 4}, {4, 3}},              // M = 0
    {{1, 3, 4}, {0, 4, 5}},        // a batch of 0 (1 broadcasts to 0)
    {{70, 33}, {33, 65}},          // rows across pool tasks
};

TEST(LinalgTyped, MatMulDoubleMatchesReference) {
  for (const auto& [sa, sb] : kMatMulShapes) check_matmul<double>(sa, sb, -50, 101);
}

TEST(LinalgTyped, MatMulIntegersMatchReference) {
  for (const auto& [sa, sb] : kMatMulShapes) {
    check_matmul<int32_t>(sa, sb, -1000, 2001);
    check_matmul<int64_t>(sa, sb, -1000000, 2000001);
    check_matmul<uint32_t>(sa, sb, 0, 5000);
    check_matmul<uint64_t>(sa, sb, 0, 5000000);
  }
}

TEST(LinalgTyped, MatMulDoubleFractions) {
  // Non-integral values: the sum is taken in k order, so bitwise equal to the reference.
  HostTensor a = tensor<double>({2, 3}, {0.1, 0.2, 0.3, 1e-17, 1.0, -1.0});
  HostTensor b = tensor<double>({3, 2}, {0.7, 1e17, 0.11, -1e17, 0.13, 3.0});
  auto y = run_node("MatMul", {{"a", a}, {"b", b}}, {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  expect_equal<double>(*y, reference_matmul<double>(a, b), "fractions");
  EXPECT_EQ(y->as<double>()[0], (0.0 + 0.1 * 0.7) + 0.2 * 0.11 + 0.3 * 0.13);
  EXPECT_EQ(y->as<double>()[1], ((0.1 * 1e17 + 0.2 * -1e17) + 0.3 * 3.0));
}

TEST(LinalgTyped, MatMulIntegersWrapAround) {
  // Large values: products and sums pass the type's range and wrap (two's complement).
  for (const auto& [sa, sb] : kMatMulShapes) {
    check_matmul<int32_t>(sa, sb, std::numeric_limits<int32_t>::max() - 3000, 3000);
    check_matmul<int32_t>(sa, sb, std::numeric_limits<int32_t>::min(), 3000);
    check_matmul<int64_t>(sa, sb, std::numeric_limits<int64_t>::max() - 3000, 3000);
    check_matmul<int64_t>(sa, sb, std::numeric_limits<int64_t>::min(), 3000);
    check_matmul<uint32_t>(sa, sb, int64_t(std::numeric_limits<uint32_t>::max()) - 3000, 3000);
  }
  // By hand: 2 * MAX + 2 * MAX = 4 * 2^(w-1) - 4 = -4 modulo 2^w.
  auto y32 = run_node("MatMul",
                      {{"a", tensor<int32_t>({1, 2}, {std::numeric_limits<int32_t>::max(), 2})},
                       {"b", tensor<int32_t>({2, 1}, {2, std::numeric_limits<int32_t>::max()})}},
                      {});
  ASSERT_TRUE(y32.ok()) << y32.status().message();
  EXPECT_EQ(y32->as<int32_t>()[0], -4);
  auto y64 = run_node("MatMul",
                      {{"a", tensor<int64_t>({2}, {std::numeric_limits<int64_t>::max(), 2})},
                       {"b", tensor<int64_t>({2}, {2, std::numeric_limits<int64_t>::max()})}},
                      {});
  ASSERT_TRUE(y64.ok()) << y64.status().message();
  EXPECT_EQ(y64->shape(), Shape{});
  EXPECT_EQ(y64->as<int64_t>()[0], -4);
  // (2^32 - 1)^2 + 1 = 2^64 - 2^33 + 2 = 2 modulo 2^32; uint64: (2^64 - 1)^2 = 1.
  auto yu32 = run_node("MatMul",
                       {{"a", tensor<uint32_t>({1, 2}, {std::numeric_limits<uint32_t>::max(), 1})},
                        {"b", tensor<uint32_t>({2, 1}, {std::numeric_limits<uint32_t>::max(), 1})}},
                       {});
  ASSERT_TRUE(yu32.ok()) << yu32.status().message();
  EXPECT_EQ(yu32->as<uint32_t>()[0], 2u);
  auto yu64 = run_node("MatMul",
                       {{"a", tensor<uint64_t>({1, 1}, {std::numeric_limits<uint64_t>::max()})},
                        {"b", tensor<uint64_t>({1, 1}, {std::numeric_limits<uint64_t>::max()})}},
                       {});
  ASSERT_TRUE(yu64.ok()) << yu64.status().message();
  EXPECT_EQ(yu64->as<uint64_t>()[0], 1u);
}

TEST(LinalgTyped, MatMulKZeroIsZeros) {
  auto y = run_node(
      "MatMul", {{"a", tensor<int64_t>({2, 3, 0}, {})}, {"b", tensor<int64_t>({0, 4}, {})}}, {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  ASSERT_EQ(y->shape(), (Shape{2, 3, 4}));
  for (int64_t i = 0; i < y->numel(); ++i) EXPECT_EQ(y->as<int64_t>()[i], 0);
  auto yd =
      run_node("MatMul", {{"a", tensor<double>({0}, {})}, {"b", tensor<double>({0}, {})}}, {});
  ASSERT_TRUE(yd.ok()) << yd.status().message();
  ASSERT_EQ(yd->shape(), Shape{});
  EXPECT_EQ(yd->as<double>()[0], 0.0);
}

TEST(LinalgTyped, MatMulRefusals) {
  auto mixed = run_node(
      "MatMul", {{"a", tensor<double>({1, 1}, {1})}, {"b", tensor<int64_t>({1, 1}, {1})}}, {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("DOUBLE and INT64"), std::string::npos)
      << mixed.status().message();
  auto inner = run_node(
      "MatMul", {{"a", values<int32_t>({2, 3}, 1, 0, 9)}, {"b", values<int32_t>({4, 2}, 1, 0, 9)}},
      {});
  ASSERT_FALSE(inner.ok());
  EXPECT_NE(inner.status().message().find("inner dimensions differ"), std::string::npos);
  auto batch = run_node(
      "MatMul",
      {{"a", values<uint64_t>({2, 2, 3}, 1, 0, 9)}, {"b", values<uint64_t>({3, 3, 2}, 1, 0, 9)}},
      {});
  ASSERT_FALSE(batch.ok());
  EXPECT_NE(batch.status().message().find("batch dimensions"), std::string::npos);
  // float16 runs through float (half_adapter.cc); its shape errors name the shapes.
  auto half = run_node("MatMul",
                       {{"a", HostTensor::allocate(kFloat16, {2, 3})},
                        {"b", HostTensor::allocate(kFloat16, {4, 2})}},
                       {});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("inner dimensions differ"), std::string::npos)
      << half.status().message();
  auto half_ok = run_node("MatMul",
                          {{"a", HostTensor::allocate(kBfloat16, {2, 3})},
                           {"b", HostTensor::allocate(kBfloat16, {3, 2})}},
                          {});
  ASSERT_TRUE(half_ok.ok()) << half_ok.status().message();
  EXPECT_EQ(half_ok->dtype(), kBfloat16);
  EXPECT_EQ(half_ok->shape(), (Shape{2, 2}));
}

// Gemm by index arithmetic: P = op(A) op(B) in T (wrapping), then the epilogue
// of docs/runtime.md: double: alpha * P + beta * C; integers: P + C wrapping when
// alpha is 1 and beta 1 (or no C / beta 0), else alpha * P + beta * C in double,
// truncated and saturated.
template <typename T>
T saturate(double v) {
  if (v != v) return T(0);
  if (v <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return T(v);  // truncates
}

template <typename T>
HostTensor reference_gemm(const HostTensor& a, const HostTensor& b, const HostTensor* c, bool ta,
                          bool tb, float alpha, float beta) {
  const int64_t m = a.shape()[ta ? 1 : 0], k = a.shape()[ta ? 0 : 1];
  const int64_t n = b.shape()[tb ? 0 : 1];
  HostTensor y = HostTensor::allocate(dtype_of<T>(), {m, n});
  T* yp = static_cast<T*>(y.mutable_data());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T p = T(0);
      for (int64_t q = 0; q < k; ++q) {
        p = mul_add(p, a.as<T>()[ta ? q * m + i : i * k + q],
                    b.as<T>()[tb ? j * k + q : q * n + j]);
      }
      T cv = T(0);
      if (c != nullptr) {
        // C of rank 0, 1 or 2 broadcast to [m, n].
        const Shape& cs = c->shape();
        const int64_t cr = cs.size() == 2 ? cs[0] : 1, cc = cs.empty() ? 1 : cs.back();
        cv = c->as<T>()[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)];
      }
      const bool use_c = c != nullptr && beta != 0.0f;
      T out;
      if constexpr (std::is_floating_point_v<T>) {
        out = p;
        if (alpha != 1.0f) out *= T(alpha);
        if (use_c) out += T(beta) * cv;
      } else if (alpha == 1.0f && (!use_c || beta == 1.0f)) {
        out = use_c ? mul_add(p, cv, T(1)) : p;
      } else {
        out = saturate<T>(double(alpha) * double(p) + (use_c ? double(beta) * double(cv) : 0.0));
      }
      yp[i * n + j] = out;
    }
  }
  return y;
}

struct GemmCase {
  int64_t m, k, n;
  bool ta, tb;
  float alpha, beta;
  Shape c;  // {-1}: no C
};

template <typename T>
void check_gemm(const GemmCase& g, int64_t lo, int64_t span) {
  const Shape sa = g.ta ? Shape{g.k, g.m} : Shape{g.m, g.k};
  const Shape sb = g.tb ? Shape{g.n, g.k} : Shape{g.k, g.n};
  const bool has_c = !(g.c.size() == 1 && g.c[0] == -1);
  const std::string what = "Gemm " + dtype_name(dtype_of<T>()) + " " + shape_string(sa) + " x " +
                           shape_string(sb) + " transA " + std::to_string(g.ta) + " transB " +
                           std::to_string(g.tb) + " alpha " + std::to_string(g.alpha) + " beta " +
                           std::to_string(g.beta) + (has_c ? " C " + shape_string(g.c) : " no C");
  HostTensor a = values<T>(sa, 3, lo, span), b = values<T>(sb, 4, lo, span);
  HostTensor c = has_c ? values<T>(g.c, 5, lo, span) : HostTensor();
  std::vector<Input> ins = {{"a", a}, {"b", b}};
  if (has_c) ins.push_back({"c", c});
  auto y = run_node("Gemm", ins,
                    {attr_int("transA", g.ta), attr_int("transB", g.tb),
                     attr_float("alpha", g.alpha), attr_float("beta", g.beta)});
  ASSERT_TRUE(y.ok()) << what << ": " << y.status().message();
  expect_equal<T>(*y, reference_gemm<T>(a, b, has_c ? &c : nullptr, g.ta, g.tb, g.alpha, g.beta),
                  what);
}

std::vector<GemmCase> gemm_cases() {
  std::vector<GemmCase> out;
  const std::vector<Shape> cs = {{-1}, {3, 5}, {5}, {1, 5}, {3, 1}, {1, 1}, {1}, {}};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const Shape& c : cs) {
        out.push_back({3, 4, 5, ta, tb, 1.0f, 1.0f, c});
        out.push_back({3, 4, 5, ta, tb, 0.5f, 2.0f, c});
        out.push_back({3, 4, 5, ta, tb, -1.5f, 0.0f, c});
        out.push_back({3, 4, 5, ta, tb, 1.0f, -3.0f, c});
      }
      out.push_back({3, 0, 5, ta, tb, 1.0f, 1.0f, {5}});  // K = 0: beta * C
      out.push_back({3, 0, 5, ta, tb, 2.0f, 0.5f, {3, 5}});
      out.push_back({0, 4, 5, ta, tb, 1.0f, 1.0f, {5}});
      out.push_back({67, 9, 40, ta, tb, 1.0f, 1.0f, {40}});
    }
  }
  return out;
}

TEST(LinalgTyped, GemmDoubleMatchesReference) {
  for (const GemmCase& g : gemm_cases()) check_gemm<double>(g, -50, 101);
}

TEST(LinalgTyped, GemmIntegersMatchReference) {
  for (const GemmCase& g : gemm_cases()) {
    check_gemm<int32_t>(g, -1000, 2001);
    check_gemm<int64_t>(g, -1000000, 2000001);
    check_gemm<uint32_t>(g, 0, 5000);
    check_gemm<uint64_t>(g, 0, 5000000);
    // Wrap-around in the product (and in P + C with the defaults), saturation otherwise.
    check_gemm<int32_t>(g, std::numeric_limits<int32_t>::max() - 3000, 3000);
    check_gemm<int64_t>(g, std::numeric_limits<int64_t>::min(), 3000);
    check_gemm<uint64_t>(g, 0, 1 << 30);
  }
}

TEST(LinalgTyped, GemmIntegerEpilogueByHand) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  // Defaults (alpha 1, beta 1): P + C wraps. P = big, C = 1: INT32_MIN.
  auto y = run_node("Gemm",
                    {{"a", tensor<int32_t>({1, 1}, {big})},
                     {"b", tensor<int32_t>({1, 1}, {1})},
                     {"c", tensor<int32_t>({1}, {1})}},
                    {});
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(y->as<int32_t>()[0], std::numeric_limits<int32_t>::min());
  // alpha 2: in double, 2 * big saturates, 2 * -3 = -6.
  y = run_node("Gemm",
               {{"a", tensor<int32_t>({2, 1}, {big, -3})},
                {"b", tensor<int32_t>({1, 1}, {1})},
                {"c", tensor<int32_t>({2, 1}, {0, 0})}},
               {attr_float("alpha", 2.0f)});
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(y->as<int32_t>()[0], big);
  EXPECT_EQ(y->as<int32_t>()[1], -6);
  y = run_node("Gemm",
               {{"a", tensor<int32_t>({2, 1}, {-3, 3})},
                {"b", tensor<int32_t>({1, 1}, {1})},
                {"c", tensor<int32_t>({1, 1}, {1})}},
               {attr_float("alpha", 0.5f), attr_float("beta", -1.0f)});
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(y->as<int32_t>()[0], -2);  // -1.5 - 1 = -2.5 -> -2
  EXPECT_EQ(y->as<int32_t>()[1], 0);   // 1.5 - 1 = 0.5 -> 0
  // uint32 with a negative alpha: below 0 saturates to 0.
  auto yu =
      run_node("Gemm", {{"a", tensor<uint32_t>({1, 1}, {7})}, {"b", tensor<uint32_t>({1, 1}, {3})}},
               {attr_float("alpha", -1.0f)});
  ASSERT_TRUE(yu.ok()) << yu.status().message();
  EXPECT_EQ(yu->as<uint32_t>()[0], 0u);
  // K = 0 with beta 3: 3 * C.
  auto yk = run_node("Gemm",
                     {{"a", tensor<int64_t>({2, 0}, {})},
                      {"b", tensor<int64_t>({0, 2}, {})},
                      {"c", tensor<int64_t>({2}, {5, -7})}},
                     {attr_float("beta", 3.0f)});
  ASSERT_TRUE(yk.ok()) << yk.status().message();
  ASSERT_EQ(yk->shape(), (Shape{2, 2}));
  EXPECT_EQ(yk->as<int64_t>()[0], 15);
  EXPECT_EQ(yk->as<int64_t>()[1], -21);
  EXPECT_EQ(yk->as<int64_t>()[2], 15);
  EXPECT_EQ(yk->as<int64_t>()[3], -21);
}

TEST(LinalgTyped, GemmRefusals) {
  auto c_type = run_node("Gemm",
                         {{"a", tensor<double>({1, 1}, {1})},
                          {"b", tensor<double>({1, 1}, {1})},
                          {"c", tensor<int64_t>({1}, {1})}},
                         {});
  ASSERT_FALSE(c_type.ok());
  EXPECT_NE(c_type.status().message().find("DOUBLE and INT64"), std::string::npos)
      << c_type.status().message();
  auto c_shape = run_node("Gemm",
                          {{"a", values<int32_t>({2, 3}, 1, 0, 9)},
                           {"b", values<int32_t>({3, 4}, 1, 0, 9)},
                           {"c", values<int32_t>({3}, 1, 0, 9)}},
                          {});
  ASSERT_FALSE(c_shape.ok());
  EXPECT_NE(c_shape.status().message().find("does not broadcast"), std::string::npos);
  auto half = run_node("Gemm",
                       {{"a", HostTensor::allocate(kFloat16, {2, 3})},
                        {"b", HostTensor::allocate(kFloat16, {3, 4})},
                        {"c", HostTensor::allocate(kFloat16, {3})}},
                       {});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("does not broadcast"), std::string::npos)
      << half.status().message();
  auto half_ok = run_node("Gemm",
                          {{"a", HostTensor::allocate(kFloat16, {3, 2})},
                           {"b", HostTensor::allocate(kFloat16, {3, 4})},
                           {"c", HostTensor::allocate(kFloat16, {4})}},
                          {attr_int("transA", 1)});
  ASSERT_TRUE(half_ok.ok()) << half_ok.status().message();
  EXPECT_EQ(half_ok->dtype(), kFloat16);
  EXPECT_EQ(half_ok->shape(), (Shape{2, 4}));
  auto rank = run_node(
      "Gemm", {{"a", values<int64_t>({2, 3, 1}, 1, 0, 9)}, {"b", values<int64_t>({3, 4}, 1, 0, 9)}},
      {});
  ASSERT_FALSE(rank.ok());
}

}  // namespace
}  // namespace onnx_prepack::runtime
