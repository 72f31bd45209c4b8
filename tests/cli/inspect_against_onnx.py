"""Compares `onnx-prepack inspect --json` with what Debian's python3-onnx
computes independently from the same model: node counts by op type,
initializer count and bytes, Constant-node tensor count and bytes.

usage: inspect_against_onnx.py MODEL INSPECT_JSON
"""
import collections
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def tensor_bytes(t):
    if t.data_location == onnx.TensorProto.EXTERNAL:
        for e in t.external_data:
            if e.key == "length":
                return int(e.value)
    if t.raw_data:
        return len(t.raw_data)
    return numpy_helper.to_array(t).nbytes


def main():
    model = onnx.load(sys.argv[1], load_external_data=False)
    got = json.load(open(sys.argv[2]))
    g = model.graph
    want_nodes = collections.Counter(n.op_type for n in g.node)
    problems = []
    if dict(want_nodes) != got["nodes"]:
        problems.append(f"nodes: onnx {dict(want_nodes)} vs ours {got['nodes']}")
    init_bytes = sum(tensor_bytes(t) for t in g.initializer)
    if got["initializers"]["count"] != len(g.initializer) or got["initializers"]["bytes"] != init_bytes:
        problems.append(f"initializers: onnx {len(g.initializer)}/{init_bytes} vs ours "
                        f"{got['initializers']['count']}/{got['initializers']['bytes']}")
    consts = [a.t for n in g.node if n.op_type == "Constant" for a in n.attribute if a.name == "value"]
    const_bytes = sum(tensor_bytes(t) for t in consts)
    if got["constants"]["count"] != len(consts) or got["constants"]["bytes"] != const_bytes:
        problems.append(f"constants: onnx {len(consts)}/{const_bytes} vs ours "
                        f"{got['constants']['count']}/{got['constants']['bytes']}")
    if problems:
        print("\n".join(problems))
        return 1
    print(f"match: {len(g.node)} nodes, {len(g.initializer)} initializers ({init_bytes} B), "
          f"{len(consts)} constants ({const_bytes} B)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
