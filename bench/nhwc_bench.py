#!/usr/bin/python3
"""Transpose folding benchmark: a CNN as NHWC exporters (tf2onnx, Keras, MediaPipe converters)
write it, 10 blocks of

  x NHWC -> Transpose(0,3,1,2) -> Conv(3x3, pads 1, no bias) -> Transpose(0,2,3,1)
    -> Add(bias [C]) -> Relu

over channels 3 -> 16 -> 32 -> 32 -> 64 -> 64 -> 64 -> 32 -> 32 -> 16 -> 16 on --sizes maps,
run by our CLI (`run --repeat`) with the transpose folding pass off
(ONNX_PREPACK_TRANSPOSE_FOLDING=0) and on, and by ONNX Runtime (bench/ort_load.js, default
graph optimizations, which include its transpose optimizer), at each thread count. Every
measurement is a fresh process; the three configurations are interleaved in a shuffled order
per round; steady-run medians (min-max) are printed as a markdown table with the ratios to ORT.

usage: bench/nhwc_bench.py --cli build/src/cli/onnx-prepack [--workdir DIR] [--rounds 5]
         [--runs 10] [--threads 1,2] [--sizes 128,256]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHANNELS = [3, 16, 32, 32, 64, 64, 64, 32, 32, 16, 16]


def sh(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def make_model(path, size):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    inits, nodes = [], []
    x = "x"
    for i, (ci, co) in enumerate(zip(CHANNELS, CHANNELS[1:])):
        t = "b%d" % i
        w = (rng.standard_normal((co, ci, 3, 3)) * (1.0 / (3 * ci) ** 0.5)).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, t + "_w"),
                      numpy_helper.from_array(
                          (rng.standard_normal(co) * 0.1).astype(np.float32), t + "_b")])
        nodes.extend([
            helper.make_node("Transpose", [x], [t + "_nchw"], perm=[0, 3, 1, 2]),
            helper.make_node("Conv", [t + "_nchw", t + "_w"], [t + "_c"], pads=[1, 1, 1, 1]),
            helper.make_node("Transpose", [t + "_c"], [t + "_nhwc"], perm=[0, 2, 3, 1]),
            helper.make_node("Add", [t + "_nhwc", t + "_b"], [t + "_a"]),
            helper.make_node("Relu", [t + "_a"], [t + "_y"]),
        ])
        x = t + "_y"
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    g = helper.make_graph(
        nodes, "nhwc_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, size, size, CHANNELS[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, size, size, CHANNELS[-1]])],
        initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def dims(size):
    return "1x%dx%dx%d" % (size, size, CHANNELS[0])


def ours(cli, model, size, threads, runs, fold):
    env = dict(os.environ)
    env["ONNX_PREPACK_TRANSPOSE_FOLDING"] = "1" if fold else "0"
    j = json.loads(sh([cli, "run", model, "--input", "x=random:" + dims(size), "--threads",
                       str(threads), "--repeat", str(runs), "--cache", "off", "--json"], env=env))
    want = 2 if fold else 2 * (len(CHANNELS) - 1)
    if j["plan"]["transposes"] != want:
        sys.exit("expected %d Transposes in the plan, got %d" % (want, j["plan"]["transposes"]))
    return j["timings_ms"]["steady_run_median"]


def ort(model, size, threads, runs):
    j = json.loads(sh(["node", os.path.join(HERE, "ort_load.js"), model, "x", dims(size),
                       "--threads", str(threads), "--runs", str(runs)]))
    return j["steady_median_ms"]


def fmt(values):
    return "%.1f (%.1f-%.1f)" % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-nhwc-bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--sizes", default="128,256")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    print("NHWC-export CNN: %d blocks Transpose -> Conv 3x3 -> Transpose -> Add(bias [C]) -> Relu, "
          "channels %s, %d rounds, %d steady runs each\n"
          % (len(CHANNELS) - 1, "-".join(map(str, CHANNELS)), a.rounds, a.runs))
    print("| map | threads | ours, folding off (ms) | ours, folding on (ms) | ORT (ms) "
          "| off / ORT | on / ORT | on / off |")
    print("|---|---|---|---|---|---|---|---|")
    for size in (int(v) for v in a.sizes.split(",")):
        model = os.path.join(a.workdir, "nhwc_cnn_%d.onnx" % size)
        if not os.path.exists(model):
            make_model(model, size)
        for t in (int(v) for v in a.threads.split(",")):
            configs = {"off": lambda: ours(a.cli, model, size, t, a.runs, False),
                       "on": lambda: ours(a.cli, model, size, t, a.runs, True),
                       "ort": lambda: ort(model, size, t, a.runs)}
            results = {k: [] for k in configs}
            for _ in range(a.rounds):
                order = list(configs)
                random.shuffle(order)
                for k in order:
                    results[k].append(configs[k]())
            med = {k: statistics.median(v) for k, v in results.items()}
            print("| %dx%d | %d | %s | %s | %s | %.2f | %.2f | %.2f |"
                  % (size, size, t, fmt(results["off"]), fmt(results["on"]), fmt(results["ort"]),
                     med["off"] / med["ort"], med["on"] / med["ort"], med["on"] / med["off"]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
