#!/usr/bin/python3
"""Writes the quantized patterns ONNX Runtime's quantization tools produce, as
models with input "x" float [M, K] and output "y", plus x.npy:

  dynamic   DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W uint8, x_zp, W_zp) -> Cast
            -> Mul(x_scale * W_scale): quantize_dynamic's MatMul
  qdq       DequantizeLinear(W int8 [K, N], per-channel scale/zero point, axis 1) -> MatMul
  blocked   DequantizeLinear(W int8 [K, N], blocked along K, block 32; opset 21) -> MatMul
  qlinear   QuantizeLinear(x) -> QLinearMatMul(W uint8) -> DequantizeLinear
  int4      DequantizeLinear(W int4 [K, N], int4 zero points, blocked along K, block 32;
            opset 21) -> MatMul
  uint4     DequantizeLinear(W uint4 [K, N], uint4 zero points per channel, axis 1) -> MatMul

For qdq, blocked, int4 and uint4 also ref.npy: x @ dequantized W in float64 (ONNX Runtime's CPU
provider fuses weight-only DequantizeLinear + MatMul into an int8 product with A
quantized on the fly, about 5e-3 of the output's magnitude away from it).

usage: make_qdq_models.py OUT_DIR KIND [--M M] [--K K] [--N N] [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def nibbles(a, name, signed):
    """A 4-bit TensorProto (INT4 = 22, UINT4 = 21) built by hand: Debian's onnx
    predates the types. Two elements per byte, the first in the low nibble."""
    flat = (a.reshape(-1).astype(np.int64) & 0x0F).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = TensorProto()
    t.name = name
    t.data_type = 22 if signed else 21
    t.dims.extend(a.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("kind", choices=["dynamic", "qdq", "blocked", "qlinear", "int4", "uint4"])
    ap.add_argument("--M", type=int, default=3)
    ap.add_argument("--K", type=int, default=70)
    ap.add_argument("--N", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    M, K, N = o.M, o.K, o.N
    init = lambda a, n: numpy_helper.from_array(a, n)
    opset = 17
    if o.kind == "dynamic":
        w = rng.integers(0, 256, size=(K, N), dtype=np.uint8)
        inits = [init(w, "W"), init(np.array(131, np.uint8), "W_zp"),
                 init(np.array(0.01, np.float32), "W_scale")]
        nodes = [
            helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
            helper.make_node("MatMulInteger", ["xq", "W", "xz", "W_zp"], ["acc"]),
            helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["xs", "W_scale"], ["s"]),
            helper.make_node("Mul", ["accf", "s"], ["y"]),
        ]
    elif o.kind == "qdq":
        w = rng.integers(-128, 128, size=(K, N), dtype=np.int8)
        inits = [init(w, "W"), init((rng.random(N) * 0.02 + 0.001).astype(np.float32), "W_scale"),
                 init(rng.integers(-5, 5, size=N, dtype=np.int8), "W_zp")]
        nodes = [helper.make_node("DequantizeLinear", ["W", "W_scale", "W_zp"], ["Wf"], axis=1),
                 helper.make_node("MatMul", ["x", "Wf"], ["y"])]
    elif o.kind == "blocked":
        opset = 21
        kb = (K + 31) // 32
        w = rng.integers(-128, 128, size=(K, N), dtype=np.int8)
        inits = [init(w, "W"),
                 init((rng.random((kb, N)) * 0.02 + 0.001).astype(np.float32), "W_scale"),
                 init(rng.integers(-5, 5, size=(kb, N), dtype=np.int8), "W_zp")]
        nodes = [helper.make_node("DequantizeLinear", ["W", "W_scale", "W_zp"], ["Wf"], axis=0,
                                  block_size=32),
                 helper.make_node("MatMul", ["x", "Wf"], ["y"])]
    elif o.kind in ("int4", "uint4"):
        opset = 21
        signed = o.kind == "int4"
        lo, hi = (-8, 8) if signed else (0, 16)
        w = rng.integers(lo, hi, size=(K, N))
        if signed:
            kb = (K + 31) // 32
            s_shape, attrs = (kb, N), dict(axis=0, block_size=32)
        else:
            s_shape, attrs = (N,), dict(axis=1)
        z = rng.integers(lo, hi, size=s_shape)
        inits = [nibbles(w, "W", signed),
                 init((rng.random(s_shape) * 0.02 + 0.001).astype(np.float32), "W_scale"),
                 nibbles(z, "W_zp", signed)]
        nodes = [helper.make_node("DequantizeLinear", ["W", "W_scale", "W_zp"], ["Wf"], **attrs),
                 helper.make_node("MatMul", ["x", "Wf"], ["y"])]
    else:
        w = rng.integers(0, 256, size=(K, N), dtype=np.uint8)
        inits = [init(w, "W"), init(np.array(0.02, np.float32), "x_scale"),
                 init(np.array(128, np.uint8), "x_zp"), init(np.array(0.01, np.float32), "W_scale"),
                 init(np.array(120, np.uint8), "W_zp"), init(np.array(0.5, np.float32), "y_scale"),
                 init(np.array(100, np.uint8), "y_zp")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
                 helper.make_node("QLinearMatMul", ["xq", "x_scale", "x_zp", "W", "W_scale",
                                                    "W_zp", "y_scale", "y_zp"], ["yq"]),
                 helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"])]
    graph = helper.make_graph(nodes, o.kind, [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [M, K])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [M, N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset < 21 else 10
    os.makedirs(o.out, exist_ok=True)
    onnx.save(model, os.path.join(o.out, "model.onnx"))
    x = rng.standard_normal((M, K)).astype(np.float32)
    np.save(os.path.join(o.out, "x.npy"), x)
    if o.kind in ("qdq", "blocked", "int4", "uint4"):  # float64 reference of the ONNX semantics
        if o.kind in ("int4", "uint4"):
            a = {"W": w.astype(np.float64), "W_zp": z.astype(np.float64),
                 "W_scale": numpy_helper.to_array(inits[1]).astype(np.float64)}
        else:
            a = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in inits}
        s, z = a["W_scale"], a["W_zp"]
        if o.kind in ("blocked", "int4"):
            s, z = np.repeat(s, 32, axis=0)[:K], np.repeat(z, 32, axis=0)[:K]
        np.save(os.path.join(o.out, "ref.npy"), x.astype(np.float64) @ ((a["W"] - z) * s))


if __name__ == "__main__":
    main()
