#!/usr/bin/python3
"""Writes a CNN in the QOperator form (quantize_static's) for
tests/runtime/conv_integer_pack_test.cc:

  QuantizeLinear(x) -> QLinearConv -> ... -> DequantizeLinear

with uint8 activations and W initializers (the i8_gemm_b family's i8_conv_w
formats): q0 uint8 3x3 with a scalar zero point and B, q1 int8 1x1 with per-channel scales,
q2 int8 3x3 with per-channel zero points and scales and B, q3 a depthwise uint8 3x3 (not
persisted: the plane path reads W widened), q4 uint8 1x1 (M and C * kernel not multiples of
16 and 4), q5 int8 3x3 of group 3 with per-channel zero points and scales (i8_conv_w_grouped). Also OUT_DIR/x.npy, a float input.

usage: make_qlinear_cnn.py OUT_DIR [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (name, W type, C, M, kernel, group, zero point: "scalar" or "chan", per-channel scale, bias)
LAYERS = [
    ("q0", np.uint8, 3, 18, 3, 1, "scalar", False, True),
    ("q1", np.int8, 18, 20, 1, 1, "scalar", True, False),
    ("q2", np.int8, 20, 7, 3, 1, "chan", True, True),
    ("q3", np.uint8, 7, 7, 3, 7, "scalar", False, True),
    ("q4", np.uint8, 7, 33, 1, 1, "scalar", False, False),
    ("q5", np.int8, 33, 12, 3, 3, "chan", True, True),
]
H, W = 9, 11


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "x_s"),
             numpy_helper.from_array(np.array(128, np.uint8), "x_z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["x_q"], name="quant")]
    cur, cur_s, cur_z = "x_q", "x_s", "x_z"
    for name, t, c, m, k, group, zp, chan_scale, bias in LAYERS:
        info = np.iinfo(t)
        mid = (int(info.min) + int(info.max)) // 2
        inits.append(numpy_helper.from_array(
            rng.integers(info.min, info.max + 1, size=(m, c // group, k, k)).astype(t), name))
        inits.append(numpy_helper.from_array(
            (0.002 + 0.002 * rng.random([m] if chan_scale else [])).astype(np.float32),
            name + "_ws"))
        inits.append(numpy_helper.from_array(
            rng.integers(mid - 8, mid + 8, size=[m] if zp == "chan" else []).astype(t),
            name + "_wz"))
        inits.append(numpy_helper.from_array(np.array(0.05 * np.sqrt(c // group * k * k) * 0.1,
                                                      np.float32), name + "_ys"))
        inits.append(numpy_helper.from_array(np.array(120, np.uint8), name + "_yz"))
        ins = [cur, cur_s, cur_z, name, name + "_ws", name + "_wz", name + "_ys", name + "_yz"]
        if bias:
            inits.append(numpy_helper.from_array(
                rng.integers(-3000, 3000, size=[m]).astype(np.int32), name + "_b"))
            ins.append(name + "_b")
        nodes.append(helper.make_node("QLinearConv", ins, [name + "_y"], name=name + "_conv",
                                      pads=[k // 2] * 4, group=group))
        cur, cur_s, cur_z = name + "_y", name + "_ys", name + "_yz"
    nodes.append(helper.make_node("DequantizeLinear", [cur, cur_s, cur_z], ["y"], name="dequant"))
    g = helper.make_graph(nodes, "qlinear_cnn",
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
