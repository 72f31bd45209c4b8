#!/usr/bin/env python3
"""An int4 decoder (the genai form `generate decoder` writes) in onnx-prepack and in ONNX Runtime,
side by side, fresh processes, interleaved, medians (issue 20's 7B-class acceptance).

Per round and thread count, in shuffled order:
  ours  `onnx-prepack complete COMPILED --prompt IDS --max-new-tokens STEPS+1 --threads T --json`
        on the compiled model (every weight a hit, page cache warm): time to first token from
        the engine's open (parse, resolve, map, plan, prompt step), and the decode steps' rate;
  ORT   `node bench/ort_decode.js MODEL --prompt IDS --steps STEPS --threads T` on the source
        model: session create + the prompt step, and its decode steps (its own non-shared cache).
Then: decode GB/s (the weight bytes a step reads, over the median step time) against the
machine's read bandwidth (build/bench/read_bandwidth), and --pss N processes of ours generating
at once: their total PSS (the packs are one mapped copy in the page cache) against N times one
process's RSS.

usage: llm_bench.py --cli build/src/cli/onnx-prepack --model M.onnx --compiled C.onnx
                    [--rounds 3] [--threads 1,2] [--prompt-len 16] [--steps 16] [--pss 4]
                    [--bandwidth build/bench/read_bandwidth] [--json OUT]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sh_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd[:3]), p.returncode, p.stderr[-2000:]))
    return json.loads(p.stdout[p.stdout.index("{"):p.stdout.rindex("}") + 1])


def ours_cmd(a, threads, steps):
    ids = ",".join(str(100 + i) for i in range(a.prompt_len))
    return [a.cli, "complete", a.compiled, "--prompt", ids, "--max-new-tokens", str(steps + 1),
            "--threads", str(threads), "--verify", "memo", "--json"]


def ours(a, threads):
    d = sh_json(ours_cmd(a, threads, a.steps))
    s = d["stats"]
    return {"ttft_ms": s["time_to_first_token_ms"], "first_step_ms": s["first_token_ms"],
            "step_ms": s["decode_ms"] / max(1, s["decode_steps"]), "tokens": d["new_tokens"][0]}


def ort(a, threads):
    ids = ",".join(str(100 + i) for i in range(a.prompt_len))
    d = sh_json(["node", os.path.join(HERE, "ort_decode.js"), a.model, "--prompt", ids,
                 "--steps", str(a.steps), "--threads", str(threads)])
    return {"ttft_ms": d["create_ms"] + d["first_token_ms"], "create_ms": d["create_ms"],
            "first_step_ms": d["first_token_ms"], "step_ms": statistics.median(d["decode_ms"]),
            "tokens": d["tokens"]}


def weight_bytes(path):
    """Bytes of the files beside the model that its weights live in (what a step reads)."""
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
               if f.startswith(base) and f.endswith(".data"))


def pss_kib(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            vals = {}
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    vals[parts[0][:-1]] = int(parts[1])
            return vals
    except OSError:
        return None


def shared_pss(a, n):
    """n processes of ours generating at once; total PSS and RSS sampled while all are alive."""
    procs = [subprocess.Popen(ours_cmd(a, 1, 4 * a.steps), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(n)]
    best = None
    while all(p.poll() is None for p in procs):
        vals = [pss_kib(p.pid) for p in procs]
        if all(v is not None for v in vals):
            total = {k: sum(v.get(k, 0) for v in vals) for k in ("Rss", "Pss", "Pss_Anon",
                                                                   "Pss_File")}
            if best is None or total["Pss"] > best["Pss"]:
                best = total
        time.sleep(0.2)
    for p in procs:
        p.wait()
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--compiled", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--prompt-len", type=int, default=16)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--pss", type=int, default=4)
    ap.add_argument("--bandwidth", default=os.path.join(HERE, "..", "build", "bench",
                                                          "read_bandwidth"))
    ap.add_argument("--json")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    runs = {(who, t): [] for who in ("ours", "ort") for t in threads}
    rng = random.Random(1)
    for r in range(a.rounds):
        order = [(who, t) for who in ("ours", "ort") for t in threads]
        rng.shuffle(order)
        for who, t in order:
            res = ours(a, t) if who == "ours" else ort(a, t)
            runs[(who, t)].append(res)
            print("round %d %-4s %dt: ttft %.0f ms, step %.1f ms" % (r, who, t, res["ttft_ms"],
                                                                    res["step_ms"]), flush=True)
    wbytes = weight_bytes(a.compiled)
    report = {"weight_bytes": wbytes, "rows": []}
    for t in threads:
        med = {who: {k: statistics.median(x[k] for x in runs[(who, t)])
                     for k in ("ttft_ms", "first_step_ms", "step_ms")} for who in ("ours", "ort")}
        same = runs[("ours", t)][0]["tokens"] == runs[("ort", t)][0]["tokens"]
        bw = None
        if os.path.exists(a.bandwidth):
            bw = sh_json([a.bandwidth, "--threads", str(t)])["gb_per_s"]
        row = {"threads": t, "ours": med["ours"], "ort": med["ort"],
               "ttft_ratio_ort_over_ours": med["ort"]["ttft_ms"] / med["ours"]["ttft_ms"],
               "decode_tps_ours": 1000 / med["ours"]["step_ms"],
               "decode_tps_ort": 1000 / med["ort"]["step_ms"],
               "decode_gb_per_s_ours": wbytes / med["ours"]["step_ms"] / 1e6,
               "decode_gb_per_s_ort": wbytes / med["ort"]["step_ms"] / 1e6,
               "read_bandwidth_gb_per_s": bw, "same_tokens": same}
        report["rows"].append(row)
        print(json.dumps(row), flush=True)
    if a.pss > 0:
        report["pss"] = {"processes": a.pss, "kib": shared_pss(a, a.pss)}
        print(json.dumps(report["pss"]), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
