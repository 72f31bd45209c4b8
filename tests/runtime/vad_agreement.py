#!/usr/bin/python3
"""Silero VAD (npm @ricky0123/vad-web: v5, v6 and the legacy model) through `onnx-prepack run`,
against ONNX Runtime (tests/runtime/ort_run.js), as a streaming user runs it: three chunks in a
row, each call fed the state the previous one returned, at 16 kHz and 8 kHz. The models branch
on the sample rate with `If` (whose untaken branch cannot even be planned for the other rate's
chunk size) and run an LSTM inside nested `If`s. Every output of every call must agree within
TOL of the largest |output| of that call.

usage: vad_agreement.py --cli BUILD/src/cli/onnx-prepack [--work DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DIST = os.path.join(HERE, "..", "..", "tools", "peers", "node_modules", "@ricky0123", "vad-web",
                    "dist")
TOL = 1e-4
# (model, sample rate, chunk samples, state inputs -> their shapes, state outputs in order)
CASES = [
    ("silero_vad_v5.onnx", 16000, 512, {"state": (2, 1, 128)}, ["stateN"]),
    ("silero_vad_v5.onnx", 8000, 256, {"state": (2, 1, 128)}, ["stateN"]),
    ("silero_vad_v6.onnx", 16000, 512, {"state": (2, 1, 128)}, ["stateN"]),
    ("silero_vad_v6.onnx", 8000, 256, {"state": (2, 1, 128)}, ["stateN"]),
    ("silero_vad_legacy.onnx", 16000, 1536, {"h": (2, 1, 64), "c": (2, 1, 64)}, ["hn", "cn"]),
    ("silero_vad_legacy.onnx", 8000, 768, {"h": (2, 1, 64), "c": (2, 1, 64)}, ["hn", "cn"]),
]


def sh(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-3000:]))
    return r.stdout


def run_both(cli, model, feeds, work):
    """Our outputs and ORT's, as {name: array}, for the .npy feeds {name: path}."""
    ours, ort = os.path.join(work, "ours"), os.path.join(work, "ort")
    for d in (ours, ort):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
    args = [cli, "run", model, "--output-dir", ours, "--threads", "1"]
    for k, v in feeds.items():
        args += ["--input", "%s=%s" % (k, v)]
    sh(args)
    sh(["node", os.path.join(HERE, "ort_run.js"), model, ort] +
       ["%s=%s" % (k, v) for k, v in feeds.items()])
    load = lambda d: {f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d)}
    return load(ours), load(ort)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", default="")
    a = ap.parse_args()
    if not os.path.isdir(DIST):
        sys.exit("no %s: run tools/setup.sh (npm peers)" % DIST)
    work = a.work or tempfile.mkdtemp(prefix="vad_agreement_")
    rng = np.random.default_rng(5)
    failed = 0
    for model, rate, samples, states, state_outs in CASES:
        path = os.path.join(DIST, model)
        sr = os.path.join(work, "sr.npy")
        np.save(sr, np.array(rate, np.int64))
        state_files = {}
        for k, shape in states.items():
            state_files[k] = os.path.join(work, k + ".npy")
            np.save(state_files[k], np.zeros(shape, np.float32))
        worst = 0.0
        for step in range(3):
            chunk = os.path.join(work, "input.npy")
            t = np.arange(samples) / rate
            voice = 0.3 * np.sin(2 * np.pi * 220 * t) * (step % 2)  # speech-like tone every other chunk
            np.save(chunk, (voice + 0.05 * rng.standard_normal(samples))[None].astype(np.float32))
            feeds = dict(state_files, input=chunk, sr=sr)
            ours, ort = run_both(a.cli, path, feeds, work)
            if set(ours) != set(ort):
                sys.exit("%s: outputs %s, ONNX Runtime %s" % (model, sorted(ours), sorted(ort)))
            for name, want in ort.items():
                got = ours[name]
                if got.shape != want.shape:
                    sys.exit("%s %s: shape %s, ONNX Runtime %s" % (model, name, got.shape,
                                                                   want.shape))
                scale = max(float(np.max(np.abs(want))), 1e-30)
                worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))) / scale)
            # The next call gets the state ONNX Runtime returned (the same for both).
            for k, out in zip(states, state_outs):
                np.save(state_files[k], ort[out])
        ok = worst <= TOL
        failed += not ok
        print("%s %d Hz x %d samples, 3 chained calls: |ours - ort| / max|ort| = %.2e (tol %.0e)"
              " -> %s" % (model, rate, samples, worst, TOL, "ok" if ok else "FAIL"))
    print("vad_agreement: %d passed, %d failed" % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
