#!/usr/bin/python3
"""MatMulNBits prompt processing (M > 1) against ONNX Runtime: one MatMulNBits node per 7B-class
shape (K x N = 4096 x 4096, 4096 x 11008, 11008 x 4096), int4, block 32, packed zero points, A of
[M, K] with M symbolic, for accuracy levels 4 and 0 and M = 1, 16, 128. Per thread count, fresh
processes interleaved in a shuffled order per round:

  ours  `run MODEL --input a=A.npy --repeat R --cache off --json`: steady-run median
  ort   bench/ort_steady.js MODEL R: steady-run median (3 warm-ups first)

Medians over rounds (min-max) as a markdown table, with ours / ORT and the effective GMAC/s of
ours. Run with /usr/bin/python3.

usage: bench/nbits_prompt_bench.py --cli build/src/cli/onnx-prepack [--threads 1,2] [--rounds 5]
         [--runs 10] [--ms 1,16,128] [--levels 4,0] [--shapes 4096x4096,4096x11008,11008x4096]
         [--workdir DIR]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    return r.stdout


def fmt(v):
    return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))


def write_model(path, K, N, level, block=32, bits=4, seed=1):
    rng = np.random.default_rng(seed)
    kb = (K + block - 1) // block
    b = rng.integers(0, 256, size=(N, kb, block * bits // 8), dtype=np.uint8)
    scales = (rng.random(N * kb, dtype=np.float32) * 0.02 + 0.001).astype(np.float32)
    zp = rng.integers(0, 256, size=(N * ((kb * bits + 7) // 8),), dtype=np.uint8)
    inits = [numpy_helper.from_array(b, "B"), numpy_helper.from_array(scales, "scales"),
             numpy_helper.from_array(zp, "zp")]
    node = helper.make_node("MatMulNBits", ["a", "B", "scales", "zp"], ["y"], domain="com.microsoft",
                            K=K, N=N, bits=bits, block_size=block, accuracy_level=level)
    graph = helper.make_graph(
        [node], "nbits_prompt", [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["M", K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                     helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--ms", default="1,16,128")
    ap.add_argument("--levels", default="4,0")
    ap.add_argument("--shapes", default="4096x4096,4096x11008,11008x4096")
    ap.add_argument("--workdir", default="")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="nbits_prompt_bench.")
    os.makedirs(work, exist_ok=True)
    shapes = [tuple(int(x) for x in s.split("x")) for s in a.shapes.split(",")]
    levels = [int(x) for x in a.levels.split(",")]
    ms = [int(x) for x in a.ms.split(",")]
    threads = [int(x) for x in a.threads.split(",")]
    rng = np.random.default_rng(7)
    models, inputs = {}, {}
    for K, N in shapes:
        for level in levels:
            path = os.path.join(work, "nbits_%dx%d_l%d.onnx" % (K, N, level))
            if not os.path.exists(path):
                write_model(path, K, N, level)
            models[(K, N, level)] = path
        for m in ms:
            f = os.path.join(work, "a_%dx%d.npy" % (m, K))
            if not os.path.exists(f):
                np.save(f, rng.standard_normal((m, K)).astype(np.float32))
            inputs[(m, K)] = f
    res = {}
    for t in threads:
        for _ in range(a.rounds):
            jobs = [(key, m, who) for key in models for m in ms for who in ("ours", "ort")]
            random.shuffle(jobs)
            for key, m, who in jobs:
                path, f = models[key], inputs[(m, key[0])]
                if who == "ours":
                    j = json.loads(sh([a.cli, "run", path, "--input", "a=" + f, "--threads", str(t),
                                       "--repeat", str(a.runs), "--cache", "off", "--json"]))
                    v = j["timings_ms"]["steady_run_median"]
                else:
                    j = json.loads(sh(["node", os.path.join(HERE, "ort_steady.js"), path,
                                       str(a.runs), "--threads", str(t), "a=" + f]))
                    v = j["median_ms"]
                res.setdefault((key, m, t, who), []).append(v)
    print("MatMulNBits int4 block 32 (packed zero points), %d rounds x %d steady runs, "
          "medians (min-max)\n" % (a.rounds, a.runs))
    print("| K x N | level | M | threads | ours (ms) | ORT (ms) | ours / ORT | ours GMAC/s |")
    print("|---|---|---|---|---|---|---|---|")
    for level in levels:
        for K, N in shapes:
            for m in ms:
                for t in threads:
                    o, q = res[((K, N, level), m, t, "ours")], res[((K, N, level), m, t, "ort")]
                    mo = statistics.median(o)
                    print("| %dx%d | %d | %d | %d | %s | %s | %.2f | %.1f |" % (
                        K, N, level, m, t, fmt(o), fmt(q), mo / statistics.median(q),
                        K * N * m / mo / 1e6))


if __name__ == "__main__":
    main()
