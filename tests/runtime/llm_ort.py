"""ONNX Runtime's greedy tokens (and logits) for the generated decoders, in one node process
(tests/runtime/generate_llm_ort.js) for every job: shared by tests/runtime/decoder_vs_ort.py,
tests/cli/complete_vs_ort.py and tests/python/test_genai.py.

    jobs = [decoder_job(model, "genai", [PROMPT], steps=16, out=path)]
    results = run(source_dir, jobs, tmp)      # [{"tokens": [B][steps + 1], "logits": ...}]

A result holds {"error": message} when ONNX Runtime failed on that job. start() / finish() run
the node process beside other work.
"""
import json
import os
import subprocess

# `onnx-prepack generate decoder --preset tiny`: the dims the KV feeds need.
TINY = {"layers": 2, "kv_heads": 2, "head_size": 32}


def decoder_job(model, form, prompts, steps, out, padding="right", dims=None):
    """A decoder job: the prompt step then `steps` greedy steps (padding "right" or "left")."""
    d = dict(TINY if dims is None else dims)
    return {"kind": "decoder", "model": str(model), "form": form, "layers": d["layers"],
            "kv_heads": d["kv_heads"], "head_size": d["head_size"], "prompts": prompts,
            "steps": steps, "padding": padding, "out": str(out)}


def start(source, jobs, tmp):
    """Starts the node process on `jobs` (written to tmp/jobs.json); returns it."""
    path = os.path.join(str(tmp), "jobs.json")
    with open(path, "w") as f:
        json.dump(jobs, f)
    js = os.path.join(str(source), "tests", "runtime", "generate_llm_ort.js")
    return subprocess.Popen(["node", js, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(proc, jobs):
    """Waits for `proc` (from start) and returns each job's result, in order."""
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError("node generate_llm_ort.js failed: " + err[-2000:])
    results = []
    for job in jobs:
        with open(job["out"]) as f:
            results.append(json.load(f))
    return results


def run(source, jobs, tmp):
    """start() then finish()."""
    return finish(start(source, jobs, tmp), jobs)
