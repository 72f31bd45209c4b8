#!/usr/bin/python3
"""Writes a model in onnxruntime.quantization.quantize_dynamic's form for
tests/runtime/matmul_integer_pack_test.cc: layers of

  DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zp[, w_zp]) -> Cast(FLOAT)
  -> Mul(., x_scale * w_scale)

with W_q a 2-D initializer: w0 int8 with a scalar zero point, w1 int8 without,
w2 uint8 with a per-column zero point, w3 uint8 without (K and N not multiples
of 4 and 16). Also OUT_DIR/x.npy, a float input.

usage: make_quantize_dynamic.py OUT_DIR [--seed S] [--m M]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (name, B type, K, N, zero point: "", "scalar" or "col")
LAYERS = [
    ("w0", np.int8, 96, 80, "scalar"),
    ("w1", np.int8, 80, 70, ""),
    ("w2", np.uint8, 70, 50, "col"),
    ("w3", np.uint8, 50, 33, ""),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--m", type=int, default=5)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    nodes, inits = [], []
    cur = "x"
    for name, t, k, n, zp in LAYERS:
        info = np.iinfo(t)
        inits.append(numpy_helper.from_array(
            rng.integers(info.min, info.max + 1, size=(k, n)).astype(t), name))
        inits.append(numpy_helper.from_array(np.array(0.02 + 0.01 * rng.random(), np.float32),
                                             name + "_scale"))
        ins = [cur + "_q", name, cur + "_zp"]
        if zp:
            shape = [] if zp == "scalar" else [n]
            lo, hi = (-8, 8) if t == np.int8 else (120, 136)
            inits.append(numpy_helper.from_array(
                rng.integers(lo, hi, size=shape).astype(t), name + "_zp"))
            ins.append(name + "_zp")
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [cur], [cur + "_q", cur + "_s", cur + "_zp"],
                             name=name + "_dql"),
            helper.make_node("MatMulInteger", ins, [name + "_i32"], name=name + "_mmi"),
            helper.make_node("Cast", [name + "_i32"], [name + "_f"], name=name + "_cast",
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", [cur + "_s", name + "_scale"], [name + "_sc"],
                             name=name + "_scales"),
        ]
        out = "y" if name == LAYERS[-1][0] else name + "_out"
        nodes.append(helper.make_node("Mul", [name + "_f", name + "_sc"], [out], name=name + "_mul"))
        cur = out
    g = helper.make_graph(nodes, "quantize_dynamic",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [o.m, LAYERS[0][2]])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                         [o.m, LAYERS[-1][3]])],
                          initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    os.makedirs(o.out, exist_ok=True)
    onnx.save(model, os.path.join(o.out, "model.onnx"))
    np.save(os.path.join(o.out, "x.npy"),
            rng.standard_normal((o.m, LAYERS[0][2])).astype(np.float32))


if __name__ == "__main__":
    main()
