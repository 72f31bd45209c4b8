#!/usr/bin/env python3
"""Differential fuzzer: random single-operator models through onnx-prepack and ONNX Runtime.

usage: run.py --cli build/src/cli/onnx-prepack [--count N] [--seed S] [--ops A,B] [--jobs J]
              [--keep DIR] [--report FILE.json] [--show N]

Model i is generated for operator i mod (the operators `onnx-prepack ops --json` lists), from
(seed, i) alone (gen.py). Ours runs in a child process per model (`onnx-prepack run`, one
thread, ONNX_PREPACK_MEMORY_BUDGET=256M, killed past --timeout seconds, peak RSS from wait4);
ORT runs the same models through ort_batch.js (onnxruntime-node) under the same timeout per
model. Each model gets a class (CLASSES) and each difference a verdict (triage.py); exits 1
when a case crashed, hung, went over the memory bound, failed internally, or differs without a
verdict. docs/reliability.md, "Differential fuzzing against ONNX Runtime".
"""
import argparse
import collections
import concurrent.futures
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from difffuzz import gen, triage  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET = "256M"
RSS_LIMIT_MIB = 256 + 64

CLASSES = [
    "agree",           # both ran, same dtypes, shapes and values
    "both_refuse",     # both refused the model
    "ours_refuses",    # ours refused, ORT answered
    "ort_refuses",     # ours answered, ORT refused
    "differ",          # both answered, differently
    "ours_crash",      # ours died of a signal
    "ours_hang",       # ours ran past the timeout
    "ours_rss",        # ours' peak RSS past the budget + 64 MiB
    "ours_internal",   # ours exited 3 (an internal failure) or with another unexpected code
    "ort_failed",      # ORT crashed or hung (ORT's, noted)
    "skipped",         # no model could be generated (reason listed)
]
FAILING = {"ours_crash", "ours_hang", "ours_rss", "ours_internal"}


def run_ours(cli, case_dir, feeds, timeout):
    out = os.path.join(case_dir, "ours")
    os.makedirs(out, exist_ok=True)
    cmd = [cli, "run", os.path.join(case_dir, "model.onnx"), "--threads", "1", "--output-dir", out]
    for name in feeds:
        cmd += ["--input", "%s=%s" % (name, os.path.join(case_dir, name + ".npy"))]
    env = dict(os.environ, ONNX_PREPACK_MEMORY_BUDGET=BUDGET)
    with open(os.path.join(case_dir, "ours.log"), "wb") as log:
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, env=env)
        hung = []
        timer = threading.Timer(timeout, lambda: (hung.append(1), p.kill()))
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
    rc = p.returncode
    msg = open(os.path.join(case_dir, "ours.log"), errors="replace").read().strip()
    return {"rc": rc, "hung": bool(hung), "rss_mib": usage.ru_maxrss / 1024.0,
            "seconds": time.monotonic() - start, "message": msg[-600:]}


def run_ort(cases, work, timeout):
    """Every case through ort_batch.js; a case past `timeout` is killed and the batch resumes."""
    results = {}
    pending = list(cases)
    while pending:
        manifest = [{"model": os.path.join(work, c.name, "model.onnx"),
                     "out_dir": os.path.join(work, c.name, "ort"),
                     "inputs": {n: os.path.join(work, c.name, n + ".npy") for n in c.feeds}}
                    for c in pending]
        mpath = os.path.join(work, "manifest.json")
        json.dump(manifest, open(mpath, "w"))
        p = subprocess.Popen(["node", os.path.join(HERE, "ort_batch.js"), mpath],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        done, current, started, buf = 0, None, time.monotonic(), b""
        fd = p.stdout.fileno()
        while True:
            limit = timeout + (20 if current is None and done == 0 else 0)  # node's start
            r, _, _ = select.select([fd], [], [], max(0.05, started + limit - time.monotonic()))
            if not r:
                if time.monotonic() - started < limit:
                    continue
                p.kill()
                p.wait()
                i = current if current is not None else done
                results[pending[i].name] = {"failed": "hung (over %gs)" % timeout}
                pending = pending[i + 1:]
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                p.wait()
                if done < len(pending):  # died in a case
                    i = current if current is not None else done
                    err = p.stderr.read().decode(errors="replace")[-300:]
                    results[pending[i].name] = {"failed": "exit %d: %s" % (p.returncode, err)}
                    pending = pending[i + 1:]
                else:
                    pending = []
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                kind, i = line.decode().split()
                if kind == "BEGIN":
                    current, started = int(i), time.monotonic()
                else:
                    done, current, started = int(i) + 1, None, time.monotonic()
    return results


def load_outputs(d):
    if not os.path.isdir(d):
        return None, "no output"
    if os.path.exists(os.path.join(d, "error.txt")):
        return None, open(os.path.join(d, "error.txt"), errors="replace").read().strip()
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".npy"):
            out[f[:-4]] = np.load(os.path.join(d, f))
    return out, None


