// float16 elementwise Add/Sub/Mul/Div on the 16-bit values themselves, for the
// half adapter's fast path (runtime/half_adapter.cc): a portable twin
// (vec_half_binary_ref.cc), the oracle, and an aarch64 FEAT_FP16 variant
// (vec_half_binary_fp16.cc: FADD/FSUB/FMUL/FDIV on eight half lanes).
//
// The ref computes what the adapter does for these operators without the fast
// path: widen each input to float (exact; a signalling NaN comes out quiet, as
// f16_to_f32_ref and the hardware conversions do), the float operation, narrow
// to float16 with round to nearest even (float_to_half). The fp16 variant gives
// the same bits: float has 24 >= 2 * 11 + 2 significand bits, so rounding the
// exact result to float and then to half equals rounding it to half once for
// + - * / (overflow to inf and half subnormals included); it quiets signalling
// NaN inputs first, so that a NaN result is the first NaN operand's, quieted,
// under the same rule the float operation follows (FPCR.DN and FZ16 are clear on
// Linux), and an invalid operation gives the default NaN 0x7e00 either way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/vec_math/vec_math.h"

namespace onnx_prepack::kernels::vec {

// o[i] = a[i * sa] op b[i * sb] on float16 bit patterns; op a vec::BinaryOp,
// sa and sb 0 or 1.
using HalfBinaryFn = void (*)(int op, const uint16_t* a, size_t sa, const uint16_t* b, size_t sb,
                              uint16_t* o, size_t n);

void f16_binary_ref(int op, const uint16_t* a, size_t sa, const uint16_t* b, size_t sb, uint16_t* o,
                    size_t n);
// aarch64 only (an _fp16 unit, cmake/isa.cmake); callers need host fp16.
void f16_binary_fp16(int op, const uint16_t* a, size_t sa, const uint16_t* b, size_t sb,
                     uint16_t* o, size_t n);

// The FEAT_FP16 kernel when the build is aarch64, the host has fp16 and the ISA
// level (device::host_isa_level(), capped by ONNX_PREPACK_MAX_ISA: a neon or ref
// cap drops fp16) is neon or above; nullptr otherwise (x86-64 and other
// machines always), where the adapter keeps widening to float.
HalfBinaryFn half_binary_select();

}  // namespace onnx_prepack::kernels::vec
