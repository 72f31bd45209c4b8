#!/usr/bin/python3
"""Weight-only QDQ benchmark: the FFN of a BERT-class encoder with int8
weights as DequantizeLinear (per column) -> MatMul,

  x [S, D] -> DQ(W1 int8 [D, F]) -> MatMul -> Sigmoid -> DQ(W2 int8 [F, D]) -> MatMul -> y

(tests/runtime/quant/make_qdq_weight_models.py, default S 128, D 768, F 3072), run

  exact     our CLI, `run` (the float product, the dequantized weights packed at plan time)
  plain     our CLI, `run --weights plain` (the float product, B packed into scratch at every
            run: what the exact path did before it packed the folded weight once)
  integer   our CLI, `run --qdq integer` (DynamicQuantizeMatMul, A quantized per row, W packed
            at plan time)
  compiled  our CLI, `run --qdq integer` on `compile --qdq integer`'s output (W's entries hit)
  ORT       ONNX Runtime (bench/ort_load.js; its CPU provider fuses each unit into MatMulNBits)

at each thread count. Every measurement is a fresh process; the configurations are interleaved
in a shuffled order per round; steady-run medians (min-max) are printed as a markdown table.
First, the error of each path against float64 (max |y - ref| / max |ref|) on the FFN and on a
smaller one (S 16, D 64, F 256), the input x.npy of the model builder.

usage: bench/qdq_bench.py --cli build/src/cli/onnx-prepack [--workdir DIR] [--rounds 5]
         [--runs 20] [--threads 1,2] [--ffn 128,768,3072]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MAKE = os.path.join(ROOT, "tests", "runtime", "quant", "make_qdq_weight_models.py")


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def make(workdir, ffn):
    d = os.path.join(workdir, ffn.replace(",", "_"))
    if not os.path.exists(os.path.join(d, "ffn", "model.onnx")):
        sh(["/usr/bin/python3", MAKE, d, "--cases", "ffn", "--ffn", ffn])
    return os.path.join(d, "ffn")


def errors(cli, case):
    ref = np.load(os.path.join(case, "ref.npy"))
    x = os.path.join(case, "x.npy")
    out = {}
    for name, extra in (("exact", []), ("integer", ["--qdq", "integer"])):
        od = os.path.join(case, "ours_" + name)
        sh([cli, "run", os.path.join(case, "model.onnx"), "--input", "x=" + x, "--output-dir", od,
            "--threads", "1"] + extra)
        out[name] = np.load(os.path.join(od, "y.npy"))
    od = os.path.join(case, "ort")
    sh(["node", os.path.join(ROOT, "tests", "runtime", "ort_run.js"),
        os.path.join(case, "model.onnx"), od, "x=" + x])
    out["ORT"] = np.load(os.path.join(od, "y.npy"))
    scale = np.abs(ref).max()
    return {k: float(np.abs(v.astype(np.float64) - ref).max() / scale) for k, v in out.items()}


def ours(cli, model, dims, threads, runs, extra):
    j = json.loads(sh([cli, "run", model, "--input", "x=random:" + dims, "--threads",
                       str(threads), "--repeat", str(runs), "--cache", "off", "--json"] + extra))
    return j["timings_ms"]["steady_run_median"]


def ort(model, dims, threads, runs):
    j = json.loads(sh(["node", os.path.join(HERE, "ort_load.js"), model, "x", dims,
                       "--threads", str(threads), "--runs", str(runs)]))
    return j["steady_median_ms"]


def fmt(values):
    return "%.2f (%.2f-%.2f)" % (statistics.median(values), min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-qdq-bench")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ffn", default="128,768,3072")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    case = make(a.workdir, a.ffn)
    small = make(a.workdir, "16,64,256")
    print("error against float64, max |y - ref| / max |ref| (x.npy of the builder, 1 thread)\n")
    print("| FFN (S, D, F) | exact | integer | ORT |")
    print("|---|---|---|---|")
    for name, c in ((a.ffn, case), ("16,64,256", small)):
        e = errors(a.cli, c)
        print("| %s | %.2g | %.2g | %.2g |" % (name, e["exact"], e["integer"], e["ORT"]))
    model = os.path.join(case, "model.onnx")
    compiled = os.path.join(case, "integer.compiled.onnx")
    sh([a.cli, "compile", model, "-o", compiled, "--qdq", "integer", "--no-memo"])
    s, d, _ = a.ffn.split(",")
    dims = "%sx%s" % (s, d)
    print("\nweight-only QDQ FFN %s, %d rounds, %d steady runs each\n" % (a.ffn, a.rounds, a.runs))
    print("| threads | plain (ms) | exact (ms) | integer (ms) | integer, compiled (ms) | "
          "ORT (ms) | plain / ORT | exact / ORT | integer / ORT | compiled / ORT |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t in (int(v) for v in a.threads.split(",")):
        configs = {
            "plain": lambda: ours(a.cli, model, dims, t, a.runs, ["--weights", "plain"]),
            "exact": lambda: ours(a.cli, model, dims, t, a.runs, []),
            "integer": lambda: ours(a.cli, model, dims, t, a.runs, ["--qdq", "integer"]),
            "compiled": lambda: ours(a.cli, compiled, dims, t, a.runs, ["--qdq", "integer"]),
            "ort": lambda: ort(model, dims, t, a.runs),
        }
        results = {k: [] for k in configs}
        for _ in range(a.rounds):
            order = list(configs)
            random.shuffle(order)
            for k in order:
                results[k].append(configs[k]())
        o = statistics.median(results["ort"])
        med = {k: statistics.median(v) for k, v in results.items()}
        print("| %d | %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f |" % (
            t, fmt(results["plain"]), fmt(results["exact"]), fmt(results["integer"]),
            fmt(results["compiled"]), fmt(results["ort"]), med["plain"] / o, med["exact"] / o,
            med["integer"] / o, med["compiled"] / o))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
