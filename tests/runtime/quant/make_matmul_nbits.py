#!/usr/bin/python3
"""Writes a MatMulNBits model (com.microsoft, as ONNX Runtime defines it) and an
input for it: random codes, scales, zero points, optional bias.

usage: make_matmul_nbits.py OUT_DIR --K K --N N --M M [--bits 4|8] [--block B]
         [--zp none|packed|float] [--bias] [--level L] [--layers L] [--seed S]
Writes OUT_DIR/model.onnx and OUT_DIR/a.npy (input "a", [M, K] float32).
With --layers > 1 the model is a chain of square layers (K == N).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weight(rng, prefix, K, N, bits, block, zp_mode, with_bias):
    kb = (K + block - 1) // block
    blob = block * bits // 8
    b = rng.integers(0, 256, size=(N, kb, blob), dtype=np.uint8)
    scales = (rng.random(N * kb, dtype=np.float32) * 0.02 + 0.001).astype(np.float32)
    inits = [numpy_helper.from_array(b, prefix + "_B"),
             numpy_helper.from_array(scales, prefix + "_scales")]
    names = [prefix + "_B", prefix + "_scales"]
    if zp_mode == "packed":
        row = (kb * bits + 7) // 8
        zp = rng.integers(0, 256, size=(N * row,), dtype=np.uint8)
        inits.append(numpy_helper.from_array(zp, prefix + "_zp"))
        names.append(prefix + "_zp")
    elif zp_mode == "float":
        zp = (rng.random(N * kb, dtype=np.float32) * (2 ** bits - 1)).astype(np.float32)
        inits.append(numpy_helper.from_array(zp, prefix + "_zp"))
        names.append(prefix + "_zp")
    else:
        names.append("")
    if with_bias:
        names += ["", prefix + "_bias"]
        inits.append(numpy_helper.from_array(rng.standard_normal(N).astype(np.float32),
                                             prefix + "_bias"))
    while names and names[-1] == "":
        names.pop()
    return names, inits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--K", type=int, required=True)
    ap.add_argument("--N", type=int, required=True)
    ap.add_argument("--M", type=int, default=1)
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--block", type=int, default=32)
    ap.add_argument("--zp", default="packed", choices=["none", "packed", "float"])
    ap.add_argument("--bias", action="store_true")
    ap.add_argument("--level", type=int, default=0)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    nodes, inits = [], []
    x = "a"
    for layer in range(o.layers):
        names, w = weight(rng, "w%d" % layer, o.K, o.N, o.bits, o.block, o.zp, o.bias)
        y = "y" if layer == o.layers - 1 else "h%d" % layer
        nodes.append(helper.make_node(
            "MatMulNBits", [x] + names, [y], name="mm%d" % layer, domain="com.microsoft",
            K=o.K, N=o.N, bits=o.bits, block_size=o.block, accuracy_level=o.level))
        inits += w
        x = y
    graph = helper.make_graph(
        nodes, "matmul_nbits",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [o.M, o.K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [o.M, o.N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                     helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    os.makedirs(o.out, exist_ok=True)
    onnx.save(model, os.path.join(o.out, "model.onnx"))
    np.save(os.path.join(o.out, "a.npy"), rng.standard_normal((o.M, o.K)).astype(np.float32))


if __name__ == "__main__":
    main()
