#!/usr/bin/python3
"""Writes the hostile models of issue 11 into a folder (for matrix.py):
huge ConstantOfShape/Expand shapes, deep struct nesting, millions of empty
compiled_tensors, invalid UTF-8 names. Uses Debian's python3-onnx."""
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def nested_struct(levels):
    # StructTypeProto.structure(2) > Structure.field(1) > Field.type(2) > TypeProto.struct_type(20000)
    leaf = field(1, varint(1 << 3 | 0)[:1] + b"\x01")  # TypeProto.tensor_type { elem_type: FLOAT }
    t = field(2, field(1, field(1, b"f") + field(2, leaf)))
    for _ in range(levels - 1):
        t = field(2, field(1, field(1, b"f") + field(2, field(20000, t))))
    return t


def mlp():
    w = h.make_tensor("w", T.FLOAT, [4, 4], [0.5] * 16)
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4])], initializer=[w])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def shape_model(op, dims):
    shp = h.make_tensor("shape", T.INT64, [len(dims)], dims)
    ins = ["x", "shape"] if op == "Expand" else ["shape"]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, [1])] if op == "Expand" else []
    g = h.make_graph([h.make_node(op, ins, ["y"], name="big")], "g", inputs,
                     [h.make_tensor_value_info("y", T.FLOAT, None)], initializer=[shp])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def main(out):
    for op in ("ConstantOfShape", "Expand"):
        for tag, dims in (("2p62", [2**62]), ("2p61", [2**61]), ("2p31sq", [2**31, 2**31]),
                          ("2p40", [2**40])):
            onnx.save(shape_model(op, dims), os.path.join(out, f"{op}_{tag}.onnx"))
    base = mlp().SerializeToString()
    for levels in (25, 60, 100, 400):
        with open(os.path.join(out, f"nested_{levels}.onnx"), "wb") as f:
            f.write(base + field(20000, nested_struct(levels)))
    with open(os.path.join(out, "empty_compiled_2M.onnx"), "wb") as f:
        f.write(base + b"\x92\xe2\x09\x00" * 2000000)
    m = mlp()
    m.graph.node[0].name = "bad#name"
    raw = m.SerializeToString().replace(b"bad#name", b"bad\xff\xc3(\xed\xa0")  # same length
    with open(os.path.join(out, "invalid_utf8_names.onnx"), "wb") as f:
        f.write(raw)
    with open(os.path.join(out, "garbage.onnx"), "wb") as f:
        f.write(os.urandom(4096))


if __name__ == "__main__":
    main(sys.argv[1])
