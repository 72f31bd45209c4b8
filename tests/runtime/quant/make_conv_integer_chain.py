#!/usr/bin/python3
"""Writes quantize_dynamic-form Conv chains for tests/runtime/conv_integer_fusion_test.cc:
per case a directory CASE/ with

  model.onnx   DynamicQuantizeLinear(x) -> ConvInteger(x_q, W initializer, x_zp[, w_zp])
               -> Cast(FLOAT) -> Mul(., scale) [-> Add(bias)] [-> Relu]
  tapped.onnx  the same with the Cast's output also a graph output (no fusion)
  x.npy

and OUT_DIR/cases.txt, one line per case: "NAME FUSED TAPPED", the nodes the session fuses
in model.onnx and in tapped.onnx: the ConvInteger's chain as one step, or, where it stays
apart, the float steps after the Cast that chain as one pointwise step (pointwise_fusion.h;
a Relu joins as Clip(0, +inf)).

usage: make_conv_integer_chain.py OUT_DIR [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name, W type, x shape, M, kernel, attrs, w_zp ("", "scalar", "chan"), scale shape (None: the
# Mul of x_scale and a scalar w_scale), bias shape (None: no Add), bias first, relu, fused nodes
# (model.onnx, tapped.onnx)
CASES = [
    ("u8_scalar_bias_relu", np.uint8, [1, 6, 9, 10], 12, [3, 3], {"pads": [1, 1, 1, 1]},
     "scalar", None, [12, 1, 1], False, True, (5, 3)),
    ("u8_chan_scale_bias_first", np.uint8, [2, 5, 7, 8], 9, [3, 3], {"pads": [0, 1, 1, 0]}, "",
     [1, 9, 1, 1], [9, 1, 1], True, False, (4, 0)),
    ("s8_groups_chan_zp", np.int8, [1, 8, 9, 9], 12, [3, 3], {"group": 2, "pads": [1, 1, 1, 1]},
     "chan", None, [1, 12, 1, 1], False, True, (5, 3)),
    ("s8_1d_scale_only", np.int8, [2, 7, 33], 20, [5], {"pads": [2, 2], "strides": [2]},
     "scalar", [20, 1], None, False, False, (3, 0)),
    ("u8_relu_no_bias", np.uint8, [1, 16, 12, 12], 33, [1, 1], {}, "", None, None, False, True, (4, 2)),
    # The plane path (one input channel per group) takes no epilogue: the chain stays apart.
    ("u8_depthwise", np.uint8, [1, 8, 9, 9], 8, [3, 3], {"group": 8, "pads": [1, 1, 1, 1]},
     "scalar", None, [8, 1, 1], False, True, (3, 3)),
    # A bias [8] broadcast along the width, not the channels: only Cast and Mul join.
    ("u8_bias_on_width", np.uint8, [1, 4, 8, 8], 8, [1, 1], {}, "scalar", None, [8], False,
     False, (3, 0)),
]


def write_case(root, case, rng):
    name, wt, xshape, m, kernel, attrs, wzp, scale_shape, bias_shape, bias_first, relu, fused = case
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    group = attrs.get("group", 1)
    info = np.iinfo(wt)
    w = rng.integers(info.min, info.max + 1, size=[m, xshape[1] // group] + kernel).astype(wt)
    inits = [numpy_helper.from_array(w, "w")]
    ins = ["x_q", "w", "x_zp"]
    if wzp:
        mid = (int(info.min) + int(info.max)) // 2
        inits.append(numpy_helper.from_array(
            rng.integers(mid - 8, mid + 8, size=[m] if wzp == "chan" else []).astype(wt), "w_zp"))
        ins.append("w_zp")
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["x_q", "x_s", "x_zp"]),
             helper.make_node("ConvInteger", ins, ["c"], **attrs),
             helper.make_node("Cast", ["c"], ["f"], to=TensorProto.FLOAT)]
    if scale_shape is None:
        inits.append(numpy_helper.from_array(np.array(0.003, np.float32), "w_s"))
        nodes.append(helper.make_node("Mul", ["x_s", "w_s"], ["scale"]))
    else:
        inits.append(numpy_helper.from_array(
            (0.002 + 0.002 * rng.random(scale_shape)).astype(np.float32), "scale"))
    out = "m"
    nodes.append(helper.make_node("Mul", ["f", "scale"], [out]))
    if bias_shape is not None:
        inits.append(numpy_helper.from_array(
            rng.standard_normal(bias_shape).astype(np.float32), "bias"))
        nodes.append(helper.make_node("Add", ["bias", out] if bias_first else [out, "bias"], ["a"]))
        out = "a"
    if relu:
        nodes.append(helper.make_node("Relu", [out], ["r"]))
        out = "r"
    nodes.append(helper.make_node("Identity", [out], ["y"]))
    x_in = helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)
    for file, extra in (("model.onnx", []), ("tapped.onnx", ["f"])):
        outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ["y"] + extra]
        g = helper.make_graph(nodes, name, [x_in], outs, initializer=inits)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.save(model, os.path.join(d, file))
    np.save(os.path.join(d, "x.npy"), rng.standard_normal(xshape).astype(np.float32))
    return "%s %d %d" % (name, fused[0], fused[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    lines = [write_case(o.out, c, rng) for c in CASES]
    with open(os.path.join(o.out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
