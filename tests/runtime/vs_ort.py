"""What the generated-model agreement tests (tensor_ops_vs_ort.py, contrib_norm_vs_ort.py,
attention_vs_ort.py) share: each case written as a model and .npy feeds under its own folder,
ONNX Runtime running every case in one node process (ort_batch.js), and `onnx-prepack run` on
each case, two at a time.

A case has `name` and `feeds` (input name -> array); `save(case, path)` writes its model.
"""
import concurrent.futures
import json
import os
import subprocess

import numpy as np


def write_cases(work, cases, save, ort_model=None):
    """Writes WORK/<case>/model.onnx and its feeds; returns the ONNX Runtime manifest's path.
    `ort_model(case, folder)`, when given, returns the model ONNX Runtime runs instead (None:
    the same one)."""
    manifest = []
    for c in cases:
        d = os.path.join(work, c.name)
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, "model.onnx")
        save(c, model)
        ins = {}
        for n, arr in c.feeds.items():
            ins[n] = os.path.join(d, n + ".npy")
            np.save(ins[n], arr)
        theirs = ort_model(c, d) if ort_model else None
        manifest.append({"model": theirs or model, "out_dir": os.path.join(d, "ort"),
                         "inputs": ins})
    path = os.path.join(work, "manifest.json")
    with open(path, "w") as f:
        json.dump(manifest, f)
    return path


def start_ort(source_dir, manifest, stderr=None):
    """ONNX Runtime on every case of the manifest, in the background: outputs to
    <case>/ort/<name>.npy, a refusal to <case>/ort/error.txt."""
    return subprocess.Popen(["node", os.path.join(source_dir, "tests/runtime/ort_batch.js"),
                             manifest], stderr=stderr)


def run_ours(cli, work, cases, threads=1):
    """`onnx-prepack run` of each case (outputs to <case>/ours/), two at a time; returns one
    (exit code, stderr) per case."""
    def one(c):
        d = os.path.join(work, c.name)
        args = [cli, "run", os.path.join(d, "model.onnx"), "--threads", str(threads),
                "--output-dir", os.path.join(d, "ours")]
        for n in c.feeds:
            args += ["--input", f"{n}={os.path.join(d, n + '.npy')}"]
        p = subprocess.run(args, capture_output=True, text=True, timeout=60)
        return p.returncode, p.stderr.strip()

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        return list(ex.map(one, cases))
