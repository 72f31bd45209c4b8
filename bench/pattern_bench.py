#!/usr/bin/python3
"""Pattern fusion (decomposed LayerNorm / RMSNorm / Gelu, docs/runtime.md "Pattern fusion") on
and off on one model: steady run time per run, fresh processes, the two settings alternating in
a shuffled order per round (a loaded machine's noise falls on both alike).

Per round and setting, two processes: `onnx-prepack run --repeat 1` and `--repeat R+1`; the
difference of their CPU times (user + sys of the child) over R is the CPU time of one steady
run (load, plan and the first run cancel out). The wall steady_run_median of the longer one is
printed too. ONNX_PREPACK_PATTERN_FUSION=0 turns the pass off; the script checks
plan.patterns_fused.

usage: bench/pattern_bench.py --cli build/src/cli/onnx-prepack --model tf.onnx
                              --input input_ids=1x64 [--threads 1] [--rounds 7] [--repeat 20]
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one(cli, model, inp, threads, repeat, fuse):
    env = dict(os.environ)
    env["ONNX_PREPACK_PATTERN_FUSION"] = "1" if fuse else "0"
    name, dims = inp.split("=", 1)
    cmd = [cli, "run", model, "--input", "%s=random:%s" % (name, dims), "--threads", str(threads),
           "--repeat", str(repeat), "--json"]
    before = child_cpu()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    cpu = child_cpu() - before
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    j = json.loads(r.stdout)
    return cpu, j["timings_ms"]["steady_run_median"], j["plan"]["patterns_fused"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True, help="NAME=DIMS, e.g. input_ids=1x64")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    cpu = {False: [], True: []}
    wall = {False: [], True: []}
    fused = {}
    for rnd in range(a.rounds):
        order = [False, True]
        random.shuffle(order)
        for fuse in order:
            c1, _, _ = one(a.cli, a.model, a.input, a.threads, 1, fuse)
            cn, w, n = one(a.cli, a.model, a.input, a.threads, a.repeat + 1, fuse)
            cpu[fuse].append(1000.0 * (cn - c1) / a.repeat)
            wall[fuse].append(w)
            fused[fuse] = n
        print("round %d: off cpu %.2f wall %.2f | on cpu %.2f wall %.2f ms" %
              (rnd + 1, cpu[False][-1], wall[False][-1], cpu[True][-1], wall[True][-1]),
              flush=True)
    if fused[False] != 0 or fused[True] == 0:
        sys.exit("unexpected plan.patterns_fused: off %d, on %d" % (fused[False], fused[True]))

    def fmt(v):
        return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))

    print("patterns fused: %d" % fused[True])
    print("CPU ms per steady run, median (min-max): off %s, on %s, on/off %.3f" %
          (fmt(cpu[False]), fmt(cpu[True]),
           statistics.median(cpu[True]) / statistics.median(cpu[False])))
    print("wall steady_run_median ms: off %s, on %s, on/off %.3f" %
          (fmt(wall[False]), fmt(wall[True]),
           statistics.median(wall[True]) / statistics.median(wall[False])))


if __name__ == "__main__":
    main()
