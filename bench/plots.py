#!/usr/bin/python3
"""Plots for docs/benchmarks.md from the JSON lines the benchmarks write (issue 21).

  load.png    time to first output against model size: ours cold (packs every weight),
              ours warm `full` (hashes, then maps the packs), ours warm `memo` (maps the packs),
              ONNX Runtime create + first run; medians of bench/load_bench.py --json
  steady.png  steady run, ours (compiled, memo) / ONNX Runtime, per model and thread count;
              medians of bench/model_bench.py --json, and of the MLPs of --load when given
              (below 1: ours is faster)

usage: bench/plots.py --load LOAD.jsonl --models MODELS.jsonl --out docs/img
Needs Debian's python3-matplotlib (apt-get install python3-matplotlib).
"""
import argparse
import collections
import json
import os
import statistics
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plots.py: matplotlib is missing (apt-get install python3-matplotlib)")

SIZE_MIB = {"16m": 16, "64m": 64, "256m": 256, "1g": 1024}
LOAD_LABELS = {
    "ours_cold": "ours, cold (packs at load)",
    "ours_full": "ours, compiled, --verify full",
    "ours_memo": "ours, compiled, --verify memo",
    "ort": "ONNX Runtime, create + first run",
}


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_plot(records, out, title):
    by = collections.defaultdict(list)
    for r in records:
        by[(r["config"], r["size"])].append(r["ttfo"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    all_sizes = sorted({SIZE_MIB[s] for (c, s) in by})
    for config, label in LOAD_LABELS.items():
        sizes = sorted({s for (c, s) in by if c == config}, key=lambda s: SIZE_MIB[s])
        if not sizes:
            continue
        xs = [SIZE_MIB[s] for s in sizes]
        ys = [statistics.median(by[(config, s)]) for s in sizes]
        ax.plot(xs, ys, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(all_sizes)
    ax.set_xticklabels([f"{m} MiB" if m < 1024 else f"{m // 1024} GiB" for m in all_sizes])
    ax.set_yscale("log")
    ax.set_xlabel("model size (MiB of FLOAT weights)")
    ax.set_ylabel("time to first output (ms, median)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def steady_plot(records, out, title):
    by = collections.defaultdict(list)
    for r in records:
        by[(r["model"], r["threads"], r["config"])].append(r["steady"])
    keys = sorted({(m, t) for (m, t, c) in by if c == "ort"})
    labels, ratios = [], []
    for m, t in keys:
        if (m, t, "ours_memo") not in by:
            continue
        labels.append(f"{m}\n{t} thread{'s' if t > 1 else ''}")
        ratios.append(statistics.median(by[(m, t, "ours_memo")]) /
                      statistics.median(by[(m, t, "ort")]))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(labels)), 4.5))
    bars = ax.bar(range(len(labels)), ratios, color=["#4c72b0" if r <= 1 else "#dd8452"
                                                     for r in ratios])
    ax.axhline(1.0, color="black", linewidth=1)
    for b, r in zip(bars, ratios):
        ax.text(b.get_x() + b.get_width() / 2, r, f"{r:.2f}", ha="center", va="bottom")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("steady run, ours / ONNX Runtime (median)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", help="bench/load_bench.py --json output")
    ap.add_argument("--models", help="bench/model_bench.py --json output")
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--title", default="", help="appended to each title (date, machine)")
    a = ap.parse_args()
    if not a.load and not a.models:
        sys.exit("plots.py: give --load and/or --models")
    os.makedirs(a.out, exist_ok=True)
    if a.load:
        load_plot(read_jsonl(a.load), os.path.join(a.out, "load.png"),
                  "Time to first output, generated MLPs " + a.title)
        print(os.path.join(a.out, "load.png"))
    if a.models:
        records = read_jsonl(a.models)
        if a.load:  # the generated MLPs' steady runs too, one bar per size
            records += [dict(r, model="mlp " + r["size"]) for r in read_jsonl(a.load)
                        if r["config"] in ("ours_memo", "ort")]
        steady_plot(records, os.path.join(a.out, "steady.png"),
                    "Steady run against ONNX Runtime " + a.title)
        print(os.path.join(a.out, "steady.png"))


if __name__ == "__main__":
    main()
