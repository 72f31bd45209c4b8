// Det: determinants of the trailing [M, M] matrices, by LU decomposition with
// partial pivoting in double precision.
#include <cmath>
#include <vector>

#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {
namespace {

double determinant(std::vector<double>& a, int64_t m) {
  double det = 1;
  for (int64_t c = 0; c < m; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < m; ++r) {
      if (std::fabs(a[size_t(r * m + c)]) > std::fabs(a[size_t(p * m + c)])) p = r;
    }
    if (a[size_t(p * m + c)] == 0) return 0;
    if (p != c) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[size_t(p * m + j)], a[size_t(c * m + j)]);
      det = -det;
    }
    double pivot = a[size_t(c * m + c)];
    det *= pivot;
    for (int64_t r = c + 1; r < m; ++r) {
      double f = a[size_t(r * m + c)] / pivot;
      for (int64_t j = c + 1; j < m; ++j) a[size_t(r * m + j)] -= f * a[size_t(c * m + j)];
    }
  }
  return det;
}

}  // namespace

BuildResult build_det(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  size_t rank = x->shape.size();
  if (rank < 2 || x->shape[rank - 1] != x->shape[rank - 2])
    return ctx.error("input must be [..., M, M], got " + shape_string(x->shape));
  if (x->dtype != kFloat && x->dtype != kDouble)
    return ctx.error("type " + dtype_name(x->dtype) + " is not supported");
  Shape out(x->shape.begin(), x->shape.end() - 2);
  ctx.set_output(0, x->dtype, out);
  int64_t m = x->shape[rank - 1];
  int64_t count = shape_numel(out);
  bool is_double = x->dtype == kDouble;
  return std::unique_ptr<Kernel>(new FnKernel([=](const KernelIO& io) {
    std::vector<double> a(size_t(m * m));
    for (int64_t b = 0; b < count; ++b) {
      for (int64_t i = 0; i < m * m; ++i) {
        a[size_t(i)] = is_double ? static_cast<const double*>(io.in[0])[b * m * m + i]
                                 : double(static_cast<const float*>(io.in[0])[b * m * m + i]);
      }
      double d = determinant(a, m);
      if (is_double)
        static_cast<double*>(io.out[0])[b] = d;
      else
        static_cast<float*>(io.out[0])[b] = float(d);
    }
  }));
}

}  // namespace onnx_prepack::runtime::tensor_family