def tolerance(dtype):
    # float16 results round to 11 bits: one half ulp is 4.9e-4 relative.
    return (1e-3, 1e-3) if dtype == np.float16 else (1e-5, 1e-4)


def unordered_topk(case):
    """TopK with sorted=0: ONNX leaves the order of the k results undefined."""
    n = case.model.graph.node[0]
    return case.op == "TopK" and any(a.name == "sorted" and a.i == 0 for a in n.attribute)


def sort_topk(case, outs):
    """Both outputs in value order along the axis, so that the order does not count."""
    n = case.model.graph.node[0]
    axis = next((a.i for a in n.attribute if a.name == "axis"), -1)
    if "y0" not in outs or outs["y0"].ndim == 0:
        return outs
    keys = outs["y0"].astype(np.float64)
    order = np.argsort(keys, axis=axis, kind="stable")
    return {k: np.take_along_axis(v, order, axis=axis) for k, v in outs.items()}


def compare(ours, ort, case=None):
    """None when equal, else what differs."""
    if case is not None and unordered_topk(case) and set(ours) == set(ort):
        # Ties may pair other indices with equal values: compare the values only then.
        ours, ort = sort_topk(case, ours), sort_topk(case, ort)
        ours.pop("y1", None)
        ort.pop("y1", None)
    if set(ours) != set(ort):
        return "outputs %s vs ORT %s" % (sorted(ours), sorted(ort))
    for name in sorted(ort):
        a, b = ours[name], ort[name]
        if a.dtype != b.dtype:
            return "%s: dtype %s vs ORT %s" % (name, a.dtype, b.dtype)
        if a.shape != b.shape:
            return "%s: shape %s vs ORT %s" % (name, list(a.shape), list(b.shape))
        if a.dtype.kind in "fc":
            atol, rtol = tolerance(a.dtype)
            x, y = a.astype(np.float64), b.astype(np.float64)
            nan = np.isnan(x) != np.isnan(y)
            # An infinity matches only itself (the relative bound of an inf is inf).
            inf = (np.isinf(x) | np.isinf(y)) & (x != y)
            with np.errstate(invalid="ignore"):
                bad = nan | inf | (~np.isnan(y) & ~(np.abs(x - y) <= atol + rtol * np.abs(y)) &
                                   ~(x == y))
            if bad.any():
                i = int(np.flatnonzero(bad.reshape(-1))[0])
                return "%s: %d of %d differ, first [%d] %r vs ORT %r" % (
                    name, int(bad.sum()), bad.size, i, x.reshape(-1)[i], y.reshape(-1)[i])
        elif not np.array_equal(a, b):
            bad = a.reshape(-1) != b.reshape(-1)
            i = int(np.flatnonzero(bad)[0])
            return "%s: %d of %d differ, first [%d] %r vs ORT %r" % (
                name, int(bad.sum()), bad.size, i, a.reshape(-1)[i], b.reshape(-1)[i])
    return None


