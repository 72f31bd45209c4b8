// The Einsum kernel (runtime/ops/tensor/einsum_kernel.h) through a session:
// what its arithmetic promises beyond agreeing with ONNX Runtime
// (tensor_ops_vs_ort): results independent of the thread count, and integers
// wrapping as in their own width whatever the order of the pairwise products.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>

#include "base/thread_pool.h"
#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

// y = Einsum(x0, x1, ...) over graph inputs of `dtype` and `shapes`, run on
// `pool`.
Result<HostTensor> einsum(const std::string& eq, int32_t dtype, const std::vector<Shape>& shapes,
                          const std::vector<const void*>& data, base::ThreadPool* pool) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_op_type("Einsum");
  n->set_name("e");
  auto* a = n->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(eq);
  std::map<std::string, Session::Feed> plan_feeds;
  std::map<std::string, Tensor> run_feeds;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    for (int64_t d : shapes[i]) tt->mutable_shape()->add_dim()->set_dim_value(d);
    n->add_input(name);
    plan_feeds[name] = Session::Feed{dtype, shapes[i], nullptr};
    run_feeds[name] = Tensor{dtype, shapes[i], const_cast<void*>(data[i])};
  }
  n->add_output("y");
  g->add_output()->set_name("y");
  auto fm = std::shared_ptr<const format::Model>(format::Model::from_proto(m, "."));
  SessionOptions o;
  o.pool = pool;
  OP_ASSIGN_OR_RETURN(auto s, Session::create(fm, o));
  OP_RETURN_IF_ERROR(testing::plan_status(s->plan(plan_feeds)));
  OP_ASSIGN_OR_RETURN(auto out, s->run(run_feeds));
  return std::move(out[0]);
}

TEST(EinsumKernel, BatchedProductsDoNotDependOnTheThreadCount) {
  // Attention scores: 16 heads of 64 x 48 x 32, one pool task per head with
  // several threads, all on the calling thread with one.
  const Shape q = {2, 8, 64, 32}, k = {2, 8, 48, 32};
  std::vector<float> xq(size_t(2 * 8 * 64 * 32)), xk(size_t(2 * 8 * 48 * 32));
  for (size_t i = 0; i < xq.size(); ++i) xq[i] = float(int64_t(i * 37 % 101) - 50) / 17.0f;
  for (size_t i = 0; i < xk.size(); ++i) xk[i] = float(int64_t(i * 53 % 89) - 44) / 13.0f;
  base::ThreadPool one(1), three(3);
  auto a = einsum("bhqd,bhkd->bhqk", kFloat, {q, k}, {xq.data(), xk.data()}, &one);
  auto b = einsum("bhqd,bhkd->bhqk", kFloat, {q, k}, {xq.data(), xk.data()}, &three);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(a->shape(), (Shape{2, 8, 64, 48}));
  EXPECT_EQ(std::memcmp(a->data(), b->data(), a->nbytes()), 0);
  // And the product is the one a reference computes (to float rounding).
  const float* y = a->as<float>();
  double worst = 0;
  for (int64_t bh = 0; bh < 16; ++bh) {
    for (int64_t i = 0; i < 64; ++i) {
      for (int64_t j = 0; j < 48; ++j) {
        double want = 0;
        for (int64_t d = 0; d < 32; ++d)
          want += double(xq[size_t((bh * 64 + i) * 32 + d)]) * xk[size_t((bh * 48 + j) * 32 + d)];
        worst = std::max(worst, std::abs(double(y[(bh * 64 + i) * 48 + j]) - want));
      }
    }
  }
  EXPECT_LT(worst, 1e-3);
}

TEST(EinsumKernel, IntegersWrapAsInTheirOwnWidth) {
  // i,i,i-> over int32 [2]: 65536^3 + 2^31 wraps to 2^31 = INT32_MIN in int32,
  // whichever pair is multiplied first.
  const std::vector<int32_t> x = {65536, 1 << 10}, y = {65536, 1 << 10}, z = {65536, 1 << 11};
  base::ThreadPool one(1);
  auto r = einsum("i,i,i->", kInt32, {{2}, {2}, {2}}, {x.data(), y.data(), z.data()}, &one);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->as<int32_t>()[0], std::numeric_limits<int32_t>::min());
  // uint32 the same way: (2^16)^2 wraps to 0, plus 3.
  const std::vector<uint32_t> u = {65536, 3}, v = {65536, 1};
  auto w = einsum("i,i->", kUint32, {{2}, {2}}, {u.data(), v.data()}, &one);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->as<uint32_t>()[0], 3u);
}

}  // namespace
}  // namespace onnx_prepack::runtime
