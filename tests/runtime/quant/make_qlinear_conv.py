#!/usr/bin/python3
"""Writes QLinearConv cases for tests/runtime/qlinear_conv_test.cc: per case a
directory CASE/ with

  const.onnx  QLinearConv(x, scales and zero points, W and B initializers): the packed path
  input.onnx  the same with W a graph input: the runtime's direct loops
  x.npy, w.npy

and OUT_DIR/cases.txt, one line per case: "NAME ORT" (ORT 1: ONNX Runtime runs it too,
the type pairs its CPU provider has: x uint8 with w uint8 or int8 and y uint8, x int8
with w int8 and y int8, and a w_zero_point whose values are all equal), plus
OUT_DIR/ort_manifest.json for tests/runtime/ort_batch.js (one node process for all).

ONNX Runtime's x uint8 / w int8 kernel sums pairs of products u8 * s8 in saturating int16
(vpmaddubsw: docs/decisions.md, "QLinearConv requantization"); the ONNX definition and the
runtime sum exactly. So the ORT cases of that pair draw w from [-64, 63], where no pair
(at most 2 * 255 * 64 = 32640) can saturate, and u8s8u8_full_range (full-range int8 w, where
ORT's sums differ) is left to the loops.

The multipliers x_scale * w_scale / y_scale put typical sums near +-60 after
requantization (so most outputs are neither saturated nor zero); "small" cases have
exact ties (k + 0.5, multiplier 0.5), "extreme" ones saturate.

usage: make_qlinear_conv.py OUT_DIR [--seed S]
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {"u8": (np.uint8, TensorProto.UINT8, 0, 255), "s8": (np.int8, TensorProto.INT8, -128, 127)}

# name, x / w / y types, x shape [N, C, spatial...], M, kernel, attrs, w_zp ("scalar", "chan":
# per channel, different values, "chan_same": per channel, all equal), w_scale ("scalar" or
# "chan"), bias, fill ("random", "small" or "extreme")
CASES = [
    ("u8s8u8_3x3", "u8", "s8", "u8", [2, 5, 9, 11], 7, [3, 3], {"pads": [1, 1, 1, 1]}, "scalar",
     "scalar", True, "random"),
    ("u8u8u8_3x3_chan", "u8", "u8", "u8", [2, 16, 13, 10], 33, [3, 3], {"pads": [1, 1, 1, 1]},
     "chan_same", "chan", True, "random"),
    ("s8s8s8_3x3", "s8", "s8", "s8", [2, 7, 8, 9], 10, [3, 3], {"pads": [1, 1, 1, 1]}, "scalar",
     "chan", True, "random"),
    ("s8s8s8_nobias", "s8", "s8", "s8", [1, 8, 12, 12], 16, [3, 3], {}, "scalar", "scalar", False,
     "random"),
    ("u8s8u8_1x1", "u8", "s8", "u8", [2, 24, 7, 5], 40, [1, 1], {}, "scalar", "chan", True,
     "random"),
    ("u8u8u8_1x1_s2", "u8", "u8", "u8", [2, 17, 9, 8], 19, [1, 1], {"strides": [2, 2]}, "scalar",
     "scalar", False, "random"),
    ("u8s8u8_5x5_s2", "u8", "s8", "u8", [2, 6, 15, 14], 12, [5, 5],
     {"strides": [2, 2], "pads": [2, 2, 2, 2]}, "scalar", "chan", True, "random"),
    ("u8u8u8_7x7_s2", "u8", "u8", "u8", [1, 3, 23, 21], 16, [7, 7],
     {"strides": [2, 2], "pads": [3, 3, 3, 3]}, "scalar", "scalar", True, "random"),
    ("s8s8s8_asym_pads", "s8", "s8", "s8", [2, 4, 10, 9], 6, [3, 3], {"pads": [0, 2, 1, 0]},
     "scalar", "scalar", True, "random"),
    ("u8u8u8_dilated", "u8", "u8", "u8", [2, 5, 13, 12], 9, [3, 3],
     {"dilations": [2, 3], "pads": [2, 3, 2, 3]}, "scalar", "chan", True, "random"),
    ("u8s8u8_same_upper", "u8", "s8", "u8", [2, 6, 10, 11], 8, [3, 3],
     {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, "scalar", "scalar", True, "random"),
    ("s8s8s8_same_lower", "s8", "s8", "s8", [1, 4, 8, 9], 5, [4, 4], {"auto_pad": "SAME_LOWER"},
     "scalar", "chan", False, "random"),
    ("u8u8u8_groups", "u8", "u8", "u8", [2, 12, 9, 9], 18, [3, 3],
     {"group": 3, "pads": [1, 1, 1, 1]}, "scalar", "chan", True, "random"),
    ("s8s8s8_groups_chan", "s8", "s8", "s8", [2, 8, 7, 7], 12, [3, 3],
     {"group": 4, "pads": [1, 0, 1, 2]}, "chan_same", "chan", True, "random"),
    ("u8u8u8_depthwise", "u8", "u8", "u8", [2, 32, 11, 13], 32, [3, 3],
     {"group": 32, "pads": [1, 1, 1, 1], "strides": [2, 2]}, "scalar", "chan", True, "random"),
    ("u8s8u8_depthwise_mult", "u8", "s8", "u8", [2, 8, 10, 7], 16, [5, 5],
     {"group": 8, "pads": [2, 1, 2, 1]}, "scalar", "scalar", True, "random"),
    ("s8s8s8_depthwise_dilated", "s8", "s8", "s8", [2, 6, 11, 12], 6, [3, 3],
     {"group": 6, "dilations": [2, 2], "pads": [2, 1, 2, 3], "strides": [1, 2]}, "chan_same",
     "chan", True, "random"),
    ("u8u8u8_depthwise_3d", "u8", "u8", "u8", [2, 4, 5, 6, 7], 8, [3, 3, 3],
     {"group": 4, "pads": [1, 1, 1, 1, 1, 1], "strides": [2, 1, 1]}, "scalar", "scalar", False,
     "random"),
    # A row longer than the plane path's chunk of 256 points.
    ("u8s8u8_depthwise_1d_long", "u8", "s8", "u8", [1, 3, 700], 3, [5], {"group": 3,
     "pads": [2, 2]}, "scalar", "chan", True, "random"),
    ("u8s8u8_1d", "u8", "s8", "u8", [2, 6, 31], 11, [5], {"pads": [2, 1], "strides": [2]},
     "scalar", "scalar", True, "random"),
    ("s8s8s8_3d", "s8", "s8", "s8", [2, 4, 5, 6, 7], 6, [3, 3, 3], {"pads": [1, 1, 1, 1, 0, 1]},
     "scalar", "chan", True, "random"),
    ("u8s8u8_big", "u8", "s8", "u8", [2, 64, 33, 31], 64, [3, 3], {"pads": [1, 1, 1, 1]},
     "scalar", "chan", True, "random"),
    # More output points than one block of im2col rows (2 MiB / K): two blocks.
    ("u8u8u8_blocks", "u8", "u8", "u8", [1, 64, 61, 67], 24, [3, 3], {"pads": [1, 1, 1, 1]},
     "scalar", "scalar", True, "random"),
    ("u8u8u8_ties", "u8", "u8", "u8", [2, 4, 6, 7], 20, [1, 1], {}, "scalar", "scalar", True,
     "small"),
    ("s8s8s8_ties_chan", "s8", "s8", "s8", [2, 4, 6, 7], 20, [1, 1], {}, "chan_same", "scalar",
     False, "small"),
    ("u8s8u8_extreme", "u8", "s8", "u8", [1, 70, 9, 9], 20, [3, 3], {"pads": [1, 1, 1, 1]},
     "scalar", "scalar", True, "extreme"),
    ("s8s8s8_extreme", "s8", "s8", "s8", [1, 70, 9, 9], 20, [3, 3], {"pads": [1, 1, 1, 1]},
     "scalar", "chan", False, "extreme"),
    # Not in ONNX Runtime: full-range int8 w with uint8 x (its pairs saturate), per-channel
    # zero points that differ, y of another type than x,
    # int8 x with uint8 w.
    ("u8s8u8_full_range", "u8", "s8", "u8", [2, 24, 7, 5], 40, [3, 3], {"pads": [1, 1, 1, 1]},
     "scalar", "chan", True, "random"),
    ("u8s8u8_chan_zp", "u8", "s8", "u8", [2, 10, 8, 9], 21, [3, 3], {"pads": [1, 1, 1, 1]},
     "chan", "chan", True, "random"),
    ("s8u8s8_chan_zp_dw", "s8", "u8", "s8", [2, 6, 9, 9], 12, [3, 3],
     {"group": 6, "pads": [1, 1, 1, 1]}, "chan", "chan", True, "random"),
    ("u8u8s8_3x3", "u8", "u8", "s8", [2, 5, 8, 7], 9, [3, 3], {"pads": [1, 1, 1, 1]}, "scalar",
     "scalar", True, "random"),
    ("s8s8u8_groups", "s8", "s8", "u8", [2, 12, 9, 9], 18, [3, 3], {"group": 3}, "scalar", "chan",
     True, "random"),
]


def ort_runs(name, xt, wt, yt, wzp):
    types = (xt, wt, yt) in {("u8", "u8", "u8"), ("u8", "s8", "u8"), ("s8", "s8", "s8")}
    return types and wzp != "chan" and name != "u8s8u8_full_range"


def write_case(root, case, rng):
    name, xt, wt, yt, xshape, m, kernel, attrs, wzp, wscale, bias, fill = case
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    group = attrs.get("group", 1)
    wshape = [m, xshape[1] // group] + kernel
    (xnp, xtp, xlo, xhi), (wnp, wtp, wlo, whi) = TYPES[xt], TYPES[wt]
    ort = ort_runs(name, xt, wt, yt, wzp)
    if ort and (xt, wt) == ("u8", "s8"):
        wlo, whi = -64, 63  # no int16 pair of ORT's u8 x s8 kernel saturates
    ynp, ytp, ylo, yhi = TYPES[yt]
    # Zero points near the middle of the range keep the sums centred.
    xmid, wmid, ymid = (xlo + xhi) // 2, (wlo + whi) // 2, (ylo + yhi) // 2
    xz = int(rng.integers(xmid - 20, xmid + 21)) if fill != "extreme" else xlo
    if wzp == "chan":
        wz = rng.integers(wmid - 20, wmid + 21, size=[m])
    else:
        wz = np.full([m] if wzp == "chan_same" else [], int(rng.integers(wmid - 20, wmid + 21)))
    if fill == "random":
        x = rng.integers(xlo, xhi + 1, size=xshape)
        w = rng.integers(wlo, whi + 1, size=wshape)
    elif fill == "small":
        x = np.clip(xz + rng.integers(-3, 4, size=xshape), xlo, xhi)
        w = np.clip(wz.reshape([-1] + [1] * (len(wshape) - 1)) + rng.integers(-3, 4, size=wshape),
                    wlo, whi)
    else:
        x = np.full(xshape, xhi)
        w = np.full(wshape, wlo)
        wz = np.full(wz.shape, whi)
    x, w, wz = x.astype(xnp), w.astype(wnp), wz.astype(wnp)
    taps = wshape[1] * int(np.prod(kernel))
    xs = np.float32(0.02 + 0.01 * rng.random())
    if fill == "small":
        xs, ys = np.float32(0.25), np.float32(0.125)
        ws = np.full([m] if wscale == "chan" else [], 0.25, np.float32)  # multiplier 0.5
    else:
        ws = (0.002 + 0.004 * rng.random([m] if wscale == "chan" else [])).astype(np.float32)
        mult = 60.0 / (5400.0 * np.sqrt(taps))
        ys = np.float32(xs * float(np.mean(ws)) / mult)
    yz = np.array(int(rng.integers(ymid - 40, ymid + 41)) if fill != "extreme" else ymid, ynp)
    b_range = 50 if fill == "small" else int(3000 * np.sqrt(taps))
    b = rng.integers(-b_range, b_range + 1, size=[m]).astype(np.int32)
    inits = [
        numpy_helper.from_array(np.array(xs, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(xz, xnp), "x_zp"),
        numpy_helper.from_array(np.asarray(ws, np.float32), "w_scale"),
        numpy_helper.from_array(wz, "w_zp"),
        numpy_helper.from_array(np.array(ys, np.float32), "y_scale"),
        numpy_helper.from_array(yz, "y_zp"),
    ]
    names = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"]
    if bias:
        inits.append(numpy_helper.from_array(b, "B"))
        names.append("B")
    x_in = helper.make_tensor_value_info("x", xtp, xshape)
    w_in = helper.make_tensor_value_info("w", wtp, wshape)
    y = helper.make_tensor_value_info("y", ytp, None)
    node = helper.make_node("QLinearConv", names, ["y"], name="qlc", **attrs)
    for file, w_const in (("const.onnx", True), ("input.onnx", False)):
        extra = [numpy_helper.from_array(w, "w")] if w_const else []
        g = helper.make_graph([node], name, [x_in] if w_const else [x_in, w_in], [y],
                              initializer=inits + extra)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.save(model, os.path.join(d, file))
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "w.npy"), w)
    return name, ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    written = [write_case(o.out, c, rng) for c in CASES]
    with open(os.path.join(o.out, "cases.txt"), "w") as f:
        f.write("".join("%s %d\n" % (n, int(ort)) for n, ort in written))
    manifest = [{"model": os.path.join(o.out, n, "const.onnx"),
                 "out_dir": os.path.join(o.out, n, "ort"),
                 "inputs": {"x": os.path.join(o.out, n, "x.npy")}} for n, ort in written if ort]
    with open(os.path.join(o.out, "ort_manifest.json"), "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main()
