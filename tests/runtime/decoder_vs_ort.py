#!/usr/bin/env python3
"""The generated tiny decoder decodes greedily in onnx-prepack as in ONNX Runtime.

Each variant of `onnx-prepack generate decoder --preset tiny` runs an 8-token prompt (batch 2:
8 and 5 tokens) and then STEPS greedy steps, each step's present.N.* fed back as the next
past_key_values.N.*, in ONNX Runtime (tests/runtime/generate_llm_ort.js, one node process for
all variants) and in onnx-prepack (`onnx-prepack run` once per step, the variants in parallel
processes, each with its own tokens). The variants: genai form at accuracy level 0 and 4, with
and without zero points; a local window (5) shorter than the prompt; batch 2 right-padded
(what ONNX Runtime's CPU GroupQueryAttention expects); the optimum form batch 1 and batch 2
left-padded (attention_mask 0s on the left, position_ids counting the real tokens).

Checked per variant:
- our greedy token equals ONNX Runtime's at every step, every row;
- the logits of each row's last real position: level 0 (and the fp32 optimum form) within
  1e-4 of the step's max |logit|; level 4 (int8 activations) within ONNX Runtime's own level-4
  error, max |ORT level 4 - ORT level 0| over max |logit| at that step (the level-0 logits are
  the float-weight-equivalent ones), at every step where ONNX Runtime's level-0 and level-4
  token histories agree;
- `onnx-prepack compile M -o C` then `run C` on the prompt step gives bitwise the logits of the
  uncompiled model.

usage: decoder_vs_ort.py ONNX_PREPACK SOURCE_DIR [--keep DIR] [--steps N]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import llm_ort  # tests/runtime/llm_ort.py (this folder): ONNX Runtime's tokens and logits

LAYERS, KV_HEADS, HEAD = 2, 2, 32
PROMPT = [5, 17, 300, 42, 7, 99, 128, 3]
SHORT = [11, 23, 250, 4, 61]

# name: (generate options, form, prompts, padding, level, level-0 reference variant)
VARIANTS = {
    "genai_l0": (["--accuracy-level", "0"], "genai", [PROMPT], "right", 0, None),
    "genai_l4": (["--accuracy-level", "4"], "genai", [PROMPT], "right", 4, "genai_l0"),
    "genai_l0_nozp": (["--accuracy-level", "0", "--no-zero-points"], "genai", [PROMPT],
                      "right", 0, None),
    "genai_l4_nozp": (["--accuracy-level", "4", "--no-zero-points"], "genai", [PROMPT],
                      "right", 4, "genai_l0_nozp"),
    "genai_window5": (["--accuracy-level", "0", "--local-window", "5"], "genai", [PROMPT],
                      "right", 0, None),
    "genai_b2_right": (["--accuracy-level", "0"], "genai", [PROMPT, SHORT], "right", 0, None),
    "optimum_b1": (["--form", "optimum"], "optimum", [PROMPT], "right", 0, None),
    "optimum_b2_left": (["--form", "optimum"], "optimum", [PROMPT, SHORT], "left", 0, None),
}

FAILURES = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


def cli(exe, args):
    p = subprocess.run([exe] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s %s: exit %d: %s" % (exe, " ".join(args), p.returncode,
                                                   p.stderr[-1500:]))
    return p


def feeds(form, prompts, padding, step, last_tokens):
    """The step's input_ids, attention_mask and position_ids, as generate_llm_ort.js builds
    them, and the row of each sequence's last real position in the logits."""
    lens = [len(p) for p in prompts]
    P = max(lens)
    T = P + step
    left = padding == "left"
    if step == 0:
        if left:
            ids = [[0] * (P - len(p)) + p for p in prompts]
            mask = [[1 if j >= P - n else 0 for j in range(P)] for n in lens]
            pos = [[j - (P - n) if j >= P - n else 1 for j in range(P)] for n in lens]
            rows = [P - 1] * len(prompts)
        else:
            ids = [p + [0] * (P - len(p)) for p in prompts]
            mask = [[1 if j < n else 0 for j in range(P)] for n in lens]
            pos = [[j if j < n else 1 for j in range(P)] for n in lens]
            rows = [n - 1 for n in lens]
    else:
        ids = [[t] for t in last_tokens]
        if left:
            mask = [[1 if j >= P - n else 0 for j in range(T)] for n in lens]
        elif form == "genai":
            mask = [[1 if j < n + step else 0 for j in range(T)] for n in lens]
        else:
            mask = [[1 if (j < n or j >= P) else 0 for j in range(T)] for n in lens]
        pos = [[n + step - 1] for n in lens]
        rows = [0] * len(prompts)
    f = {"input_ids": np.array(ids, np.int64), "attention_mask": np.array(mask, np.int64)}
    if form == "optimum":
        f["position_ids"] = np.array(pos, np.int64)
    return f, rows


