// The Einsum planner (runtime/ops/tensor/einsum_plan.h): which steps it
// chooses, in which order, what it copies and what it counts. The values it
// computes are checked against ONNX Runtime by tensor_ops_vs_ort and against
// references in hostile_ops_test.cc.
#include "runtime/ops/tensor/einsum_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace onnx_prepack::runtime::tensor_family {
namespace {

// A problem from subscripts (one letter per id, 'a' = 0) with contiguous
// operands; a repeated letter adds its strides (a diagonal).
EinsumProblem problem(const std::vector<std::string>& terms, const std::string& out,
                      const std::vector<int64_t>& dims) {
  EinsumProblem p;
  p.dims = dims;
  for (const auto& t : terms) {
    EinsumOperand op;
    int64_t stride = 1;
    for (size_t j = t.size(); j-- > 0;) {
      const int id = t[j] - 'a';
      bool found = false;
      for (size_t q = 0; q < op.ids.size(); ++q) {
        if (op.ids[q] == id) {
          op.strides[q] += stride;
          found = true;
        }
      }
      if (!found) {
        op.ids.insert(op.ids.begin(), id);
        op.strides.insert(op.strides.begin(), stride);
      }
      stride *= dims[size_t(id)];
    }
    p.operands.push_back(op);
  }
  for (char c : out) p.out_ids.push_back(c - 'a');
  return p;
}

TEST(EinsumPlan, AChainIsContractedAlongItsLinks) {
  // ab,bc,cd->ad with a..d = 2, 3, 4, 5: ab x bc (result ac, 8) is the
  // smallest pair; ab x cd would be the outer product abcd (120).
  const EinsumPlan plan = plan_einsum(problem({"ab", "bc", "cd"}, "ad", {2, 3, 4, 5}), true);
  ASSERT_EQ(plan.steps.size(), 2u);
  const EinsumStep& first = plan.steps[0];
  EXPECT_EQ(first.kind, EinsumStep::kContract);
  EXPECT_EQ(first.left.input, 0);
  EXPECT_EQ(first.right.input, 1);
  EXPECT_EQ(first.batch, 1);
  EXPECT_EQ(first.m, 2);
  EXPECT_EQ(first.k, 3);
  EXPECT_EQ(first.n, 4);
  // Both operands are already [M, K] and [K, N]: nothing copied.
  EXPECT_EQ(first.a_copy, -1);
  EXPECT_EQ(first.b_copy, -1);
  ASSERT_GE(first.dst, 0);
  const EinsumStep& second = plan.steps[1];
  EXPECT_EQ(second.left.buffer, first.dst);
  EXPECT_EQ(second.right.input, 2);
  EXPECT_EQ(second.k, 4);
  EXPECT_EQ(second.dst, -1);  // a, d: already the output's order
  // The intermediate lives from the first step to the second.
  EXPECT_EQ(plan.buffer_last_use[size_t(first.dst)], 1);
  EXPECT_EQ(plan.peak_scratch_elems, 8u);
  // Tiny products (fewer than 2048 multiply-adds) run as loops and count.
  EXPECT_FALSE(first.gemm);
  EXPECT_EQ(plan.loop_steps, uint64_t(2 * 3 * 4 + 2 * 4 * 5));
}

TEST(EinsumPlan, DisjointOperandsAreSummedBeforeTheirProduct) {
  // abcd,efgh-> at 16 each: two sums of 65536 and one scalar product, not a
  // loop of 2^32.
  const EinsumPlan plan =
      plan_einsum(problem({"abcd", "efgh"}, "", std::vector<int64_t>(8, 16)), true);
  ASSERT_EQ(plan.steps.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    const EinsumStep& s = plan.steps[size_t(i)];
    EXPECT_EQ(s.kind, EinsumStep::kReduce);
    EXPECT_EQ(s.src.input, i);
    EXPECT_TRUE(s.kept.dims.empty());
    EXPECT_EQ(s.summed.dims, (std::vector<int64_t>{16, 16, 16, 16}));
  }
  const EinsumStep& product = plan.steps[2];
  EXPECT_EQ(product.kind, EinsumStep::kContract);
  EXPECT_EQ(product.batch * product.m * product.n * product.k, 1);
  EXPECT_EQ(product.dst, -1);
  EXPECT_EQ(plan.loop_steps, uint64_t(2 * 65536 + 1));
}

TEST(EinsumPlan, AttentionScoresRunOnTheGemmWithoutCopies) {
  // bhqd,bhkd->bhqk: batch bh, M q, N k, K d; the right operand is a
  // contiguous [batch, N, K], read transposed.
  const EinsumPlan plan = plan_einsum(problem({"abcd", "abed"}, "abce", {2, 4, 64, 32, 48}), true);
  ASSERT_EQ(plan.steps.size(), 1u);
  const EinsumStep& s = plan.steps[0];
  EXPECT_EQ(s.batch, 8);
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(s.n, 48);
  EXPECT_EQ(s.k, 32);
  EXPECT_TRUE(s.gemm);
  EXPECT_TRUE(s.b_nk);
  EXPECT_EQ(s.a_copy, -1);
  EXPECT_EQ(s.b_copy, -1);
  EXPECT_EQ(s.dst, -1);
  EXPECT_TRUE(plan.buffer_shapes.empty());
  EXPECT_EQ(plan.loop_steps, 0u);  // GEMM products are not counted
  // The same product for int64 runs as a loop, counted.
  const EinsumPlan ints = plan_einsum(problem({"abcd", "abed"}, "abce", {2, 4, 64, 32, 48}), false);
  EXPECT_FALSE(ints.steps[0].gemm);
  EXPECT_EQ(ints.loop_steps, uint64_t(8 * 64 * 48 * 32));
}

TEST(EinsumPlan, AnOperandInAnotherOrderIsCopiedOnce) {
  // ba,bc->ac: the left operand is [K, M]; it is copied to [M, K].
  const EinsumPlan plan = plan_einsum(problem({"ba", "bc"}, "ac", {3, 5, 7}), true);
  ASSERT_EQ(plan.steps.size(), 1u);
  const EinsumStep& s = plan.steps[0];
  ASSERT_GE(s.a_copy, 0);
  EXPECT_EQ(plan.buffer_shapes[size_t(s.a_copy)], (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(s.a_walk.strides, (std::vector<int64_t>{1, 3}));  // a then b, read from [b, a]
  EXPECT_EQ(s.b_copy, -1);
  EXPECT_EQ(plan.buffer_last_use[size_t(s.a_copy)], 0);
  EXPECT_EQ(plan.step_frees[0], (std::vector<int>{s.a_copy}));
}

TEST(EinsumPlan, OneOperandIsOneReductionIntoTheOutput) {
  // iij->ji: the diagonal (strides 3 * 4 + 4 per i), permuted, no scratch.
  const EinsumPlan plan = plan_einsum(problem({"iij"}, "ji", {0, 0, 0, 0, 0, 0, 0, 0, 3, 4}), true);
  ASSERT_EQ(plan.steps.size(), 1u);
  const EinsumStep& s = plan.steps[0];
  EXPECT_EQ(s.kind, EinsumStep::kReduce);
  EXPECT_EQ(s.dst, -1);
  EXPECT_EQ(s.kept.dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(s.kept.strides, (std::vector<int64_t>{1, 16}));
  EXPECT_TRUE(s.summed.dims.empty());
  EXPECT_TRUE(plan.buffer_shapes.empty());
}

TEST(EinsumPlan, ManyOperandsPlanIntoOneStepEach) {
  // 36 operands with one subscript each: 36 sums and 35 scalar products.
  std::vector<std::string> terms;
  for (int i = 0; i < 26; ++i) terms.push_back(std::string(1, char('a' + i)));
  const EinsumPlan small = plan_einsum(problem(terms, "", std::vector<int64_t>(26, 2)), true);
  EXPECT_EQ(small.steps.size(), size_t(26 + 25));
  EXPECT_EQ(small.loop_steps, uint64_t(26 * 2 + 25));
  // Past 64 live operands only the first one's partners are compared: a
  // thousand operands over two subscripts still give one product each, and
  // each subscript's operands are joined before the two meet.
  std::vector<std::string> wide(1000);
  for (size_t i = 0; i < wide.size(); ++i) wide[i] = i % 2 ? "a" : "ab";
  const EinsumPlan big = plan_einsum(problem(wide, "b", {2, 3}), true);
  EXPECT_EQ(big.steps.size(), wide.size() - 1);
  for (const auto& s : big.steps) {
    EXPECT_EQ(s.kind, EinsumStep::kContract);
    EXPECT_LE(s.batch * s.m * s.n, 6);  // never more than the subscripts a and b
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime::tensor_family
