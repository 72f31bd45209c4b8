#!/usr/bin/python3
"""MatMulInteger benchmark (issue 19): the FFN of a BERT-class encoder as onnxruntime's
quantize_dynamic writes it,

  x [M, D] float -> DynamicQuantizeLinear -> MatMulInteger(W1 int8 [D, F], zero point 0)
    -> Cast(float) -> Mul(x_scale * w1_scale) -> Add(b1) -> Relu
    -> DynamicQuantizeLinear -> MatMulInteger(W2 int8 [F, D]) -> Cast -> Mul -> Add(b2) -> y

(default M 128, D 768, F 3072), run by our CLI (`run --repeat`) and ONNX Runtime
(bench/ort_load.js) at each thread count. Every measurement is a fresh process; the
configurations are interleaved in a shuffled order per round; steady-run medians (min-max)
are printed as a markdown table, with the warm time to first output: ours is the compiled
model (`compile`, packs mapped, page cache warm, `--verify memo`: load + plan + first run),
ORT's is session create + first run of the same process that gave its steady time.

usage: bench/mmi_ffn_bench.py --cli build/src/cli/onnx-prepack [--workdir DIR] [--rounds 5]
         [--runs 20] [--threads 1,2] [--M 128] [--D 768] [--F 3072]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def make_model(path, m, d, f):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    inits, nodes = [], []

    def layer(x, k, n, tag):
        w = rng.integers(-127, 128, size=(k, n)).astype(np.int8)
        inits.extend([numpy_helper.from_array(w, tag + "_w"),
                      numpy_helper.from_array(np.array(0, np.int8), tag + "_wzp"),
                      numpy_helper.from_array(np.array(0.01, np.float32), tag + "_ws"),
                      numpy_helper.from_array(rng.standard_normal(n).astype(np.float32) * 0.1,
                                              tag + "_b")])
        nodes.extend([
            helper.make_node("DynamicQuantizeLinear", [x], [tag + "_q", tag + "_s", tag + "_z"]),
            helper.make_node("MatMulInteger", [tag + "_q", tag + "_w", tag + "_z", tag + "_wzp"],
                             [tag + "_i"]),
            helper.make_node("Cast", [tag + "_i"], [tag + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [tag + "_s", tag + "_ws"], [tag + "_scale"]),
            helper.make_node("Mul", [tag + "_f", tag + "_scale"], [tag + "_m"]),
            helper.make_node("Add", [tag + "_m", tag + "_b"], [tag + "_y"]),
        ])
        return tag + "_y"

    h = layer("x", d, f, "fc1")
    nodes.append(helper.make_node("Relu", [h], ["h"]))
    y = layer("h", f, d, "fc2")
    nodes.append(helper.make_node("Identity", [y], ["y"]))
    g = helper.make_graph(nodes, "ffn", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [m, d])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, d])],
                          initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)


def ours(cli, model, m, d, threads, runs):
    j = json.loads(sh([cli, "run", model, "--input", "x=random:%dx%d" % (m, d), "--threads",
                       str(threads), "--repeat", str(runs), "--cache", "off", "--json"]))
    return j["timings_ms"]["steady_run_median"]


def ours_first(cli, compiled, m, d, threads):
    j = json.loads(sh([cli, "run", compiled, "--input", "x=random:%dx%d" % (m, d), "--threads",
                       str(threads), "--cache", "off", "--verify", "memo", "--json"]))
    return j["timings_ms"]["time_to_first_output"]


def ort(model, m, d, threads, runs):
    """(steady median, create + first run) of one fresh process."""
    j = json.loads(sh(["node", os.path.join(HERE, "ort_load.js"), model, "x", "%dx%d" % (m, d),
                       "--threads", str(threads), "--runs", str(runs)]))
    return j["steady_median_ms"], j["time_to_first_output_ms"]


def fmt(values):
    return "%.1f (%.1f-%.1f)" % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-mmi-bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--M", type=int, default=128)
    ap.add_argument("--D", type=int, default=768)
    ap.add_argument("--F", type=int, default=3072)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    model = os.path.join(a.workdir, "ffn_%d_%d_%d.onnx" % (a.M, a.D, a.F))
    if not os.path.exists(model):
        make_model(model, a.M, a.D, a.F)
    compiled = model[:-len(".onnx")] + ".c.onnx"
    if not os.path.exists(compiled):
        sh([a.cli, "compile", model, "-o", compiled])
    print("quantize_dynamic FFN: x [%d, %d] -> %d -> %d, %d rounds, %d steady runs each\n" %
          (a.M, a.D, a.F, a.D, a.rounds, a.runs))
    print("| threads | ours steady (ms) | ORT steady (ms) | ours / ORT | ours compiled, first "
          "output (ms) | ORT create + first run (ms) | ORT first / ours first |")
    print("|---|---|---|---|---|---|---|")
    for t in (int(v) for v in a.threads.split(",")):
        configs = {"ours": lambda: ours(a.cli, model, a.M, a.D, t, a.runs),
                   "ours_first": lambda: ours_first(a.cli, compiled, a.M, a.D, t),
                   "ort": lambda: ort(model, a.M, a.D, t, a.runs)}
        results = {k: [] for k in configs}
        for _ in range(a.rounds):
            order = list(configs)
            random.shuffle(order)
            for k in order:
                results[k].append(configs[k]())
        ort_steady = [r[0] for r in results["ort"]]
        ort_first = [r[1] for r in results["ort"]]
        ratio = statistics.median(results["ours"]) / statistics.median(ort_steady)
        first = statistics.median(ort_first) / statistics.median(results["ours_first"])
        print("| %d | %s | %s | %.2f | %s | %s | %.1f |" %
              (t, fmt(results["ours"]), fmt(ort_steady), ratio, fmt(results["ours_first"]),
               fmt(ort_first), first))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
