#include "runtime/ops/linalg/gemm.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "device/cpu_features.h"
#include "kernels/f32_gemm/gemm_driver.h"
#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

size_t gemm_panel_width() { return kernels::f32_gemm_native(device::host_isa_level()).nr; }

size_t gemm_pack_floats(size_t k, size_t n, size_t nr) {
  return kernels::packed_b_floats(k, n, nr);
}

static void check(const Status& s) {
  if (!s.ok()) {  // shapes and buffers were checked when the kernel was built
    std::fprintf(stderr, "onnx-prepack: runtime gemm: %s\n", s.message().c_str());
    std::abort();
  }
}

void gemm_f32(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
              kernels::PackSourceLayout layout, float* c, size_t ldc, bool accumulate, float* pack,
              base::ThreadPool* pool, size_t ldb) {
  if (m == 0 || n == 0) return;
  const size_t nr = gemm_panel_width();
  if (k > 0) {
    kernels::F32PackBArgs pa;
    pa.src = b;
    pa.layout = layout;
    pa.type = kernels::PackSourceType::kFloat;
    pa.k = k;
    pa.n = n;
    pa.nr = nr;
    pa.dst = pack;
    pa.ld = ldb;
    // The pack is tiny next to the product unless m is small; split it only when large.
    check(kernels::f32_pack_b(pa, k * n >= (size_t(1) << 16) ? pool : nullptr));
  }
  // The driver writes C; accumulation goes through a temporary (its bias
  // epilogue may not alias C: the tile is stored before the bias is read).
  std::unique_ptr<float[]> tmp;
  if (accumulate) tmp.reset(new float[m * n]);
  kernels::F32GemmArgs g;
  g.m = m;
  g.a = a;
  g.lda = lda;
  g.b = kernels::PackedBView{pack, k, n, nr};
  g.c = accumulate ? tmp.get() : c;
  g.ldc = accumulate ? n : ldc;
  kernels::F32GemmOptions opt;
  opt.pool = pool;
  check(kernels::f32_gemm(g, opt));
  if (accumulate) {
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) c[i * ldc + j] += tmp[i * n + j];
    }
  }
}

void gemm_f32(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b,
              kernels::PackSourceLayout layout, float* c, size_t ldc, bool accumulate,
              Workspace* ws, size_t worker, base::ThreadPool* pool, size_t ldb) {
  if (m == 0 || n == 0) return;
  const size_t floats = std::max<size_t>(1, gemm_pack_floats(k, n, gemm_panel_width()));
  float* pack = ws ? static_cast<float*>(ws->get(worker, floats * sizeof(float))) : nullptr;
  std::unique_ptr<float[]> own;
  if (pack == nullptr) {
    own.reset(new float[floats]);
    pack = own.get();
  }
  gemm_f32(m, n, k, a, lda, b, layout, c, ldc, accumulate, pack, pool, ldb);
}

}  // namespace onnx_prepack::runtime
