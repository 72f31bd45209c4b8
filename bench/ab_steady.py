#!/usr/bin/env python3
"""A/B of two builds of onnx-prepack on one model: steady run medians, fresh processes,
the two CLIs alternating round by round (the machine's noise falls on both alike).

usage: ab_steady.py --base CLI_A --cli CLI_B --model M.onnx --input NAME=DIMS
                    [--threads N] [--rounds R] [--repeat K]
Prints each build's median (ms) over rounds and the ratio B / A. docs/benchmarks.md quotes it
for "no regression" checks.
"""
import argparse
import json
import statistics
import subprocess
import sys


def steady(cli, model, inp, threads, repeat):
    name, dims = inp.split("=", 1)
    r = subprocess.run([cli, "run", model, "--input", "%s=random:%s" % (name, dims), "--threads",
                        str(threads), "--repeat", str(repeat), "--weights", "plain", "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s" % (cli, r.returncode, r.stderr[-1000:]))
    return json.loads(r.stdout)["timings_ms"]["steady_run_median"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the CLI before the change")
    ap.add_argument("--cli", required=True, help="the CLI after it")
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True, help="NAME=DIMS, e.g. x=1x3x224x224")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    a, b = [], []
    for _ in range(args.rounds):
        a.append(steady(args.base, args.model, args.input, args.threads, args.repeat))
        b.append(steady(args.cli, args.model, args.input, args.threads, args.repeat))
    ma, mb = statistics.median(a), statistics.median(b)
    print("%s: base %.2f ms, new %.2f ms, new / base %.3f (%d rounds, %d threads)" %
          (args.model, ma, mb, mb / ma, args.rounds, args.threads))


if __name__ == "__main__":
    main()
