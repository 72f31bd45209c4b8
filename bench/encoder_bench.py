#!/usr/bin/python3
"""BERT-class encoders against ONNX Runtime (issue 20): `onnx-prepack generate encoder` models
(BERT-base 12 x 768, MiniLM-L6 6 x 384; fp32 and the quantize_dynamic int8 form), seq 128,
batch 1, random token ids. Per thread count, fresh processes interleaved in a shuffled order per
round:

  ours  `run M --input ... --repeat R --json`: steady-run median, and the first output of a
        compiled model (`compile`, packs mapped, `--verify memo`: load + plan + first run)
  ort   bench/ort_steady.js: steady-run median, and session create + first run

Medians over rounds (min-max) as a markdown table. Run with /usr/bin/python3.

usage: bench/encoder_bench.py --cli build/src/cli/onnx-prepack [--models bert-base,minilm-l6]
                              [--threads 1,2] [--rounds 5] [--runs 10] [--seq 128] [--workdir DIR]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    return r.stdout


def fmt(v):
    return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--models", default="bert-base,minilm-l6")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--workdir", default="")
    a = ap.parse_args()
    work = a.workdir or tempfile.mkdtemp(prefix="encoder_bench.")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    feeds = {"input_ids": rng.integers(0, 1000, size=(1, a.seq)).astype(np.int64),
             "attention_mask": np.ones((1, a.seq), np.int64),
             "token_type_ids": np.zeros((1, a.seq), np.int64)}
    files = {}
    for n, arr in feeds.items():
        files[n] = os.path.join(work, n + ".npy")
        np.save(files[n], arr)
    models = {}
    for preset in a.models.split(","):
        for int8 in (False, True):
            name = preset + ("-int8" if int8 else "")
            path = os.path.join(work, name + ".onnx")
            if not os.path.exists(path):
                sh([a.cli, "generate", "encoder", "--preset", preset, "-o", path] +
                   (["--int8"] if int8 else []))
            compiled = os.path.join(work, name + ".c.onnx")
            if not os.path.exists(compiled):
                sh([a.cli, "compile", path, "-o", compiled])
            models[name] = (path, compiled)
    ins = sum((["--input", "%s=%s" % (n, f)] for n, f in files.items()), [])
    res = {}
    for t in [int(x) for x in a.threads.split(",")]:
        for r in range(a.rounds):
            jobs = [(m, k) for m in models for k in ("ours", "ours_first", "ort")]
            random.shuffle(jobs)
            for m, k in jobs:
                path, compiled = models[m]
                if k == "ours":
                    j = json.loads(sh([a.cli, "run", path] + ins + ["--threads", str(t), "--repeat",
                                      str(a.runs), "--cache", "off", "--json"]))
                    res.setdefault((m, t, "ours"), []).append(j["timings_ms"]["steady_run_median"])
                elif k == "ours_first":
                    # Warm: the page cache holds the files and the digests compile recorded
                    # are trusted for the same file identity (--verify memo, docs/cli.md).
                    j = json.loads(sh([a.cli, "run", compiled] + ins + ["--threads", str(t),
                                      "--cache", "off", "--verify", "memo", "--json"]))
                    tm = j["timings_ms"]
                    res.setdefault((m, t, "ours_first"), []).append(
                        tm["time_to_first_output"])
                else:
                    j = json.loads(sh(["node", os.path.join(HERE, "ort_steady.js"), path,
                                       str(a.runs), "--threads", str(t)] +
                                      ["%s=%s" % (n, f) for n, f in files.items()]))
                    res.setdefault((m, t, "ort"), []).append(j["median_ms"])
                    res.setdefault((m, t, "ort_first"), []).append(j["create_ms"] + j["first_ms"])
    print("encoders, seq %d, batch 1, %d rounds, %d steady runs each\n" % (a.seq, a.rounds, a.runs))
    print("| model | threads | ours steady (ms) | ORT steady (ms) | ours / ORT | ours compiled, first output (ms) | ORT create + first run (ms) | ORT first / ours first |")
    print("|---|---|---|---|---|---|---|---|")
    for m in models:
        for t in [int(x) for x in a.threads.split(",")]:
            o, q = res[(m, t, "ours")], res[(m, t, "ort")]
            of, qf = res[(m, t, "ours_first")], res[(m, t, "ort_first")]
            print("| %s | %d | %s | %s | %.2f | %s | %s | %.1f |" % (
                m, t, fmt(o), fmt(q), statistics.median(o) / statistics.median(q), fmt(of), fmt(qf),
                statistics.median(qf) / statistics.median(of)))


if __name__ == "__main__":
    main()
