#!/usr/bin/python3
"""Whole-model benchmark against ONNX Runtime on real models (PaddleOCR det/rec/cls, or any
model with one float input): steady run and time to first output of

  ours_plain  the model as exported, no compiled entries: every weight packed at load
  ours_memo   the compiled model (compile --lift-constants), --verify memo: packs mapped
  ort         ONNX Runtime (onnxruntime-node, CPU EP, default options) create + first run

Every measurement is a fresh process; configurations are interleaved in a shuffled order per
round; medians (min-max) are printed, per thread count. Run with /usr/bin/python3.

usage: bench/model_bench.py --cli build/src/cli/onnx-prepack [--models ocr_det,ocr_rec,ocr_cls] [--json OUT.jsonl]
                            [--model NAME=PATH:INPUT=1x3x48x320 ...] [--threads 1,2]
                            [--rounds 5] [--runs 20] [--workdir DIR]
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
OCR = os.path.join(HERE, "..", "tools", "peers", "node_modules", "@gutenye", "ocr-models",
                   "assets")
KNOWN = {
    "ocr_det": (os.path.join(OCR, "ch_PP-OCRv4_det_infer.onnx"), "x", "1x3x640x640"),
    "ocr_rec": (os.path.join(OCR, "ch_PP-OCRv4_rec_infer.onnx"), "x", "1x3x48x320"),
    "ocr_cls": (os.path.join(OCR, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), "x", "1x3x48x192"),
}


def sh(cmd, env=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    return r.stdout


def ours(cli, model, inp, dims, threads, runs, verify, env):
    j = json.loads(sh([cli, "run", model, "--input", "%s=random:%s" % (inp, dims), "--threads",
                       str(threads), "--repeat", str(runs), "--verify", verify, "--json"], env))
    t = j["timings_ms"]
    return {"ttfo": t["time_to_first_output"], "steady": t["steady_run_median"],
            "hits": j["totals"]["hits"], "misses": j["totals"]["misses"]}


def ort(model, inp, dims, threads, runs, env):
    j = json.loads(sh(["node", os.path.join(HERE, "ort_load.js"), model, inp, dims,
                       "--threads", str(threads), "--runs", str(runs)], env))
    return {"ttfo": j["time_to_first_output_ms"], "steady": j["steady_median_ms"]}


def fmt(values):
    m = statistics.median(values)
    return "%.1f (%.1f-%.1f)" % (m, min(values), max(values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--models", default="ocr_det,ocr_rec,ocr_cls")
    ap.add_argument("--model", action="append", default=[],
                    help="NAME=PATH:INPUT=DIMS, for a model not built in")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--workdir", default="/tmp/onnx-prepack-model-bench")
    ap.add_argument("--json", default="", help="also write every measurement here (JSON lines)")
    a = ap.parse_args()
    records = []
    os.makedirs(a.workdir, exist_ok=True)
    env = dict(os.environ, ONNX_PREPACK_MEMO_DIR=os.path.join(a.workdir, "memo"))
    models = {m: KNOWN[m] for m in a.models.split(",") if m}
    for spec in a.model:
        name, rest = spec.split("=", 1)
        path, io = rest.rsplit(":", 1)
        inp, dims = io.split("=")
        models[name] = (path, inp, dims)
    print("machine: %s, %d cores; %s" % (os.uname().release, os.cpu_count(),
                                         time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    for name, (path, inp, dims) in models.items():
        compiled = os.path.join(a.workdir, name + "_compiled.onnx")
        # Always compiled by this CLI: an older binary's output may no longer be a hit.
        sh([a.cli, "compile", path, "-o", compiled, "--lift-constants"], env)
        for threads in [int(t) for t in a.threads.split(",")]:
            # Makes the memo records once, outside the measurement.
            ours(a.cli, compiled, inp, dims, threads, 0, "memo", env)
            configs = {
                "ours_plain": lambda: ours(a.cli, path, inp, dims, threads, a.runs, "full", env),
                "ours_memo": lambda: ours(a.cli, compiled, inp, dims, threads, a.runs, "memo",
                                          env),
                "ort": lambda: ort(path, inp, dims, threads, a.runs, env),
            }
            res = {k: [] for k in configs}
            for _ in range(a.rounds):
                order = list(configs)
                random.shuffle(order)
                for k in order:
                    res[k].append(configs[k]())
                    records.append(dict(res[k][-1], model=name, threads=threads, config=k))
            print("\n### %s, input %s %s, threads %d, %d rounds x %d runs\n" %
                  (name, inp, dims, threads, a.rounds, a.runs))
            print("| config | time to first output (ms) | steady run (ms) | hits/misses |")
            print("|---|---|---|---|")
            for k, rs in res.items():
                hm = "%d/%d" % (rs[0]["hits"], rs[0]["misses"]) if "hits" in rs[0] else "-"
                print("| %s | %s | %s | %s |" % (k, fmt([x["ttfo"] for x in rs]),
                                                 fmt([x["steady"] for x in rs]), hm))
            med = lambda k, f: statistics.median([x[f] for x in res[k]])
            print("\nratios (medians): steady ours_memo / ort %.2f, ours_plain / ort %.2f; "
                  "time to first output ours_memo / ort create+first run %.2f" %
                  (med("ours_memo", "steady") / med("ort", "steady"),
                   med("ours_plain", "steady") / med("ort", "steady"),
                   med("ours_memo", "ttfo") / med("ort", "ttfo")))
            sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
