// Vectorised float activations with up to two parameters (Clip, HardSigmoid,
// HardSwish, LeakyRelu, Exp, Sigmoid): large elementwise maps in CNNs such as
// PaddleOCR. One translation unit per ISA (vec_act_avx2.cc, vec_act_avx512.cc,
// vec_act_neon.cc) and a portable twin (vec_act_ref.cc) that evaluates the same
// operation sequence (explicit FMAs, maxps/minps operand order), so all agree
// bit for bit. Exp uses the range reduction and polynomial of vec_math.h (about 2
// ulp), with overflow to +inf above ln(FLT_MAX) and 0 below the normal range.
#pragma once

#include <cstddef>

#include "device/cpu_features.h"

namespace onnx_prepack::kernels::vec {

enum ActOp : int {
  kActClip = 0,         // min(max(x, p0), p1); NaN stays NaN
  kActHardSigmoid = 1,  // max(0, min(1, p0 x + p1))
  kActHardSwish = 2,    // x max(0, min(1, x / 6 + 1 / 2))
  kActLeakyRelu = 3,    // x >= 0 ? x : p0 x
  kActExp = 4,          // e^x
  kActSigmoid = 5,      // 1 / (1 + e^-x), computed from e^-|x|
};

// y[i] = op(x[i]; p0, p1); y may equal x.
using ActFn = void (*)(int op, const float* x, float* y, size_t n, float p0, float p1);

void f32_act_ref(int op, const float* x, float* y, size_t n, float p0, float p1);
void f32_act_avx2(int op, const float* x, float* y, size_t n, float p0, float p1);
void f32_act_avx512(int op, const float* x, float* y, size_t n, float p0, float p1);
void f32_act_neon(int op, const float* x, float* y, size_t n, float p0, float p1);

// Calls body.template operator()<kOp>() with the activation `op` as a
// compile-time constant (each ISA's run<kOp>), or returns false for an op not
// listed above (the variants then call the ref twin).
template <class Body>
inline bool with_act_op(int op, Body&& body) {
  switch (op) {
    case kActClip:
      return body.template operator()<kActClip>(), true;
    case kActHardSigmoid:
      return body.template operator()<kActHardSigmoid>(), true;
    case kActHardSwish:
      return body.template operator()<kActHardSwish>(), true;
    case kActLeakyRelu:
      return body.template operator()<kActLeakyRelu>(), true;
    case kActExp:
      return body.template operator()<kActExp>(), true;
    case kActSigmoid:
      return body.template operator()<kActSigmoid>(), true;
    default:
      return false;
  }
}

// The variant for `level`, and for device::host_isa_level() now.
ActFn act_kernel(device::IsaLevel level);
ActFn host_act_kernel();

}  // namespace onnx_prepack::kernels::vec