def run_ours(exe, name, model, tmp, steps):
    """Greedy loop in onnx-prepack: one `run` per step. Returns tokens [B][steps + 1], logits
    [B][steps + 1][V] and the prompt step's full logits."""
    _, form, prompts, padding, _, _ = VARIANTS[name]
    B = len(prompts)
    tokens = [[] for _ in range(B)]
    logits = [[] for _ in range(B)]
    past = {}
    for l in range(LAYERS):
        for kv in ("key", "value"):
            f = os.path.join(tmp, "%s_past0_%d_%s.npy" % (name, l, kv))
            np.save(f, np.zeros((B, KV_HEADS, 0, HEAD), np.float32))
            past["past_key_values.%d.%s" % (l, kv)] = f
    prompt_logits = None
    for step in range(steps + 1):
        d = os.path.join(tmp, "%s_step%02d" % (name, step))
        os.makedirs(d, exist_ok=True)
        f, rows = feeds(form, prompts, padding, step, [t[-1] for t in tokens] if step else None)
        args = ["run", model, "--threads", "1", "--output-dir", d]
        for k, v in f.items():
            path = os.path.join(d, "in_%s.npy" % k)
            np.save(path, v)
            args += ["--input", "%s=%s" % (k, path)]
        for k, v in past.items():
            args += ["--input", "%s=%s" % (k, v)]
        cli(exe, args)
        lg = np.load(os.path.join(d, "logits.npy"))
        if step == 0:
            prompt_logits = lg
        for b in range(B):
            logits[b].append(lg[b, rows[b]])
            tokens[b].append(int(np.argmax(lg[b, rows[b]])))
        for l in range(LAYERS):
            for kv in ("key", "value"):
                past["past_key_values.%d.%s" % (l, kv)] = os.path.join(
                    d, "present.%d.%s.npy" % (l, kv))
    # The compiled model on the prompt step: bitwise the uncompiled logits.
    compiled = os.path.join(tmp, name + "_compiled.onnx")
    cli(exe, ["compile", model, "-o", compiled, "--no-memo"])
    d = os.path.join(tmp, "%s_compiled_step00" % name)
    os.makedirs(d, exist_ok=True)
    f, _ = feeds(form, prompts, padding, 0, None)
    args = ["run", compiled, "--threads", "1", "--output-dir", d]
    for k in f:
        args += ["--input", "%s=%s" % (k, os.path.join(tmp, "%s_step00" % name, "in_%s.npy" % k))]
    for l in range(LAYERS):
        for kv in ("key", "value"):
            args += ["--input", "past_key_values.%d.%s=%s" % (
                l, kv, os.path.join(tmp, "%s_past0_%d_%s.npy" % (name, l, kv)))]
    out = cli(exe, args)
    m = re.search(r"weights: (\d+) hits, 0 misses", out.stdout)
    hit = bool(m) and int(m.group(1)) > 0
    compiled_logits = np.load(os.path.join(d, "logits.npy"))
    return {"tokens": tokens, "logits": np.array(logits), "prompt": prompt_logits,
            "compiled": compiled_logits, "compiled_hit": hit}


