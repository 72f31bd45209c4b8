// NEON (Advanced SIMD) microkernel: up to 8 rows x 12 columns, 24 q-register
// accumulators (8 rows x 3 vectors of 4 floats), per k the A micro-panel in 2
// q-registers and the B panel row in 3, 29 of the 32 vector registers. FMLA by
// element (vfmaq_laneq_f32) rounds once per step, like std::fma in the _ref
// twin, so the two agree bit for bit. See f32_gemm.h for the contract and
// docs/formats.md for the tile choice.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "kernels/f32_gemm/f32_gemm.h"

namespace onnx_prepack::kernels {
namespace {

constexpr size_t kNr = 12;

// Rows 0..7 of the tile, for the macros below (each guarded by I < MR).
#define OP_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

// The full-width tile: c has 12 readable and writable columns per row, and so
// has the bias row when bias_cs == 1. Accumulators stay in registers from the
// C load (or zero) through the chain and the epilogue to the C store: 24 named
// vectors, rI0..rI2 for row I (arrays of vectors indexed in loops stay on the
// stack under GCC, one load and store per accumulator and k step).
//
// Per k, rows 0..3 take A from one q load when MR >= 4 (a[0..3] lie inside the
// tight micro-panel), rows 4..7 from a second when MR == 8, by lane
// (vfmaq_laneq_f32); other rows take one float each (vfmaq_n_f32). Every step
// is a fused multiply-add: one rounding, as std::fma in the _ref twin.
template <int MR>
void tile(size_t kc, const float* a, const float* b, float* c, size_t ldc, uint32_t flags,
          const F32GemmEpilogue* ep) {
  const bool acc_c = (flags & kGemmAccumulate) != 0;
#define OP_INIT(I)                                                               \
  float32x4_t r##I##0 = vdupq_n_f32(0.0f), r##I##1 = r##I##0, r##I##2 = r##I##0; \
  if constexpr (I < MR) {                                                        \
    if (acc_c) {                                                                 \
      r##I##0 = vld1q_f32(c + I * ldc);                                          \
      r##I##1 = vld1q_f32(c + I * ldc + 4);                                      \
      r##I##2 = vld1q_f32(c + I * ldc + 8);                                      \
    }                                                                            \
  }
  OP_ROWS(OP_INIT)
#undef OP_INIT
  const char* pf = static_cast<const char*>(ep->prefetch_l2);
  for (size_t k = 0; k < kc; ++k) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
    __builtin_prefetch(b + 192, 0, 3);
    if (pf != nullptr) {
      __builtin_prefetch(pf, 0, 2);
      pf += 64;
    }
    const float32x4_t a0 = MR >= 4 ? vld1q_f32(a) : vdupq_n_f32(0.0f);
    const float32x4_t a1 = MR == 8 ? vld1q_f32(a + 4) : vdupq_n_f32(0.0f);
#define OP_STEP(I)                                       \
  if constexpr (I < MR) {                                \
    if constexpr (I < 4 && MR >= 4) {                    \
      r##I##0 = vfmaq_laneq_f32(r##I##0, b0, a0, I & 3); \
      r##I##1 = vfmaq_laneq_f32(r##I##1, b1, a0, I & 3); \
      r##I##2 = vfmaq_laneq_f32(r##I##2, b2, a0, I & 3); \
    } else if constexpr (I >= 4 && MR == 8) {            \
      r##I##0 = vfmaq_laneq_f32(r##I##0, b0, a1, I & 3); \
      r##I##1 = vfmaq_laneq_f32(r##I##1, b1, a1, I & 3); \
      r##I##2 = vfmaq_laneq_f32(r##I##2, b2, a1, I & 3); \
    } else {                                             \
      r##I##0 = vfmaq_n_f32(r##I##0, b0, a[I]);          \
      r##I##1 = vfmaq_n_f32(r##I##1, b1, a[I]);          \
      r##I##2 = vfmaq_n_f32(r##I##2, b2, a[I]);          \
    }                                                    \
  }
    OP_ROWS(OP_STEP)
#undef OP_STEP
    a += MR;
    b += kNr;
  }
  if (flags & kGemmFinal) {
    if (ep->alpha != 1.0f) {
      const float32x4_t al = vdupq_n_f32(ep->alpha);
#define OP_SCALE(I)                   \
  if constexpr (I < MR) {             \
    r##I##0 = vmulq_f32(al, r##I##0); \
    r##I##1 = vmulq_f32(al, r##I##1); \
    r##I##2 = vmulq_f32(al, r##I##2); \
  }
      OP_ROWS(OP_SCALE)
#undef OP_SCALE
    }
    if (ep->bias != nullptr) {
      const float32x4_t be = vdupq_n_f32(ep->beta);
      const bool row_vec = ep->bias_cs != 0;
#define OP_BIAS(I)                                                         \
  if constexpr (I < MR) {                                                  \
    const float* brow = ep->bias + ptrdiff_t(I) * ep->bias_rs;             \
    const float32x4_t w0 = row_vec ? vld1q_f32(brow) : vdupq_n_f32(*brow); \
    const float32x4_t w1 = row_vec ? vld1q_f32(brow + 4) : w0;             \
    const float32x4_t w2 = row_vec ? vld1q_f32(brow + 8) : w0;             \
    r##I##0 = vfmaq_f32(r##I##0, be, w0); /* fma(beta, bias, v) */         \
    r##I##1 = vfmaq_f32(r##I##1, be, w1);                                  \
    r##I##2 = vfmaq_f32(r##I##2, be, w2);                                  \
  }
      OP_ROWS(OP_BIAS)
#undef OP_BIAS
    }
  }
#define OP_STORE(I)                      \
  if constexpr (I < MR) {                \
    vst1q_f32(c + I * ldc, r##I##0);     \
    vst1q_f32(c + I * ldc + 4, r##I##1); \
    vst1q_f32(c + I * ldc + 8, r##I##2); \
  }
  OP_ROWS(OP_STORE)
#undef OP_STORE
}

#undef OP_ROWS

template <int MR>
void run(size_t nr, size_t kc, const float* a, const float* b, float* c, size_t ldc, uint32_t flags,
         const F32GemmEpilogue* ep) {
  if (nr == kNr) return tile<MR>(kc, a, b, c, ldc, flags, ep);
  // A column tail: the same tile on a 12-wide copy of C (and of a bias row
  // with a column stride), then the nr columns back. Same operations, same bits.
  float tmp[8 * kNr] = {};
  float btmp[8 * kNr] = {};
  if (flags & kGemmAccumulate) {
    for (int i = 0; i < MR; ++i) std::memcpy(tmp + i * kNr, c + i * ldc, nr * sizeof(float));
  }
  F32GemmEpilogue e = *ep;
  if ((flags & kGemmFinal) && ep->bias != nullptr && ep->bias_cs != 0) {
    for (int i = 0; i < MR; ++i) {
      const float* brow = ep->bias + ptrdiff_t(i) * ep->bias_rs;
      for (size_t j = 0; j < nr; ++j) btmp[i * kNr + j] = brow[ptrdiff_t(j) * ep->bias_cs];
    }
    e.bias = btmp;
    e.bias_rs = ptrdiff_t(kNr);
    e.bias_cs = 1;
  }
  tile<MR>(kc, a, b, tmp, kNr, flags, &e);
  for (int i = 0; i < MR; ++i) std::memcpy(c + i * ldc, tmp + i * kNr, nr * sizeof(float));
}

}  // namespace

void f32_gemm_8x12_neon(size_t mr, size_t nr, size_t kc, const float* a, const float* b, float* c,
                        size_t ldc, uint32_t flags, const F32GemmEpilogue* ep) {
  switch (mr) {
    case 1:
      return run<1>(nr, kc, a, b, c, ldc, flags, ep);
    case 2:
      return run<2>(nr, kc, a, b, c, ldc, flags, ep);
    case 3:
      return run<3>(nr, kc, a, b, c, ldc, flags, ep);
    case 4:
      return run<4>(nr, kc, a, b, c, ldc, flags, ep);
    case 5:
      return run<5>(nr, kc, a, b, c, ldc, flags, ep);
    case 6:
      return run<6>(nr, kc, a, b, c, ldc, flags, ep);
    case 7:
      return run<7>(nr, kc, a, b, c, ldc, flags, ep);
    case 8:
      return run<8>(nr, kc, a, b, c, ldc, flags, ep);
    default:
      return;
  }
}

}  // namespace onnx_prepack::kernels
