#!/usr/bin/python3
"""Writes MatMulInteger cases for tests/runtime/matmul_integer_test.cc: per case a
directory CASE/ with

  const.onnx  MatMulInteger(a, B initializer [K, N], zero points as initializers): the
              packed int8 GEMM path
  input.onnx  the same with B a graph input: the runtime's loops
  a.npy, b.npy

and OUT_DIR/cases.txt, one line per case: "NAME ORT" (ORT 1: ONNX Runtime runs it too; it
refuses a per-row a_zero_point).

int8 B is drawn from [-64, 63] ("random") for the cases ONNX Runtime checks: on hosts
without VNNI its uint8 x int8 kernel adds pairs of products in saturating int16
(vpmaddubsw), so full-range operands make it inexact there (docs/decisions.md,
"ONNX Runtime's saturating uint8 x int8 products"); within that range no pair can
saturate and its result is the exact one on every host. "full" draws the whole int8
range and is checked against the loops only.

usage: make_matmul_integer.py OUT_DIR [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {"u8": (np.uint8, TensorProto.UINT8, 0, 255), "s8": (np.int8, TensorProto.INT8, -128, 127)}

# name, A type, B type, A shape, N, a_zero_point ("", "scalar", "row"), b_zero_point
# ("", "scalar", "col"), fill ("random", "extreme", "edge" or "full")
CASES = [
    ("u8s8_scalar", "u8", "s8", [4, 70], 21, "scalar", "scalar", "random"),
    ("u8u8_col", "u8", "u8", [9, 64], 33, "scalar", "col", "random"),
    ("s8s8_none", "s8", "s8", [17, 65], 16, "", "", "random"),
    ("s8s8_col", "s8", "s8", [3, 255], 17, "scalar", "col", "random"),
    ("s8u8_scalar", "s8", "u8", [15, 16], 63, "scalar", "scalar", "random"),
    ("u8s8_3d", "u8", "s8", [2, 5, 33], 17, "scalar", "", "random"),
    ("u8s8_4d_col", "u8", "s8", [2, 3, 7, 40], 65, "scalar", "col", "random"),
    ("u8s8_odd", "u8", "s8", [37, 300], 65, "", "col", "random"),
    ("u8s8_vector_a", "u8", "s8", [16], 3, "scalar", "scalar", "random"),
    ("u8s8_k1", "u8", "s8", [5, 1], 7, "scalar", "col", "random"),
    ("u8s8_extreme", "u8", "s8", [6, 300], 20, "scalar", "scalar", "extreme"),
    ("u8s8_edge", "u8", "s8", [6, 300], 20, "scalar", "scalar", "edge"),
    ("s8u8_extreme", "s8", "u8", [6, 300], 20, "scalar", "col", "extreme"),
    ("u8s8_row_zp", "u8", "s8", [3, 4, 19], 23, "row", "col", "random"),
    ("u8s8_full", "u8", "s8", [7, 301], 37, "scalar", "col", "full"),
    ("s8s8_full", "s8", "s8", [5, 130], 19, "scalar", "", "full"),
]


def values(rng, t, shape, fill, high):
    np_t, _, lo, hi = TYPES[t]
    if fill == "extreme":
        return np.full(shape, hi if high else lo, dtype=np_t)
    if fill == "edge":  # the extremes onnxruntime is exact for on every host: B at -64
        return np.full(shape, hi if high else (-64 if t == "s8" else lo), dtype=np_t)
    if fill == "random" and t == "s8" and not high:
        lo, hi = -64, 63  # B: no saturating pair in ONNX Runtime's non-VNNI kernel
    return rng.integers(lo, hi + 1, size=shape).astype(np_t)


def write_case(root, case, rng):
    name, at, bt, ashape, n, azp, bzp, fill = case
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    k = ashape[-1]
    a = values(rng, at, ashape, fill, True)
    b = values(rng, bt, [k, n], fill, False)
    inits, names = [], ["a", "b"]
    if azp or bzp:
        m = ashape[-2] if len(ashape) > 1 else 1
        za = values(rng, at, [m] if azp == "row" else [], fill, False)
        if azp:
            inits.append(numpy_helper.from_array(za, "a_zp"))
        names.append("a_zp" if azp else "")
    if bzp:
        zb = values(rng, bt, [n] if bzp == "col" else [], fill, True)
        inits.append(numpy_helper.from_array(zb, "b_zp"))
        names.append("b_zp")
    a_in = helper.make_tensor_value_info("a", TYPES[at][1], ashape)
    b_in = helper.make_tensor_value_info("b", TYPES[bt][1], [k, n])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, None)
    node = helper.make_node("MatMulInteger", names, ["y"], name="mmi")
    for file, b_const in (("const.onnx", True), ("input.onnx", False)):
        extra = [numpy_helper.from_array(b, "b")] if b_const else []
        g = helper.make_graph([node], name, [a_in] if b_const else [a_in, b_in], [y],
                              initializer=inits + extra)
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        onnx.save(model, os.path.join(d, file))
    np.save(os.path.join(d, "a.npy"), a)
    np.save(os.path.join(d, "b.npy"), b)
    # int8 B at -128 with A at 255 saturates onnxruntime's non-VNNI pair sums: loops only.
    ort = not (azp == "row" or fill == "full" or (fill == "extreme" and bt == "s8"))
    return "%s %d" % (name, int(ort))


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
