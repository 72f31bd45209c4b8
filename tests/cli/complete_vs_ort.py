#!/usr/bin/env python3
"""`onnx-prepack complete` (the engine's generation loop, docs/cli.md "complete") gives ONNX
Runtime's greedy tokens, and behaves at its edges.

ONNX Runtime runs the same tiny decoders through tests/runtime/generate_llm_ort.js (present fed
back as past, growing attention mask) in one node process. Checked:
- greedy tokens equal ORT's for 16 steps after the prompt: genai form batch 1 and batch 2
  right-padded, optimum form batch 2 left-padded, genai with a local window;
- --json keys and counts (sequences = prompt + new tokens, stats);
- seeded sampling: the same seed gives the same tokens, another seed others;
- --stop-id ends a sequence at the first such token (kept);
- bad input exits 2 with a message naming the problem: an id past the vocabulary, an empty
  prompt id, --top-p 0, --max-length shorter than the prompt, a model that is no decoder.

usage: complete_vs_ort.py ONNX_PREPACK SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime"))
import llm_ort  # noqa: E402 - tests/runtime/llm_ort.py: ONNX Runtime's greedy tokens

PROMPT = [5, 17, 300, 42, 7, 99, 128, 3]
SHORT = [11, 23, 250, 4, 61]
STEPS = 16
FAILURES = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        FAILURES.append(what)


def run(exe, args):
    return subprocess.run([exe] + args, capture_output=True, text=True)


def complete(exe, model, prompts, extra=()):
    args = ["complete", model, "--threads", "1", "--max-new-tokens", str(STEPS + 1), "--json"]
    for p in prompts:
        args += ["--prompt", ",".join(map(str, p))]
    p = run(exe, args + list(extra))
    if p.returncode != 0:
        raise RuntimeError("complete failed (%d): %s" % (p.returncode, p.stderr))
    return json.loads(p.stdout)


def main():
    exe, source = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="complete_vs_ort_")
    variants = {
        "genai_b1": (["--form", "genai"], "genai", [PROMPT], "right"),
        "genai_b2": (["--form", "genai"], "genai", [PROMPT, SHORT], "right"),
        "genai_window4": (["--form", "genai", "--local-window", "4"], "genai", [PROMPT], "right"),
        "optimum_b2": (["--form", "optimum"], "optimum", [PROMPT, SHORT], "left"),
    }
    jobs = []
    for name, (opts, form, prompts, padding) in variants.items():
        model = os.path.join(tmp, name + ".onnx")
        p = run(exe, ["generate", "decoder", "--preset", "tiny", "-o", model] + opts)
        if p.returncode != 0:
            sys.exit(p.stderr)
        jobs.append(llm_ort.decoder_job(model, form, prompts, STEPS,
                                        os.path.join(tmp, name + "_ort.json"), padding))
    for job, name, ort in zip(jobs, variants, llm_ort.run(source, jobs, tmp)):
        if "error" in ort:
            check(False, "%s: ONNX Runtime failed: %s" % (name, ort["error"]))
            continue
        ours = complete(exe, job["model"], job["prompts"])
        check(ours["form"] == job["form"], "%s: form %s" % (name, ours["form"]))
        check(ours["new_tokens"] == ort["tokens"],
              "%s: %d greedy steps give ONNX Runtime's tokens" % (name, STEPS))
        seqs_ok = all(s == p + t for s, p, t in
                      zip(ours["sequences"], job["prompts"], ours["new_tokens"]))
        st = ours["stats"]
        check(seqs_ok and st["decode_steps"] == STEPS and
              st["new_tokens"] == len(job["prompts"]) * (STEPS + 1) and
              st["prompt_tokens"] == sum(map(len, job["prompts"])) and
              st["time_to_first_token_ms"] >= st["first_token_ms"] > 0,
              "%s: --json sequences and stats" % name)

    genai = jobs[0]["model"]
    sample = ["--sample", "--temperature", "1.5", "--top-k", "50", "--top-p", "0.95"]
    a = complete(exe, genai, [PROMPT], sample + ["--seed", "7"])["new_tokens"]
    b = complete(exe, genai, [PROMPT], sample + ["--seed", "7"])["new_tokens"]
    c = complete(exe, genai, [PROMPT], sample + ["--seed", "8"])["new_tokens"]
    check(a == b and a != c, "seeded sampling: same seed same tokens, another seed others")
    greedy = complete(exe, genai, [PROMPT])["new_tokens"][0]
    stop = greedy[2]
    stopped = complete(exe, genai, [PROMPT], ["--stop-id", str(stop)])["new_tokens"][0]
    check(stopped == greedy[:greedy.index(stop) + 1], "--stop-id ends at the first stop token")

    mlp = os.path.join(tmp, "mlp.onnx")
    run(exe, ["generate", "mlp", "-o", mlp])
    for args, words in [
            (["--prompt", "1,512", "--max-new-tokens", "2"], "token id 512 in row 0"),
            (["--prompt", "1,,2", "--max-new-tokens", "2"], "is not an integer token id"),
            (["--prompt", "1,2", "--max-new-tokens", "2", "--top-p", "0"], "top_p"),
            (["--prompt", "1,2,3", "--max-length", "2"], "leaves no room"),
            (["--max-new-tokens", "2"], "--prompt IDS is required")]:
        p = run(exe, ["complete", genai] + args)
        check(p.returncode == 2 and words in p.stderr,
              "complete %s: exit 2 naming '%s' (got %d: %s)" % (" ".join(args), words,
                                                              p.returncode, p.stderr.strip()))
    p = run(exe, ["complete", mlp, "--prompt", "1", "--max-new-tokens", "2"])
    check(p.returncode == 2 and "is none the generator feeds" in p.stderr,
          "a model that is no decoder: exit 2 naming its input (%s)" % p.stderr.strip())
    print("%d failed" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
