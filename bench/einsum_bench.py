#!/usr/bin/python3
"""Einsum side by side with ONNX Runtime (issue 18): equations a direct loop over every subscript
could not finish, now planned as sums and pairwise products (src/runtime/ops/tensor/einsum_plan.h).

For each equation: one model, float inputs; ours is `onnx-prepack run --threads 1 --repeat RUNS`
(first run and the median of the steady runs), ORT is bench/ort_einsum.js (one intra-op thread,
one warm-up run, median of RUNS). Run with /usr/bin/python3.

usage: bench/einsum_bench.py --cli build/src/cli/onnx-prepack [--runs 5] [--workdir DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
LETTERS = [chr(ord("a") + i) for i in range(26)] + [chr(ord("A") + i) for i in range(10)]
CASES = [
    ("abcd,efgh-> [16]^4", "abcd,efgh->", [(16,) * 4] * 2),
    ("abcd,cdef->abef [16]^4", "abcd,cdef->abef", [(16,) * 4] * 2),
    ("36 x [2] -> scalar", ",".join(LETTERS) + "->", [(2,)] * 36),
    ("36 x [2] -> [2, 2]", ",".join(LETTERS) + "->bD", [(2,)] * 36),
]


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd[:4]), r.stderr[-2000:]))
    return r.stdout


def save(path, eq, shapes):
    inputs = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, s)
              for i, s in enumerate(shapes)]
    node = helper.make_node("Einsum", [v.name for v in inputs], ["Y"], equation=eq)
    out = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    m = helper.make_model(helper.make_graph([node], "einsum", inputs, [out]),
                          opset_imports=[helper.make_opsetid("", 12)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", default="")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="einsum_bench.")
    print("%-24s %14s %14s %14s %14s" % ("equation", "ours first", "ours median", "ort first",
                                         "ort median"))
    for k, (label, eq, shapes) in enumerate(CASES):
        model = os.path.join(work, f"einsum{k}.onnx")
        save(model, eq, shapes)
        args = [a.cli, "run", model, "--threads", "1", "--repeat", str(a.runs), "--json"]
        for i in range(len(shapes)):
            args += ["--input", f"x{i}=random"]
        t = json.loads(sh(args))["timings_ms"]
        specs = [f"x{i}=" + "x".join(map(str, s)) for i, s in enumerate(shapes)]
        o = json.loads(sh(["node", os.path.join(HERE, "ort_einsum.js"), model, str(a.runs)] +
                          specs))
        print("%-24s %11.2f ms %11.2f ms %11.2f ms %11.2f ms" %
              (label, t["first_run"], t["steady_run_median"], o["first_run_ms"],
               o["steady_median_ms"]))


if __name__ == "__main__":
    main()
