#!/usr/bin/python3
"""Writes ConvInteger cases for tests/runtime/conv_integer_test.cc: per case a
directory CASE/ with

  const.onnx  ConvInteger(x, W initializer, zero points as initializers): the int8 GEMM path
  input.onnx  the same with W a graph input: the runtime's direct loops
  x.npy, w.npy

and OUT_DIR/cases.txt, one line per case: "NAME ORT" (ORT 1: ONNX Runtime runs it too; it
refuses a per-channel w_zero_point).

usage: make_conv_integer.py OUT_DIR [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {"u8": (np.uint8, TensorProto.UINT8, 0, 255), "s8": (np.int8, TensorProto.INT8, -128, 127)}

# name, x type, w type, x shape [N, C, spatial...], M, kernel, attrs, x_zp, w_zp ("", "scalar",
# "chan"), fill ("random" or "extreme")
CASES = [
    ("u8s8_3x3", "u8", "s8", [2, 5, 9, 11], 7, [3, 3], {"pads": [1, 1, 1, 1]}, True, "scalar", "random"),
    ("u8u8_3x3", "u8", "u8", [2, 16, 13, 10], 33, [3, 3], {"pads": [1, 1, 1, 1]}, True, "scalar", "random"),
    ("u8u8_nozp", "u8", "u8", [1, 8, 12, 12], 16, [3, 3], {}, False, "", "random"),
    ("u8s8_x_zp_only", "u8", "s8", [2, 3, 7, 9], 5, [3, 3], {"pads": [1, 1, 1, 1]}, True, "", "random"),
    ("u8u8_w_zp_only", "u8", "u8", [2, 5, 8, 7], 9, [3, 3], {"pads": [1, 1, 1, 1]}, False, "scalar",
     "random"),
    ("u8s8_1x1", "u8", "s8", [2, 24, 7, 5], 40, [1, 1], {}, True, "scalar", "random"),
    ("u8u8_1x1_s2", "u8", "u8", [2, 17, 9, 8], 19, [1, 1], {"strides": [2, 2]}, True, "scalar", "random"),
    ("u8s8_5x5_s2", "u8", "s8", [2, 6, 15, 14], 12, [5, 5],
     {"strides": [2, 2], "pads": [2, 2, 2, 2]}, True, "scalar", "random"),
    ("u8u8_7x7_s2", "u8", "u8", [1, 3, 23, 21], 16, [7, 7],
     {"strides": [2, 2], "pads": [3, 3, 3, 3]}, True, "scalar", "random"),
    ("u8s8_asym_pads", "u8", "s8", [2, 4, 10, 9], 6, [3, 3], {"pads": [0, 2, 1, 0]}, True, "scalar",
     "random"),
    ("u8u8_dilated", "u8", "u8", [2, 5, 13, 12], 9, [3, 3],
     {"dilations": [2, 3], "pads": [2, 3, 2, 3]}, True, "scalar", "random"),
    ("u8u8_same_upper", "u8", "u8", [2, 6, 10, 11], 8, [3, 3],
     {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, True, "scalar", "random"),
    ("u8s8_same_lower", "u8", "s8", [1, 4, 8, 9], 5, [4, 4], {"auto_pad": "SAME_LOWER"}, True,
     "scalar", "random"),
    ("u8u8_groups", "u8", "u8", [2, 12, 9, 9], 18, [3, 3], {"group": 3, "pads": [1, 1, 1, 1]}, True,
     "scalar", "random"),
    ("u8u8_depthwise", "u8", "u8", [2, 32, 11, 13], 32, [3, 3],
     {"group": 32, "pads": [1, 1, 1, 1], "strides": [2, 2]}, True, "scalar", "random"),
    ("u8s8_depthwise_mult", "u8", "s8", [2, 8, 10, 7], 16, [5, 5], {"group": 8, "pads": [2, 1, 2, 1]},
     True, "scalar", "random"),
    ("s8s8_depthwise_dilated", "s8", "s8", [2, 6, 11, 12], 6, [3, 3],
     {"group": 6, "dilations": [2, 2], "pads": [2, 1, 2, 3], "strides": [1, 2]}, True, "chan",
     "random"),
    ("u8u8_depthwise_3d", "u8", "u8", [2, 4, 5, 6, 7], 8, [3, 3, 3],
     {"group": 4, "pads": [1, 1, 1, 1, 1, 1], "strides": [2, 1, 1]}, True, "scalar", "random"),
    ("u8s8_chan_zp", "u8", "s8", [2, 10, 8, 9], 21, [3, 3], {"pads": [1, 1, 1, 1]}, True, "chan",
     "random"),
    ("u8u8_chan_zp_groups", "u8", "u8", [2, 8, 7, 7], 12, [3, 3], {"group": 4, "pads": [1, 0, 1, 2]},
     True, "chan", "random"),
    ("s8s8_3x3", "s8", "s8", [2, 7, 8, 9], 10, [3, 3], {"pads": [1, 1, 1, 1]}, True, "scalar", "random"),
    ("s8u8_chan", "s8", "u8", [1, 9, 6, 11], 17, [3, 2], {"pads": [1, 0, 1, 1]}, True, "chan", "random"),
    ("u8s8_1d", "u8", "s8", [2, 6, 31], 11, [5], {"pads": [2, 1], "strides": [2]}, True, "scalar",
     "random"),
    ("u8u8_3d", "u8", "u8", [2, 4, 5, 6, 7], 6, [3, 3, 3], {"pads": [1, 1, 1, 1, 0, 1]}, True,
     "scalar", "random"),
    ("u8s8_big", "u8", "s8", [2, 64, 33, 31], 64, [3, 3], {"pads": [1, 1, 1, 1]}, True, "scalar",
     "random"),
    # More output points than one block of im2col rows (2 MiB / K): two blocks.
    ("u8u8_blocks", "u8", "u8", [1, 64, 61, 67], 24, [3, 3], {"pads": [1, 1, 1, 1]}, True, "scalar",
     "random"),
    ("u8s8_extreme", "u8", "s8", [1, 70, 9, 9], 20, [3, 3], {"pads": [1, 1, 1, 1]}, True, "scalar",
     "extreme"),
    ("u8u8_extreme", "u8", "u8", [1, 70, 9, 9], 20, [3, 3], {"pads": [1, 1, 1, 1]}, True, "scalar",
     "extreme"),
]


def values(rng, t, shape, fill, high):
    np_t, _, lo, hi = TYPES[t]
    if fill == "extreme":
        return np.full(shape, hi if high else lo, dtype=np_t)
    return rng.integers(lo, hi + 1, size=shape).astype(np_t)


def write_case(root, case, rng):
    name, xt, wt, xshape, m, kernel, attrs, xzp, wzp, fill = case
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    group = attrs.get("group", 1)
    wshape = [m, xshape[1] // group] + kernel
    x = values(rng, xt, xshape, fill, True)
    w = values(rng, wt, wshape, fill, False)
    inits, names = [], ["x", "w"]
    if xzp or wzp:
        if xzp:
            inits.append(numpy_helper.from_array(values(rng, xt, [], fill, False), "x_zp"))
        names.append("x_zp" if xzp else "")
    if wzp:
        inits.append(numpy_helper.from_array(values(rng, wt, [m] if wzp == "chan" else [], fill, True),
                                             "w_zp"))
        names.append("w_zp")
    x_in = helper.make_tensor_value_info("x", TYPES[xt][1], xshape)
    w_in = helper.make_tensor_value_info("w", TYPES[wt][1], wshape)
    y = helper.make_tensor_value_info("y", TensorProto.INT32, None)
    node = helper.make_node("ConvInteger", names, ["y"], name="ci", **attrs)
    for file, w_const in (("const.onnx", True), ("input.onnx", False)):
        extra = [numpy_helper.from_array(w, "w")] if w_const else []
        g = helper.make_graph([node], name, [x_in] if w_const else [x_in, w_in], [y],
                              initializer=inits + extra)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.save(model, os.path.join(d, file))
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "w.npy"), w)
    return "%s %d" % (name, 0 if wzp == "chan" else 1)


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
