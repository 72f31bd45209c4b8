#!/usr/bin/python3
"""Writes quantize_dynamic-form cases for tests/runtime/dynamic_quant_fusion_test.cc:

  x float -> DynamicQuantizeLinear -> MatMulInteger(x_u8, W int8 initializer, x_zp [, W_zp])
    -> Cast(float) -> Mul(x_scale * W_scale) [-> Add(bias)] [-> Relu]

per case a directory CASE/ with model.onnx (output y), tapped.onnx (the same with the Cast's
output also a graph output, which must keep the chain apart) and x.npy; OUT_DIR/cases.txt
lists "NAME FUSED_NODES" per case (the nodes the fusion must take: MatMulInteger, Cast, Mul
and the Add / Relu the case has).

usage: make_dynamic_ffn.py OUT_DIR [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name, x shape, N, W zero point ("", "scalar", "col"), W scale ("scalar", "col"),
# tail ("mul", "add", "add_relu", "relu"), operand order ("" or "swapped": Mul(scale, f),
# Add(bias, m))
CASES = [
    ("plain_2d", [16, 64], 48, "scalar", "scalar", "mul", ""),
    ("no_wzp", [7, 33], 17, "", "scalar", "add", ""),
    ("col_scale", [9, 40], 35, "scalar", "col", "add_relu", ""),
    ("col_zp_col_scale", [5, 70], 33, "col", "col", "add_relu", "swapped"),
    ("odd_3d", [2, 5, 33], 19, "scalar", "scalar", "add_relu", ""),
    ("swapped_3d", [3, 4, 65], 31, "", "col", "add", "swapped"),
    ("relu_only", [11, 20], 16, "scalar", "scalar", "relu", ""),
    ("wide", [4, 128], 300, "scalar", "scalar", "add_relu", ""),
]


def write_case(root, case, rng):
    name, xshape, n, wzp, wscale, tail, order = case
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    k = xshape[-1]
    # W from [-64, 63]: onnxruntime's uint8 x int8 kernel on hosts without VNNI adds pairs
    # of products in saturating int16, inexact at full range (docs/decisions.md); within
    # this range it is exact everywhere. The fused/unfused checks do not depend on it.
    w = rng.integers(-64, 64, size=(k, n)).astype(np.int8)
    inits = [numpy_helper.from_array(w, "w")]
    mmi_in = ["xq", "w", "xz"]
    if wzp:
        zp = rng.integers(-5, 6, size=[n] if wzp == "col" else []).astype(np.int8)
        inits.append(numpy_helper.from_array(zp, "wzp"))
        mmi_in.append("wzp")
    ws = (rng.random([n] if wscale == "col" else []) * 0.02 + 0.001).astype(np.float32)
    inits.append(numpy_helper.from_array(np.asarray(ws, np.float32), "ws"))
    bias = (rng.standard_normal(n) * 0.5).astype(np.float32)
    inits.append(numpy_helper.from_array(bias, "bias"))
    swapped = order == "swapped"
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", mmi_in, ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "ws"], ["scale"]),
        helper.make_node("Mul", ["scale", "accf"] if swapped else ["accf", "scale"], ["m"]),
    ]
    last, fused = "m", 3
    if tail in ("add", "add_relu"):
        nodes.append(helper.make_node("Add", ["bias", last] if swapped else [last, "bias"],
                                      ["biased"]))
        last, fused = "biased", fused + 1
    if tail in ("relu", "add_relu"):
        nodes.append(helper.make_node("Relu", [last], ["act"]))
        last, fused = "act", fused + 1
    nodes.append(helper.make_node("Identity", [last], ["y"]))
    x_in = helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    tap = helper.make_tensor_value_info("accf", TensorProto.FLOAT, None)
    for file, outs in (("model.onnx", [y]), ("tapped.onnx", [y, tap])):
        g = helper.make_graph(nodes, name, [x_in], outs, initializer=inits)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.save(model, os.path.join(d, file))
    x = (rng.standard_normal(xshape) * 2.0).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    return fused


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=19)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    with open(os.path.join(a.out, "cases.txt"), "w") as f:
        for case in CASES:
            f.write("%s %d\n" % (case[0], write_case(a.out, case, rng)))


if __name__ == "__main__":
    main()