def classify(case, ours, ort_failed, work):
    d = os.path.join(work, case.name)
    if ours["hung"]:
        return "ours_hang", "over the timeout"
    if ours["rc"] < 0:
        return "ours_crash", "signal %d: %s" % (-ours["rc"], ours["message"][-200:])
    if ours["rss_mib"] > RSS_LIMIT_MIB:
        return "ours_rss", "peak RSS %.0f MiB" % ours["rss_mib"]
    if ours["rc"] not in (0, 2):
        return "ours_internal", "exit %d: %s" % (ours["rc"], ours["message"][-300:])
    if ort_failed:
        return "ort_failed", ort_failed
    ort_out, ort_err = load_outputs(os.path.join(d, "ort"))
    if ours["rc"] == 2:
        return ("both_refuse", ort_err) if ort_out is None else ("ours_refuses", ours["message"])
    our_out, _ = load_outputs(os.path.join(d, "ours"))
    if ort_out is None:
        return "ort_refuses", ort_err
    diff = compare(our_out, ort_out, case)
    return ("differ", diff) if diff else ("agree", None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", default="", help="comma-separated operators (default: every one)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--keep", help="keep the models and outputs in this folder")
    ap.add_argument("--report", help="write every case's class and verdict as JSON here")
    ap.add_argument("--show", type=int, default=20, help="cases listed per class")
    args = ap.parse_args()

    listed = json.loads(subprocess.run([args.cli, "ops", "--json"], check=True,
                                       capture_output=True, text=True).stdout)["operators"]
    ops = [o for o in listed if not args.ops or o in args.ops.split(",")]
    if not ops:
        sys.exit("run.py: no operator selected")
    work = args.keep or tempfile.mkdtemp(prefix="difffuzz.")
    os.makedirs(work, exist_ok=True)
    t0 = time.monotonic()

    cases = []
    for i in range(args.count):
        c = gen.generate(ops[i % len(ops)], i, args.seed)
        if c.model is not None:
            d = os.path.join(work, c.name)
            os.makedirs(d, exist_ok=True)
            onnx.save(c.model, os.path.join(d, "model.onnx"))
            for n, a in c.feeds.items():
                np.save(os.path.join(d, n + ".npy"), a)
            c.valid = c.mutation is None and gen.valid_hint(c) is not False
        cases.append(c)
    runnable = [c for c in cases if c.model is not None]
    t_gen = time.monotonic() - t0

    ort_thread_result = {}
    ort_thread = threading.Thread(target=lambda: ort_thread_result.update(
        run_ort(runnable, work, args.timeout)))
    ort_thread.start()
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs - 1)) as ex:
        ours = dict(zip([c.name for c in runnable], ex.map(
            lambda c: run_ours(args.cli, os.path.join(work, c.name), c.feeds, args.timeout),
            runnable)))
    ort_thread.join()

    rows = []
    for c in cases:
        if c.model is None:
            rows.append({"case": c.name, "op": c.op, "class": "skipped", "detail": c.skip,
                         "verdict": "not generated", "failing": False})
            continue
        failed = ort_thread_result.get(c.name, {}).get("failed")
        cls, detail = classify(c, ours[c.name], failed, work)
        verdict, failing = triage.verdict(c, cls, detail, ours[c.name]["message"])
        rows.append({"case": c.name, "op": c.op, "opset": c.opset, "mutation": c.mutation,
                     "valid": c.valid, "class": cls, "detail": detail, "verdict": verdict,
                     "failing": failing or cls in FAILING,
                     "rss_mib": round(ours[c.name]["rss_mib"], 1),
                     "seconds": round(ours[c.name]["seconds"], 3)})

    counts = collections.Counter(r["class"] for r in rows)
    verdicts = collections.Counter((r["class"], r["verdict"]) for r in rows
                                   if r["class"] not in ("agree", "skipped"))
    covered = sorted({r["op"] for r in rows if r["class"] != "skipped"})
    not_covered = {r["op"]: r["detail"] for r in rows if r["class"] == "skipped"
                   and r["op"] not in covered}
    failing = [r for r in rows if r["failing"]]
    print("difffuzz: %d models (seed %d), %d operators of %d registered covered, %.0f s "
          "(generation %.0f s)" % (len(rows), args.seed, len(covered), len(listed),
                                   time.monotonic() - t0, t_gen))
    for k in CLASSES:
        if counts[k]:
            print("  %-14s %6d" % (k, counts[k]))
    print("verdicts:")
    for (cls, v), n in sorted(verdicts.items()):
        print("  %-14s %6d  %s" % (cls, n, v))
    for op, why in sorted(not_covered.items()):
        print("not covered: %s (%s)" % (op, why))
    print("peak RSS of ours: %.0f MiB (limit %d)" % (
        max([r.get("rss_mib", 0) for r in rows] or [0]), RSS_LIMIT_MIB))
    shown = collections.Counter()
    for r in failing:
        if shown[r["class"]] < args.show:
            shown[r["class"]] += 1
            print("FAIL %s [%s opset %s%s] %s: %s" % (
                r["case"], r["class"], r.get("opset"),
                ", " + r["mutation"] if r.get("mutation") else "", r["verdict"],
                (r["detail"] or "")[:300]))
    if args.report:
        json.dump({"seed": args.seed, "count": args.count, "counts": counts,
                   "verdicts": {"%s: %s" % k: n for k, n in verdicts.items()},
                   "covered": covered, "not_covered": not_covered, "cases": rows},
                  open(args.report, "w"), indent=1, default=str)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if failing:
        print("difffuzz: %d failing cases" % len(failing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
