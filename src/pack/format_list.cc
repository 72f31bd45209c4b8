#include "pack/format_list.h"

#include <string>

#include "kernels/f32_gemm/gemm_driver.h"

namespace onnx_prepack::pack {
namespace {

// The aarch64 NEON formats last: their level is unordered against the x86-64
// ones, so a host of either machine only ever accepts its own.
constexpr const GemmBFormat* kOrder[] = {
    &kF32GemmBN32[0], &kF32GemmBN32[1], &kF32GemmBN32[2], &kF32GemmBN32[3],
    &kF32GemmBN16[0], &kF32GemmBN16[1], &kF32GemmBN16[2], &kF32GemmBN16[3],
    &kF32GemmBN12[0], &kF32GemmBN12[1], &kF32GemmBN12[2], &kF32GemmBN12[3],
};

}  // namespace

std::span<const GemmBFormat* const> gemm_b_formats() { return kOrder; }

const GemmBFormat* find_gemm_b_format(std::string_view name) {
  for (const GemmBFormat* f : kOrder) {
    if (f->name == name) return f;
  }
  return nullptr;
}

std::vector<const GemmBFormat*> gemm_b_formats_for(kernels::PackSourceLayout layout,
                                                   int32_t source_type, device::IsaLevel level) {
  std::vector<const GemmBFormat*> out;
  for (const GemmBFormat* f : kOrder) {
    if (f->layout == layout && f->source_type == source_type && f->isa <= level) out.push_back(f);
  }
  return out;
}

const GemmBFormat* gemm_b_runtime_format(kernels::PackSourceLayout layout, int32_t source_type,
                                         device::IsaLevel level) {
  // The panel width of the kernel the runtime runs at `level` (one mapping,
  // kernels::f32_gemm_native); at ref that is the 16-column format.
  const uint32_t nr = kernels::f32_gemm_native(level).nr;
  for (const GemmBFormat* f : kOrder) {
    if (f->layout == layout && f->source_type == source_type && f->nr == nr) return f;
  }
  return nullptr;
}

Status run_gemm(const PackedGemmB& b, const GemmCall& call, base::ThreadPool* pool) {
  if (b.format == nullptr) return invalid_argument("gemm: packed b has no format");
  const uint64_t need = gemm_b_payload_bytes(*b.format, b.k, b.n);
  if (b.payload.size() != need) {
    return invalid_argument("gemm: packed b of format '" + std::string(b.format->name) + "' is " +
                            std::to_string(b.payload.size()) + " bytes, k " + std::to_string(b.k) +
                            " x n " + std::to_string(b.n) + " needs " + std::to_string(need));
  }
  if (reinterpret_cast<uintptr_t>(b.payload.data()) % alignof(float) != 0) {
    return invalid_argument("gemm: packed b of format '" + std::string(b.format->name) +
                            "' is not 4-byte aligned");
  }
  kernels::F32GemmArgs g;
  g.m = call.m;
  g.a = call.a;
  g.lda = call.lda;
  g.b = {reinterpret_cast<const float*>(b.payload.data()), b.k, b.n, b.format->nr};
  g.c = call.c;
  g.ldc = call.ldc;
  g.alpha = call.alpha;
  g.beta = call.beta;
  g.bias = call.bias;
  g.bias_rs = call.bias_rs;
  g.bias_cs = call.bias_cs;
  kernels::F32GemmOptions o;
  o.pool = pool;
  return kernels::f32_gemm(g, o);
}

}  // namespace onnx_prepack::pack
