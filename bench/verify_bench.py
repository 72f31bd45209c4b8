#!/usr/bin/python3
"""Cost of verification policies on a compiled model (format.md §4.6, issue 11).

Generates an MLP (default 16 x 4096^2 FLOAT, 1 GiB, external data), compiles it for the host
(which records memo entries), then runs, as fresh processes interleaved round by round:

  explain --verify full|memo --json        wall (all cores), seconds inside, bytes hashed
  run --verify full|memo --threads T --json  the `verify` phase, time to first output

Under `full` every chosen entry's source and payload are hashed (tree-parallel BLAKE3 on T
threads): GiB/s = bytes hashed / (explain's seconds, or run's verify phase). Prints medians.

usage: bench/verify_bench.py --cli build/src/cli/onnx-prepack [--width 4096] [--layers 16]
                             [--rounds 5] [--threads 2] [--keep DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run_json(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"verify_bench: {' '.join(cmd)} exited {p.returncode}: {p.stderr[-500:]}")
    return json.loads(p.stdout), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--keep", help="work folder to keep (default: a temporary one, removed)")
    o = ap.parse_args()
    work = o.keep or tempfile.mkdtemp(prefix="verify-bench-")
    os.makedirs(work, exist_ok=True)
    m, c = os.path.join(work, "m.onnx"), os.path.join(work, "c.onnx")
    try:
        if not os.path.exists(m):
            subprocess.run([o.cli, "generate", "mlp", "-o", m, "--layers", str(o.layers),
                            "--width", str(o.width), "--external"], check=True,
                           stdout=subprocess.DEVNULL)
        # Always compiled by this CLI: an older binary's output may no longer be a hit.
        subprocess.run([o.cli, "compile", m, "-o", c, "--target", "host"], check=True,
                       stdout=subprocess.DEVNULL)
        feed = f"x=random:1x{o.width}"
        rows = {}
        for _ in range(o.rounds):
            for policy in ("full", "memo"):
                # explain hashes on all cores (it has no --threads).
                d, wall = run_json([o.cli, "explain", c, "--verify", policy, "--json"])
                t = d["totals"]
                rows.setdefault(("explain", policy), []).append(
                    (wall, t["seconds"], t["bytes_hashed"]))
                d, wall = run_json([o.cli, "run", c, "--verify", policy, "--json", "--input", feed,
                                    "--threads", str(o.threads)])
                tm = d["timings_ms"]
                rows.setdefault(("run", policy), []).append(
                    (tm["verify"] / 1e3, tm["time_to_first_output"] / 1e3,
                     d["totals"]["bytes_hashed"]))
        gib = float(1 << 30)
        print(f"verify_bench {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
              f"{o.layers} x {o.width}^2 FLOAT, threads {o.threads}, {o.rounds} rounds, "
              f"load average {os.getloadavg()[0]:.2f}")
        print("| command | policy | median wall s | median verify s | GiB hashed | GiB/s |")
        print("|---|---|---|---|---|---|")
        for (cmd, policy), vals in rows.items():
            if cmd == "explain":
                wall = statistics.median(v[0] for v in vals)
                inside = statistics.median(v[1] for v in vals)
            else:
                inside = statistics.median(v[0] for v in vals)
                wall = statistics.median(v[1] for v in vals)  # time to first output
            hashed = statistics.median(v[2] for v in vals) / gib
            rate = f"{hashed / inside:.2f}" if hashed and inside > 0 else "-"
            label = "explain (wall)" if cmd == "explain" else "run (time to first output)"
            print(f"| {label} | {policy} | {wall:.3f} | {inside:.3f} | {hashed:.2f} | {rate} |")
    finally:
        if not o.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
