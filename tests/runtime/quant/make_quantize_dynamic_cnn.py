#!/usr/bin/python3
"""Writes a CNN in onnxruntime.quantization.quantize_dynamic's form for
tests/runtime/conv_integer_pack_test.cc: layers of

  DynamicQuantizeLinear(x) -> ConvInteger(x_q, W_q, x_zp[, w_zp]) -> Cast(FLOAT)
  -> Mul(., x_scale * w_scale)

with W_q an initializer (the i8_gemm_b family's i8_conv_w formats, i8_conv_w_grouped for
group > 1): w0 uint8 3x3 with a scalar zero point, w1 int8 1x1 without, w2 int8 3x3 with a
per-channel zero point, w3 uint8 1x1 without (M and C * kernel not multiples of 16 and 4),
w4 uint8 3x3 of group 3 with a scalar zero point. Also OUT_DIR/x.npy, a float input.

usage: make_quantize_dynamic_cnn.py OUT_DIR [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (name, W type, C, M, kernel, zero point: "", "scalar" or "chan", group)
LAYERS = [
    ("w0", np.uint8, 3, 18, 3, "scalar", 1),
    ("w1", np.int8, 18, 20, 1, "", 1),
    ("w2", np.int8, 20, 7, 3, "chan", 1),
    ("w3", np.uint8, 7, 33, 1, "", 1),
    ("w4", np.uint8, 33, 18, 3, "scalar", 3),
]
H, W = 9, 11


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    nodes, inits = [], []
    cur = "x"
    for name, t, c, m, k, zp, group in LAYERS:
        info = np.iinfo(t)
        inits.append(numpy_helper.from_array(
            rng.integers(info.min, info.max + 1, size=(m, c // group, k, k)).astype(t), name))
        inits.append(numpy_helper.from_array(np.array(0.02 + 0.01 * rng.random(), np.float32),
                                             name + "_scale"))
        ins = [cur + "_q", name, cur + "_zp"]
        if zp:
            shape = [] if zp == "scalar" else [m]
            lo, hi = (-8, 8) if t == np.int8 else (120, 136)
            inits.append(numpy_helper.from_array(
                rng.integers(lo, hi, size=shape).astype(t), name + "_zp"))
            ins.append(name + "_zp")
        pads = [k // 2] * 4
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [cur], [cur + "_q", cur + "_s", cur + "_zp"],
                             name=name + "_dql"),
            helper.make_node("ConvInteger", ins, [name + "_i32"], name=name + "_conv", pads=pads,
                             group=group),
            helper.make_node("Cast", [name + "_i32"], [name + "_f"], name=name + "_cast",
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", [cur + "_s", name + "_scale"], [name + "_sc"],
                             name=name + "_scales"),
        ]
        out = "y" if name == LAYERS[-1][0] else name + "_out"
        nodes.append(helper.make_node("Mul", [name + "_f", name + "_sc"], [out], name=name + "_mul"))
        cur = out
    g = helper.make_graph(nodes, "quantize_dynamic_cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [2, LAYERS[0][2], H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                         [2, LAYERS[-1][3], H, W])],
                          initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    os.makedirs(o.out, exist_ok=True)
    onnx.save(model, os.path.join(o.out, "model.onnx"))
    np.save(os.path.join(o.out, "x.npy"),
            rng.standard_normal((2, LAYERS[0][2], H, W)).astype(np.float32))


if __name__ == "__main__":
    main()
