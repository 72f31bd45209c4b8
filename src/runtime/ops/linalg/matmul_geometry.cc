#include "runtime/ops/linalg/matmul_geometry.h"

#include "runtime/ops/dispatch.h"

namespace onnx_prepack::runtime {

Result<MatMulGeometry> matmul_geometry(const BuildContext& ctx, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return ctx.error("inputs must have rank >= 1");
  Shape as = a, bs = b;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  MatMulGeometry g;
  g.m = as[as.size() - 2];
  g.k = as.back();
  g.n = bs.back();
  if (bs[bs.size() - 2] != g.k) {
    return ctx.error("inner dimensions differ: A " + shape_string(a) + ", B " + shape_string(b));
  }
  g.a_batch.assign(as.begin(), as.end() - 2);
  g.b_batch.assign(bs.begin(), bs.end() - 2);
  auto br = broadcast_shapes(g.a_batch, g.b_batch);
  if (!br.ok()) return ctx.error("batch dimensions: " + br.status().message());
  g.batch = *br;
  g.out = g.batch;
  if (!a_vec) g.out.push_back(g.m);
  if (!b_vec) g.out.push_back(g.n);
  g.batches = shape_numel(g.batch);  // dims-lint: ok (broadcast_shapes checked it)
  return g;
}

void MatMulGeometry::batch_offsets(std::vector<int64_t>& a_off, std::vector<int64_t>& b_off) const {
  const auto sa = broadcast_strides(a_batch, batch), sb = broadcast_strides(b_batch, batch);
  a_off.assign(size_t(batches), 0);
  b_off.assign(size_t(batches), 0);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rem = i, oa = 0, ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    a_off[size_t(i)] = oa * m * k;
    b_off[size_t(i)] = ob * k * n;
  }
}

}  // namespace onnx_prepack::runtime
