// Shared by integer_conv.cc (ConvInteger and QLinearConv: geometry, the direct
// loops, the builders) and integer_conv_packed.cc (the kernels for a constant
// W on the int8 GEMM and the depthwise plane path).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime {

// An int8 (t == kInt8) or uint8 element as int32.
inline int32_t load_int8_operand(int32_t t, const void* p, int64_t i) {
  return t == kInt8 ? int32_t(static_cast<const int8_t*>(p)[i])
                    : int32_t(static_cast<const uint8_t*>(p)[i]);
}

struct IntConvGeom {
  int64_t batch = 0, c = 0, m = 0, group = 1;
  Shape in, kernel, out, stride, dilation, pad_begin;
  // in and kernel are dims of X and W; out is the output, checked by the
  // session before a kernel runs.
  int64_t in_size() const { return shape_numel(in); }          // dims-lint: ok (X's dims)
  int64_t out_size() const { return shape_numel(out); }        // dims-lint: ok (output)
  int64_t kernel_size() const { return shape_numel(kernel); }  // dims-lint: ok (W's dims)
};

// Where a kernel finds its operands among the node's inputs, and what it
// writes: the int32 sums (ConvInteger: x 0, w 1, x_zero_point 2,
// w_zero_point 3) or, with `requant`, QLinearConv's 8-bit y (x 0, x_scale 1,
// x_zero_point 2, w 3, w_scale 4, w_zero_point 5, y_scale 6, y_zero_point 7,
// B 8).
struct IntConvOperands {
  int32_t xt = kUint8, wt = kUint8;
  int w = 1;
  int xz = 2, wz = 3;  // -1: absent (zero)
  int64_t wzn = 0;     // w_zero_point's count: 0 (absent), 1 or M
  bool requant = false;
  int xs = -1, ws = -1, ys = -1, yz = -1, bias = -1;  // bias -1: no B
  int64_t wsn = 1;                                    // w_scale's count: 1 or M
  int32_t yt = kInt32;
};

// QLinearConv's multiplier of output channel m, the loops' expression (and
// ONNX Runtime's): x_scale * w_scale[m] / y_scale in float.
inline float int_conv_multiplier(const IntConvOperands& op, const KernelIO& io, int64_t m) {
  const float xs = *static_cast<const float*>(io.in[size_t(op.xs)]);
  const float* ws = static_cast<const float*>(io.in[size_t(op.ws)]);
  const float ys = *static_cast<const float*>(io.in[size_t(op.ys)]);
  return xs * ws[op.wsn == 1 ? 0 : m] / ys;
}

// The kernel for a constant W with non-empty dims (integer_conv_packed.cc): the
// GEMM, or the plane path with one input channel per group; null when W is
// not constant or a dim is empty (the loops then).
Result<std::unique_ptr<Kernel>> packed_int_conv(const BuildContext& ctx, const IntConvGeom& g,
                                                const IntConvOperands& op);

}  // namespace onnx_prepack::runtime
