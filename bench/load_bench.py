#!/usr/bin/python3
"""Load benchmark (issue 7): time to first output, steady run and peak RSS of

  ours_cold   the plain model, no compiled entries, no cache: every weight packed at load
  ours_memo   the compiled model (compile output), --verify memo: map the packs, hash nothing
  ours_full   the compiled model, --verify full: hash every source, then map the packs
  ort         ONNX Runtime create + first run on the plain model (prepacking on)

on generated MLPs with external data (16 layers of width 512, 1024, 2048 or 4096: 16 MiB,
64 MiB, 256 MiB, 1 GiB), input [1, width]. Every measurement is a fresh process; the
configurations are interleaved in a shuffled order per round; medians (min-max) are
reported. Run with /usr/bin/python3 (standard library only).

usage: bench/load_bench.py --cli build/src/cli/onnx-prepack [--workdir DIR] [--sizes 256m,1g]
                           [--rounds 5] [--threads 1] [--runs 10] [--json OUT.jsonl]
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
SIZES = {"16m": (512, 16), "64m": (1024, 16), "256m": (2048, 16), "1g": (4096, 16)}


def sh(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r.stdout


def ours(cli, model, width, threads, runs, verify, env, out_dir=None):
    cmd = [cli, "run", model, "--input", "x=random:1x%d" % width, "--threads", str(threads),
           "--repeat", str(runs), "--verify", verify, "--json"]
    if out_dir:
        cmd += ["--output-dir", out_dir]
    t0 = time.monotonic()
    j = json.loads(sh(cmd, env))
    wall = (time.monotonic() - t0) * 1000
    t = j["timings_ms"]
    return {"ttfo": t["time_to_first_output"], "steady": t["steady_run_median"],
            "parse": t["parse"], "verify": t["verify"], "pack": t["pack"], "map": t["map"],
            "first_run": t["first_run"], "peak_rss_mib": j["memory"]["peak_rss_kib"] / 1024,
            "anon_mib": j["memory"]["rss_anon_kib"] / 1024,
            "file_mib": j["memory"]["rss_file_kib"] / 1024, "wall": wall,
            "hits": j["totals"]["hits"], "misses": j["totals"]["misses"],
            "hashed_mib": j["totals"]["bytes_hashed"] / 2**20,
            "sum": j["outputs"]["y"]["sum"]}


def ort(model, width, threads, runs, env):
    t0 = time.monotonic()
    j = json.loads(sh(["node", os.path.join(HERE, "ort_load.js"), model, "x", "1x%d" % width,
                       "--threads", str(threads), "--runs", str(runs)], env))
    wall = (time.monotonic() - t0) * 1000
    return {"ttfo": j["time_to_first_output_ms"], "steady": j["steady_median_ms"],
            "create": j["create_ms"], "first_run": j["first_run_ms"],
            "peak_rss_mib": j["peak_rss_kib"] / 1024, "anon_mib": j["rss_anon_kib"] / 1024,
            "file_mib": j["rss_file_kib"] / 1024, "wall": wall, "sum": j["sum"]}


def fmt(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    m = statistics.median(values)
    p = lambda v: ("%.0f" % v) if v >= 100 else ("%.1f" % v)
    return "%s (%s-%s)" % (p(m), p(min(values)), p(max(values)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-load-bench")
    ap.add_argument("--sizes", default="256m,1g")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    env = dict(os.environ, ONNX_PREPACK_MEMO_DIR=os.path.join(a.workdir, "memo"))
    records = []
    for size in a.sizes.split(","):
        width, layers = SIZES[size]
        plain = os.path.join(a.workdir, "mlp%s.onnx" % size)
        compiled = os.path.join(a.workdir, "mlp%s_compiled.onnx" % size)
        if not os.path.exists(plain):
            sh([a.cli, "generate", "mlp", "-o", plain, "--layers", str(layers), "--width",
                str(width), "--external"])
        # Always compiled by this CLI: an older binary's output may no longer be a hit.
        sh([a.cli, "compile", plain, "-o", compiled])
        # Outputs identical cold vs warm (bytes), and the memo record made once.
        d_cold, d_warm = (os.path.join(a.workdir, "out_" + s) for s in ("cold", "warm"))
        ours(a.cli, plain, width, a.threads, 0, "full", env, d_cold)
        ours(a.cli, compiled, width, a.threads, 0, "memo", env, d_warm)
        same = open(os.path.join(d_cold, "y.npy"), "rb").read() == \
            open(os.path.join(d_warm, "y.npy"), "rb").read()
        configs = {
            "ours_cold": lambda: ours(a.cli, plain, width, a.threads, a.runs, "full", env),
            "ours_memo": lambda: ours(a.cli, compiled, width, a.threads, a.runs, "memo", env),
            "ours_full": lambda: ours(a.cli, compiled, width, a.threads, a.runs, "full", env),
            "ort": lambda: ort(plain, width, a.threads, a.runs, env),
        }
        results = {k: [] for k in configs}
        for r in range(a.rounds):
            order = list(configs)
            random.shuffle(order)
            for k in order:
                rec = configs[k]()
                rec.update(config=k, size=size, round=r, threads=a.threads)
                results[k].append(rec)
                records.append(rec)
        print("\n### mlp %s (width %d, %d layers, external data), threads %d, %d rounds\n" %
              (size, width, layers, a.threads, a.rounds))
        print("outputs cold vs warm (compiled, memo): %s\n" %
              ("byte-identical" if same else "DIFFERENT"))
        print("| config | time to first output (ms) | steady run (ms) | peak RSS (MiB) | "
              "RssAnon / RssFile at end (MiB) | process wall (ms) | hashed MiB |")
        print("|---|---|---|---|---|---|---|")
        for k, rs in results.items():
            print("| %s | %s | %s | %s | %s / %s | %s | %s |" % (
                k, fmt([x["ttfo"] for x in rs]), fmt([x["steady"] for x in rs]),
                fmt([x["peak_rss_mib"] for x in rs]),
                fmt([x["anon_mib"] for x in rs]), fmt([x["file_mib"] for x in rs]),
                fmt([x["wall"] for x in rs]), fmt([x.get("hashed_mib") for x in rs])))
        med = {k: statistics.median([x["ttfo"] for x in rs]) for k, rs in results.items()}
        st = {k: statistics.median([x["steady"] for x in rs]) for k, rs in results.items()}
        print("\nratios (medians): ort / ours_memo time to first output %.1fx; "
              "ours_cold / ours_memo %.1fx; ours_memo steady / ort steady %.2f" %
              (med["ort"] / med["ours_memo"], med["ours_cold"] / med["ours_memo"],
               st["ours_memo"] / st["ort"]))
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
