#!/usr/bin/python3
"""MatMulNBits benchmark (issue 13): a `generate llm` stack of `--layers` int4
weights `--width` x `--width` (block 32, zero points, external data), run as

  ours_cold   the plain model: every weight packed at load (cache off)
  ours_warm   the compiled model (`compile` output), --verify memo: map the packs
  ort         ONNX Runtime create + first run + steady runs, same accuracy_level

for each scenario LEVEL:M:THREADS (default 0:1:1, 4:1:1, 0:128:1, 4:128:1, 0:1:2,
4:1:2). Every measurement is a fresh process; configurations are interleaved in a
shuffled order per round; medians (min-max) are printed as a markdown table.
Then the accuracy of level 4: max |y - y_float| / max |y_float| for ours and ORT,
y_float being ORT's level-0 output on the same input.

usage: bench/nbits_bench.py --cli build/src/cli/onnx-prepack [--workdir DIR] [--layers 16]
         [--width 4096] [--rounds 5] [--runs 10] [--scenarios 0:1:1,4:1:1]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def ours(cli, model, m, width, threads, runs, verify, env):
    cmd = [cli, "run", model, "--input", "x=random:%dx%d" % (m, width), "--threads",
           str(threads), "--repeat", str(runs), "--verify", verify, "--cache", "off", "--json"]
    j = json.loads(sh(cmd, env))
    t = j["timings_ms"]
    return {"ttfo": t["time_to_first_output"], "steady": t["steady_run_median"],
            "hits": j["totals"]["hits"]}


def ort(model, m, width, threads, runs, env):
    j = json.loads(sh(["node", os.path.join(HERE, "ort_load.js"), model, "x",
                       "%dx%d" % (m, width), "--threads", str(threads), "--runs", str(runs)], env))
    return {"ttfo": j["time_to_first_output_ms"], "steady": j["steady_median_ms"],
            "create": j["create_ms"]}


def fmt(values):
    m = statistics.median(values)
    p = lambda v: ("%.0f" % v) if v >= 100 else ("%.1f" % v)
    return "%s (%s-%s)" % (p(m), p(min(values)), p(max(values)))


def models(a, level):
    plain = os.path.join(a.workdir, "llm%d_l%d.onnx" % (a.layers, level))
    compiled = os.path.join(a.workdir, "llm%d_l%d_compiled.onnx" % (a.layers, level))
    if not os.path.exists(plain):
        sh([a.cli, "generate", "llm", "-o", plain, "--layers", str(a.layers), "--width",
            str(a.width), "--accuracy-level", str(level), "--external"])
    # Always compiled by this CLI: an older binary's output may no longer be a hit.
    sh([a.cli, "compile", plain, "-o", compiled])
    return plain, compiled


def accuracy(a, env):
    import numpy as np  # Debian python3-numpy; only this step needs it
    x = os.path.join(a.workdir, "x.npy")
    np.save(x, np.random.default_rng(3).standard_normal((1, a.width)).astype(np.float32))
    out = {}
    for level in (0, 4):
        plain, _ = models(a, level)
        d = os.path.join(a.workdir, "acc_ort_l%d" % level)
        sh(["node", os.path.join(ROOT, "tests", "runtime", "ort_run.js"), plain, d, "x=" + x], env)
        out["ort", level] = np.load(os.path.join(d, "y.npy"))
        d = os.path.join(a.workdir, "acc_ours_l%d" % level)
        sh([a.cli, "run", plain, "--input", "x=" + x, "--cache", "off", "--output-dir", d], env)
        out["ours", level] = np.load(os.path.join(d, "y.npy"))
    ref = out["ort", 0]
    mx = float(np.abs(ref).max())
    print("\n### accuracy (max |y - y_float| / max |y_float|, y_float = ORT level 0)\n")
    print("| | level 0 | level 4 |")
    print("|---|---|---|")
    for who in ("ours", "ort"):
        print("| %s | %.2e | %.2e |" % (who, float(np.abs(out[who, 0] - ref).max()) / mx,
                                       float(np.abs(out[who, 4] - ref).max()) / mx))
    print("\nours vs ORT at level 4: %.2e" %
          (float(np.abs(out["ours", 4] - out["ort", 4]).max()) / mx))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-nbits-bench")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--scenarios", default="0:1:1,4:1:1,0:128:1,4:128:1,0:1:2,4:1:2")
    ap.add_argument("--no-accuracy", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    env = dict(os.environ, ONNX_PREPACK_MEMO_DIR=os.path.join(a.workdir, "memo"))
    print("llm stack: %d layers of %dx%d int4 MatMulNBits (block 32, zero points), %d rounds, "
          "%d steady runs each\n" % (a.layers, a.width, a.width, a.rounds, a.runs))
    print("| level | M | threads | config | time to first output (ms) | steady run (ms) |")
    print("|---|---|---|---|---|---|")
    summary = []
    for sc in a.scenarios.split(","):
        level, m, threads = (int(v) for v in sc.split(":"))
        plain, compiled = models(a, level)
        ours(a.cli, compiled, m, a.width, threads, 0, "memo", env)  # memo record made once
        configs = {
            "ours_cold": lambda: ours(a.cli, plain, m, a.width, threads, a.runs, "full", env),
            "ours_warm": lambda: ours(a.cli, compiled, m, a.width, threads, a.runs, "memo", env),
            "ort": lambda: ort(plain, m, a.width, threads, a.runs, env),
        }
        results = {k: [] for k in configs}
        for _ in range(a.rounds):
            order = list(configs)
            random.shuffle(order)
            for k in order:
                results[k].append(configs[k]())
        for k, rs in results.items():
            print("| %d | %d | %d | %s | %s | %s |" % (level, m, threads, k,
                                                     fmt([x["ttfo"] for x in rs]),
                                                     fmt([x["steady"] for x in rs])))
        med = lambda k, f: statistics.median([x[f] for x in results[k]])
        summary.append((level, m, threads, med("ort", "ttfo") / med("ours_warm", "ttfo"),
                        med("ours_warm", "steady") / med("ort", "steady")))
        sys.stdout.flush()
    print("\n| level | M | threads | ORT create+first / ours warm first output | "
          "ours steady / ORT steady |")
    print("|---|---|---|---|---|")
    for level, m, threads, ttfo, steady in summary:
        print("| %d | %d | %d | %.1fx | %.2f |" % (level, m, threads, ttfo, steady))
    if not a.no_accuracy:
        accuracy(a, env)


if __name__ == "__main__":
    main()