def rel_per_step(a, b):
    """max |a - b| over max |b|, per step (axis 1), over rows and vocab."""
    return np.abs(a - b).max(axis=(0, 2)) / np.abs(b).max(axis=(0, 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("source")
    ap.add_argument("--keep")
    ap.add_argument("--steps", type=int, default=32)
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="decoder_vs_ort_")
    os.makedirs(tmp, exist_ok=True)
    try:
        run(a.cli, a.source, tmp, a.steps)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


def run(exe, source, tmp, steps):
    models = {}
    for name, (opts, *_rest) in VARIANTS.items():
        models[name] = os.path.join(tmp, name + ".onnx")
        cli(exe, ["generate", "decoder", "--preset", "tiny", "-o", models[name]] + opts)

    # ONNX Runtime: one node process for every variant, while ours run beside it.
    jobs = []
    dims = {"layers": LAYERS, "kv_heads": KV_HEADS, "head_size": HEAD}
    for name, (_, form, prompts, padding, _, _) in VARIANTS.items():
        jobs.append(llm_ort.decoder_job(models[name], form, prompts, steps,
                                        os.path.join(tmp, name + "_ort.json"), padding, dims))
    node = llm_ort.start(source, jobs, tmp)
    workers = max(2, min(len(VARIANTS), os.cpu_count() or 2))
    with ThreadPoolExecutor(workers) as pool:
        futs = {n: pool.submit(run_ours, exe, n, models[n], tmp, steps) for n in VARIANTS}
        ours = {}
        for n, fu in futs.items():
            try:
                ours[n] = fu.result()
            except (RuntimeError, OSError, ValueError) as e:
                check(False, "%s: onnx-prepack ran every step (%s)" % (n, e))
    try:
        results = llm_ort.finish(node, jobs)
    except RuntimeError as e:
        raise SystemExit(str(e))
    ort = {}
    for n, d in zip(VARIANTS, results):
        if "error" in d:
            check(False, "%s: ONNX Runtime ran: %s" % (n, d["error"][:300]))
            continue
        ort[n] = {"tokens": d["tokens"], "logits": np.array(d["logits"], np.float32)}

    summary = []
    for n, (_, form, prompts, padding, level, ref) in VARIANTS.items():
        if n not in ours or n not in ort:
            continue
        o, r = ours[n], ort[n]
        B = len(prompts)
        check(o["logits"].shape == r["logits"].shape == (B, steps + 1, 512),
              "%s: logits [%d, %d, 512] from both" % (n, B, steps + 1))
        first = None
        for b in range(B):
            for s in range(steps + 1):
                if o["tokens"][b][s] != r["tokens"][b][s] and first is None:
                    first = (b, s)
        check(first is None, "%s: same greedy tokens at all %d steps%s" % (
            n, steps + 1, "" if first is None else
            " (first difference row %d step %d: ours %d, ORT %d)" % (
                first[0], first[1], o["tokens"][first[0]][first[1]],
                r["tokens"][first[0]][first[1]])))
        # Compare logits only while the token histories agree (the same feeds).
        upto = steps + 1 if first is None else first[1] + 1
        err = rel_per_step(o["logits"][:, :upto], r["logits"][:, :upto])
        worst = int(np.argmax(err))
        line = "%-16s %s B=%d %-5s level %d: tokens %s; ours vs ORT max %.2e (step %d)" % (
            n, form, B, padding, level, "equal" if first is None else "DIFFER", err[worst], worst)
        if level == 0:
            check(err[worst] <= 1e-4, "%s: logits within 1e-4 of max |logit| at every step "
                  "(worst %.2e at step %d)" % (n, err[worst], worst))
        else:
            rr = ort.get(ref)
            if rr is None:
                check(False, "%s: ONNX Runtime level-0 reference %s" % (n, ref))
                continue
            # ORT's own level-4 error, at the steps where its level-0 and level-4 histories
            # agree (the same feeds).
            same = steps + 1
            for s in range(steps + 1):
                if any(rr["tokens"][b][s] != r["tokens"][b][s] for b in range(B)):
                    same = s + 1
                    break
            m = min(same, upto)
            own = rel_per_step(r["logits"][:, :m], rr["logits"][:, :m])
            ours0 = rel_per_step(o["logits"][:, :m], rr["logits"][:, :m])
            bad = [s for s in range(m) if err[s] > own[s]]
            check(not bad, "%s: ours vs ORT level 4 (max %.2e) within ORT's own level-4 error "
                  "vs level 0 (min %.2e, max %.2e) at each of %d steps%s" % (
                      n, err[:m].max(), own.min(), own.max(), m,
                      "" if not bad else " (exceeded at steps %s)" % bad))
            line += "; ORT l4 vs ORT l0 %.2e..%.2e, ours l4 vs ORT l0 max %.2e (%d steps)" % (
                own.min(), own.max(), ours0.max(), m)
        same_bits = (o["compiled"].shape == o["prompt"].shape and
                     o["compiled"].tobytes() == o["prompt"].tobytes())
        check(same_bits and o["compiled_hit"],
              "%s: compiled model's prompt logits bitwise the uncompiled ones (packed entries "
              "all hit: %s)" % (n, o["compiled_hit"]))
        line += "; compiled %s" % ("bitwise" if same_bits else "DIFFERS")
        summary.append(line)
    print("\nsummary (%d prompt + %d greedy steps each):" % (1, steps))
    for line in summary:
        print("  " + line)


if __name__ == "__main__":
    sys.exit(main())
