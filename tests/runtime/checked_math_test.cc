// runtime/checked_math.h at the edges: INT64_MAX, INT64_MIN, negatives, zero
// and the 2^62 element bound.
#include "runtime/checked_math.h"

#include <gtest/gtest.h>

#include <limits>

#include "runtime/tensor.h"

namespace onnx_prepack::runtime {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr uint64_t kUMax = std::numeric_limits<uint64_t>::max();

TEST(CheckedMath, AddAndSubAtTheInt64Edges) {
  EXPECT_EQ(checked_add<int64_t>(kMax - 1, 1), kMax);
  EXPECT_EQ(checked_add<int64_t>(kMax, 1), std::nullopt);
  EXPECT_EQ(checked_add<int64_t>(kMin, -1), std::nullopt);
  EXPECT_EQ(checked_add<int64_t>(kMin, kMax), -1);
  EXPECT_EQ(checked_sub<int64_t>(kMin + 1, 1), kMin);
  EXPECT_EQ(checked_sub<int64_t>(kMin, 1), std::nullopt);
  EXPECT_EQ(checked_sub<int64_t>(0, kMin), std::nullopt);  // -INT64_MIN
  EXPECT_EQ(checked_sub<int64_t>(-1, kMin), kMax);
}

TEST(CheckedMath, MulAtTheInt64Edges) {
  EXPECT_EQ(checked_mul<int64_t>(kMax, 1), kMax);
  EXPECT_EQ(checked_mul<int64_t>(kMax, 2), std::nullopt);
  EXPECT_EQ(checked_mul<int64_t>(kMin, -1), std::nullopt);
  EXPECT_EQ(checked_mul<int64_t>(kMin, 1), kMin);
  EXPECT_EQ(checked_mul<int64_t>(kMin, 0), 0);
  EXPECT_EQ(checked_mul<int64_t>(-3, 7), -21);
  EXPECT_EQ(checked_mul<int64_t>(int64_t(1) << 31, int64_t(1) << 31), int64_t(1) << 62);
  EXPECT_EQ(checked_mul<int64_t>(int64_t(1) << 32, int64_t(1) << 31), std::nullopt);
  // The second operand takes the first one's type: a literal does not widen it.
  const int64_t dim = int64_t(1) << 62;
  EXPECT_EQ(checked_mul(dim, 2), std::nullopt);
  EXPECT_EQ(checked_mul(dim, 1), dim);
}

TEST(CheckedMath, UnsignedMulAddAndSaturation) {
  EXPECT_EQ(checked_mul<uint64_t>(kUMax, 1), kUMax);
  EXPECT_EQ(checked_mul<uint64_t>(kUMax, 2), std::nullopt);
  EXPECT_EQ(checked_add<uint64_t>(kUMax, 1), std::nullopt);
  EXPECT_EQ(saturating_mul(uint64_t(1) << 32, uint64_t(1) << 32), kUMax);
  EXPECT_EQ(saturating_mul(uint64_t(1) << 31, uint64_t(1) << 32), uint64_t(1) << 63);
  EXPECT_EQ(saturating_mul(0, kUMax), 0u);
  EXPECT_EQ(saturating_add(kUMax - 1, 1), kUMax);
  EXPECT_EQ(saturating_add(kUMax, kUMax), kUMax);
}

TEST(CheckedMath, SquareRefusesNegativesAndPast2Pow62) {
  EXPECT_EQ(checked_square(0), 0);
  EXPECT_EQ(checked_square(3), 9);
  EXPECT_EQ(checked_square(int64_t(1) << 31), int64_t(1) << 62);
  EXPECT_EQ(checked_square((int64_t(1) << 31) + 1), std::nullopt);
  EXPECT_EQ(checked_square(int64_t(1) << 62), std::nullopt);
  EXPECT_EQ(checked_square(kMax), std::nullopt);
  EXPECT_EQ(checked_square(-2), std::nullopt);
  EXPECT_EQ(checked_square(kMin), std::nullopt);
}

TEST(CheckedMath, CeilDivDoesNotOverflowForHugeDivisors) {
  EXPECT_EQ(ceil_div(4, kMax), 1);
  EXPECT_EQ(ceil_div(kMax, kMax), 1);
  EXPECT_EQ(ceil_div(kMax, 2), (kMax / 2) + 1);
  EXPECT_EQ(ceil_div(0, kMax), 0);
  EXPECT_EQ(ceil_div(8, 4), 2);
  EXPECT_EQ(ceil_div(9, 4), 3);
}

TEST(CheckedMath, ProductOfDims) {
  EXPECT_EQ(checked_product({}), 1);
  EXPECT_EQ(checked_product({2, 3, 4}), 24);
  EXPECT_EQ(checked_product({int64_t(1) << 62}), int64_t(1) << 62);
  EXPECT_EQ(checked_product({(int64_t(1) << 62) + 1}), std::nullopt);
  EXPECT_EQ(checked_product({int64_t(1) << 31, int64_t(1) << 31}), int64_t(1) << 62);
  EXPECT_EQ(checked_product({int64_t(1) << 31, int64_t(1) << 31, 2}), std::nullopt);
  EXPECT_EQ(checked_product({kMax, kMax}), std::nullopt);
  EXPECT_EQ(checked_product({2, -1}), std::nullopt);
  EXPECT_EQ(checked_product({0, -1}), std::nullopt);
  EXPECT_EQ(checked_product({kMin}), std::nullopt);
  // A zero dim gives 0, but the other dims are still bounded.
  EXPECT_EQ(checked_product({0, kMax}), std::nullopt);
  EXPECT_EQ(checked_product({0, int64_t(1) << 40, int64_t(1) << 40}), std::nullopt);
  EXPECT_EQ(checked_product({0, int64_t(1) << 40, 5}), 0);
  EXPECT_EQ(checked_numel({0, kMax}), -1);
  EXPECT_EQ(checked_numel({7, 0}), 0);
}

TEST(CheckedMath, StridesOfACheckedShape) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(checked_strides(s), (std::vector<int64_t>{12, 4, 1}));
  const Shape z{5, 0, 4};
  EXPECT_EQ(checked_strides(z), (std::vector<int64_t>{0, 4, 1}));
  EXPECT_EQ(checked_strides(Shape{}), std::vector<int64_t>{});
  const Shape huge{int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(checked_strides(huge), std::nullopt);
  const Shape neg{3, -4};
  EXPECT_EQ(checked_strides(neg), std::nullopt);
}

TEST(CheckedMath, ResultFormsNameWhatAndTheValues) {
  auto m = checked_mul(kMax, 3, "node 'd' (DepthToSpace): blocksize * channels");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "node 'd' (DepthToSpace): blocksize * channels: " +
                                      std::to_string(kMax) + " * 3 overflows int64");
  auto ok = checked_mul(int64_t(6), 7, "x");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 42);
  auto a = checked_add(kMin, -1, "pads");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("pads: " + std::to_string(kMin) + " + -1 overflows"),
            std::string::npos);
  const Shape neg{2, -1};
  auto p = checked_product(neg, "shape");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "shape: dims [2, -1] have a negative entry");
  const Shape big{int64_t(1) << 40, int64_t(1) << 40};
  auto q = checked_product(big, "shape");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().message(),
            "shape: dims [1099511627776, 1099511627776] have more than 2^62 elements");
  EXPECT_EQ(*checked_product(Shape{4, 5}, "shape"), 20);
}

TEST(CheckedMath, TensorBytesCountsTheElementSize) {
  // 2^62 doubles are 2^65 bytes: past a 64-bit byte count.
  auto b = checked_tensor_bytes(kDouble, Shape{int64_t(1) << 62}, "t");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("overflows a 64-bit byte count"), std::string::npos);
  auto n = checked_tensor_bytes(kFloat, Shape{2, -3}, "t");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("negative dimension"), std::string::npos);
  EXPECT_EQ(*checked_tensor_bytes(kFloat, Shape{2, 3}, "t"), 24u);
  EXPECT_EQ(*checked_tensor_bytes(kFloat, Shape{0, int64_t(1) << 40}, "t"), 0u);
}

}  // namespace
}  // namespace onnx_prepack::runtime
