#!/usr/bin/python3
"""A deploy, timed (docs/deploy.md, issue 21): a model compiled in CI, copied to production with
`cp -r`, then started there under each verification policy.

Generates an MLP (default 16 x 4096^2 FLOAT, 1 GiB, external data), compiles it for the host
(the output stands alone: model + one content-named data file), then per round:

  cp -r build/ prod/                       a fresh copy: new inodes, new mtimes, an empty memo
  run --verify memo   (first start)        nothing recorded for the copy: hashes and records
  run --verify memo   (second start)       the records of the first start vouch for the copy
  run --verify full                        hashes every source and payload
  run --verify off                         trusts the entries' digests, hashes nothing

each a fresh process (`run --json`, time to first output and its `verify` phase), and
`b3sum --num-threads T` over the same data file: the machine's all-core BLAKE3 rate, which the
`full` hashing rate (bytes hashed / verify phase) is quoted against. Prints medians.

usage: bench/deploy_bench.py --cli build/src/cli/onnx-prepack [--width 4096] [--layers 16]
                             [--rounds 5] [--threads 2] [--keep DIR]
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GIB = float(1 << 30)


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"deploy_bench: {' '.join(cmd)} exited {p.returncode}: {p.stderr[-500:]}")
    return json.loads(p.stdout)


def timed(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", help="work folder to keep (default: a temporary one, removed)")
    o = ap.parse_args()
    if shutil.which("b3sum") is None:
        sys.exit("deploy_bench: b3sum not found (apt-get install b3sum)")
    work = o.keep or tempfile.mkdtemp(prefix="deploy-bench-")
    os.makedirs(work, exist_ok=True)
    src, build, prod = (os.path.join(work, d) for d in ("src", "build", "prod"))
    try:
        os.makedirs(src, exist_ok=True)
        os.makedirs(build, exist_ok=True)
        m, c = os.path.join(src, "m.onnx"), os.path.join(build, "m.onnx")
        if not os.path.exists(m):
            subprocess.run([o.cli, "generate", "mlp", "-o", m, "--layers", str(o.layers),
                            "--width", str(o.width), "--external"], check=True,
                           stdout=subprocess.DEVNULL)
        # The memo records compile writes belong to the build machine: a separate folder.
        env = dict(os.environ, ONNX_PREPACK_MEMO_DIR=os.path.join(work, "ci-memo"))
        subprocess.run([o.cli, "compile", m, "-o", c, "--target", "host"], check=True,
                       stdout=subprocess.DEVNULL, env=env)
        data = [f for f in glob.glob(os.path.join(build, "*")) if not f.endswith(".onnx")]
        if len(data) != 1:
            sys.exit(f"deploy_bench: expected one data file beside {c}, found {data}")
        data_bytes = os.path.getsize(data[0])
        feed = f"x=random:1x{o.width}"
        rows = {}

        def start(label, policy, memo_dir):
            d = run_json([o.cli, "run", os.path.join(prod, "m.onnx"), "--verify", policy,
                          "--memo-dir", memo_dir, "--json", "--input", feed,
                          "--threads", str(o.threads)])
            tm = d["timings_ms"]
            rows.setdefault(label, []).append((tm["time_to_first_output"] / 1e3,
                                               tm["verify"] / 1e3, d["totals"]["bytes_hashed"]))

        for r in range(o.rounds):
            shutil.rmtree(prod, ignore_errors=True)
            rows.setdefault("cp -r", []).append((timed(["cp", "-r", build, prod]), 0.0, 0))
            memo = os.path.join(work, f"prod-memo-{r}")
            shutil.rmtree(memo, ignore_errors=True)
            # Past the memo's timestamp granularity (20 ms) after the copy, as any real start is.
            time.sleep(0.05)
            start("memo, first start after the copy", "memo", memo)
            start("memo, second start", "memo", memo)
            start("full", "full", memo)
            start("off", "off", memo)
            rows.setdefault("b3sum", []).append(
                (timed(["b3sum", "--num-threads", str(o.threads), data[0]]), 0.0, data_bytes))
        print(f"deploy_bench {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
              f"{o.layers} x {o.width}^2 FLOAT ({data_bytes / GIB:.2f} GiB data file), threads "
              f"{o.threads}, {o.rounds} rounds, load average {os.getloadavg()[0]:.2f}")
        print("| start | median time to first output s | median verify s | GiB hashed | GiB/s |")
        print("|---|---|---|---|---|")
        med = {}
        for label, vals in rows.items():
            first = statistics.median(v[0] for v in vals)
            verify = statistics.median(v[1] for v in vals)
            hashed = statistics.median(v[2] for v in vals) / GIB
            med[label] = (first, verify, hashed)
            inside = first if label == "b3sum" else verify
            rate = f"{hashed / inside:.2f}" if hashed and inside > 0 else "-"
            shown = "-" if label == "b3sum" else f"{verify:.3f}"
            print(f"| {label} | {first:.3f} | {shown} | {hashed:.2f} | {rate} |")
        full, first_memo = med["full"], med["memo, first start after the copy"]
        b3 = med["b3sum"]
        full_rate = full[2] / full[1] if full[1] > 0 else 0.0
        b3_rate = b3[2] / b3[0] if b3[0] > 0 else 0.0
        print(f"ratios (medians): first memo start / full {first_memo[0] / full[0]:.3f}; "
              f"second memo start / off {med['memo, second start'][0] / med['off'][0]:.3f}; "
              f"full hashing rate / b3sum all-core rate {full_rate / b3_rate:.3f}")
    finally:
        if not o.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
