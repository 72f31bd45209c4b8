#!/usr/bin/python3
"""One small model per pack family and layout (for matrix.py's compiled-entry
mutations): every model's weights are packed by `compile`, so a mutation of
its compiled entries exercises that family's entry checks. Each model has one
graph input `x` (float). Uses Debian's python3-onnx and numpy.

  family_models.py OUT_DIR   writes OUT_DIR/<name>.onnx and prints the names

The families are src/pack's registry (pack_family.cc): gemm_b (MatMul kn,
Gemm transB nk), conv_filter (blocked Conv, depthwise Conv, ConvTranspose),
q_gemm_b (MatMulNBits 4- and 8-bit) and i8_gemm_b (MatMulInteger, int8 and
uint8 B; ConvInteger group 1, int8 and uint8 W). FLOAT16 weights have no pack (docs/decisions.md), so there is no
FLOAT16 model here.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

RNG = np.random.default_rng(11)


def weight(name, shape, dtype=np.float32):
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(dtype), name)


def model(nodes, x_shape, y_shape, inits, domains=(), elem=T.FLOAT):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", elem, x_shape)],
                     [h.make_tensor_value_info("y", elem, y_shape)], inits)
    ops = [h.make_opsetid("", 17)] + [h.make_opsetid(d, 1) for d in domains]
    m = h.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def nbits(bits):
    k, n, block = 64, 24, 32
    blocks = k // block
    blob = block * bits // 8
    b = numpy_helper.from_array(RNG.integers(0, 256, (n, blocks, blob), dtype=np.uint8), "qb")
    scales = numpy_helper.from_array((RNG.random(n * blocks) * 0.1 + 0.01).astype(np.float32),
                                     "qs")
    zp_bytes = n * ((blocks * bits + 7) // 8)
    zp = numpy_helper.from_array(RNG.integers(0, 256, (zp_bytes,), dtype=np.uint8), "qz")
    node = h.make_node("MatMulNBits", ["x", "qb", "qs", "qz"], ["y"], name=f"nbits{bits}",
                       domain="com.microsoft", K=k, N=n, bits=bits, block_size=block)
    return model([node], [2, k], [2, n], [b, scales, zp], domains=["com.microsoft"])


def matmul_integer(b_type):
    """quantize_dynamic's form: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul."""
    k, n = 48, 40
    info = np.iinfo(b_type)
    b = numpy_helper.from_array(RNG.integers(info.min, info.max + 1, (k, n)).astype(b_type), "w")
    s = numpy_helper.from_array(np.array(0.05, np.float32), "ws")
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
             h.make_node("MatMulInteger", ["xq", "w", "xz"], ["i"], name="mmi"),
             h.make_node("Cast", ["i"], ["f"], to=T.FLOAT),
             h.make_node("Mul", ["xs", "ws"], ["sc"]),
             h.make_node("Mul", ["f", "sc"], ["y"])]
    return model(nodes, [4, k], [4, n], [b, s])


def conv_integer(w_type):
    """quantize_dynamic's CNN form: DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul."""
    info = np.iinfo(w_type)
    w = numpy_helper.from_array(RNG.integers(info.min, info.max + 1, (18, 3, 3, 3)).astype(w_type),
                                "w")
    s = numpy_helper.from_array(np.array(0.05, np.float32), "ws")
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dql"),
             h.make_node("ConvInteger", ["xq", "w", "xz"], ["i"], name="convi", pads=[1, 1, 1, 1]),
             h.make_node("Cast", ["i"], ["f"], to=T.FLOAT),
             h.make_node("Mul", ["xs", "ws"], ["sc"]),
             h.make_node("Mul", ["f", "sc"], ["y"])]
    return model(nodes, [1, 3, 10, 10], [1, 18, 10, 10], [w, s])


# name -> (model, the prefix of the format its entries must have, or a glob with '*')
def family_models():
    return {
        "gemm_b_kn": (model([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [4, 48],
                            [4, 40], [weight("w", [48, 40])]), "f32_gemm_b_"),
        "gemm_b_nk": (model([h.make_node("Gemm", ["x", "w"], ["y"], name="gemm", transB=1)],
                            [4, 48], [4, 40], [weight("w", [40, 48])]), "f32_gemm_b_"),
        "conv": (model([h.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])],
                       [1, 3, 10, 10], [1, 16, 10, 10], [weight("w", [16, 3, 3, 3])]),
                 "f32_conv_filter_"),
        "conv_depthwise": (model([h.make_node("Conv", ["x", "w"], ["y"], name="dw", group=8,
                                              pads=[1, 1, 1, 1])],
                                 [1, 8, 10, 10], [1, 8, 10, 10], [weight("w", [8, 1, 3, 3])]),
                           "f32_conv_dw_"),
        "conv_transpose": (model([h.make_node("ConvTranspose", ["x", "w"], ["y"], name="deconv",
                                              strides=[2, 2])],
                                 [1, 8, 5, 5], [1, 4, 10, 10], [weight("w", [8, 4, 2, 2])]),
                           "f32_deconv_filter_"),
        "matmul_nbits4": (nbits(4), "q4_gemm_b_"),
        "matmul_nbits8": (nbits(8), "q8_gemm_b_"),
        "matmul_integer_s8": (matmul_integer(np.int8), "i8_gemm_b_"),
        "matmul_integer_u8": (matmul_integer(np.uint8), "u8_gemm_b_"),
        "conv_integer_s8": (conv_integer(np.int8), "i8_conv_w_"),
        "conv_integer_u8": (conv_integer(np.uint8), "u8_conv_w_"),
        # FLOAT16 weights: the float panels of the widened values, in the _f16 formats.
        "gemm_b_kn_f16": (model([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [4, 48],
                                [4, 40], [weight("w", [48, 40], np.float16)], elem=T.FLOAT16),
                          "f32_gemm_b_*_f16"),
        "conv_f16": (model([h.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])],
                           [1, 3, 10, 10], [1, 16, 10, 10], [weight("w", [16, 3, 3, 3], np.float16)],
                           elem=T.FLOAT16), "f32_conv_filter_*_f16"),
    }


def main(out):
    for name, (m, _) in family_models().items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
        print(name)


if __name__ == "__main__":
    main(sys.argv[1])
